// "Dispute a round": from the end screen, the replay and the audit page a seated player says which
// round (or the whole game) and what looks wrong; the receipts this browser kept for the table go
// along as evidence, and the dispute's own page opens (dispute.js).
import { disputes } from "./api.js";
import { navigate as go } from "./router.js";
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

/** The form, folded in a <details>: ``rounds`` played so far (1..rounds), ``round`` preselected. Its
 * ``relabel()`` puts its words in the page's language again, keeping what was chosen and typed. */
export function disputeForm(gameId, rounds, round = null) {
  const select = h("select", { "data-testid": "dispute-round" },
    h("option", { value: "" }),
    Array.from({ length: rounds }, (_, i) => h("option", { value: String(i + 1), selected: round === i + 1 })));
  const text = h("textarea", { rows: 3, maxlength: MAX_TEXT, required: true, "data-testid": "dispute-text" });
  const submit = h("button", { type: "submit", class: "primary", "data-testid": "dispute-submit" });
  const labels = { round: h("span", { class: "label" }), text: h("span", { class: "label" }) };
  const explain = h("p", { class: "muted small" });
  const summary = h("summary");
  const form = h("form", { class: "dispute-form" },
    h("label", { class: "field" }, labels.round, select),
    h("label", { class: "field" }, labels.text, text),
    explain,
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
  const fold = h("details", { class: "panel dispute-open", "data-testid": "dispute-open" }, summary, form);
  fold.relabel = () => {
    summary.textContent = t("dispute.open");
    labels.round.textContent = t("dispute.round");
    labels.text.textContent = t("dispute.text");
    explain.textContent = t("dispute.explain");
    submit.textContent = t("dispute.submit");
    text.placeholder = t("dispute.textHint");
    select.setAttribute("aria-label", t("dispute.round"));
    for (const option of select.options) {
      option.textContent = option.value ? t("dispute.roundN", { n: Number(option.value) }) : t("dispute.wholeGame");
    }
  };
  fold.relabel();
  return fold;
}
