// "Dispute a round": from the end screen, the replay and the audit page a seated player says which
// round (or the whole game) and what looks wrong; the receipts this browser kept for the table go
// along as evidence, and the dispute's own page opens (dispute.js).
import { disputes } from "./api.js";
import { navigate as go } from "./app.js";
import { t } from "./i18n.js";
import { receiptsOf } from "./receipts.js";
import { h, toast } from "./ui.js";

const MAX_TEXT = 1000;
const MAX_EVIDENCE = 60000; // characters of one piece of evidence (the server's limit)

/** The receipts kept for the table as one evidence document, the newest kept when all do not fit. */
export async function receiptsEvidence(gameId) {
  let kept;
  try {
    kept = await receiptsOf(gameId);
  } catch {
    return null; // no IndexedDB: nothing kept
  }
  if (!kept.length) return null;
  let receipts = kept;
  let text = JSON.stringify({ receipts });
  while (text.length > MAX_EVIDENCE && receipts.length > 1) {
    receipts = receipts.slice(Math.ceil(receipts.length / 4));
    text = JSON.stringify({ receipts });
  }
  return text;
}

/** The form, folded in a <details>: ``rounds`` played so far (1..rounds), ``round`` preselected. */
export function disputeForm(gameId, rounds, round = null) {
  const select = h("select", { "data-testid": "dispute-round", "aria-label": t("dispute.round") },
    h("option", { value: "", text: t("dispute.wholeGame") }),
    Array.from({ length: rounds }, (_, i) => h("option", { value: String(i + 1), selected: round === i + 1,
      text: t("dispute.roundN", { n: i + 1 }) })));
  const text = h("textarea", { rows: 3, maxlength: MAX_TEXT, required: true, "data-testid": "dispute-text",
    placeholder: t("dispute.textHint") });
  const submit = h("button", { type: "submit", class: "primary", "data-testid": "dispute-submit", text: t("dispute.submit") });
  const form = h("form", { class: "dispute-form" },
    h("label", { class: "field" }, h("span", { class: "label", text: t("dispute.round") }), select),
    h("label", { class: "field" }, h("span", { class: "label", text: t("dispute.text") }), text),
    h("p", { class: "muted small", text: t("dispute.explain") }),
    h("p", { class: "actions" }, submit));
  form.onsubmit = async (event) => {
    event.preventDefault();
    const words = text.value.trim();
    if (!words) return text.focus();
    submit.disabled = true;
    try {
      const record = await disputes.open(gameId, select.value ? Number(select.value) : null, words);
      const evidence = await receiptsEvidence(gameId);
      if (evidence) await disputes.evidence(gameId, record.dispute_id, "receipts", evidence);
      toast(t("dispute.opened"), "ok");
      go(`/disputes/${gameId}/${record.dispute_id}`);
    } catch (error) {
      toast(error.message);
      submit.disabled = false;
    }
  };
  return h("details", { class: "panel dispute-open", "data-testid": "dispute-open" },
    h("summary", { text: t("dispute.open") }), form);
}
