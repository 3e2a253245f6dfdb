// A dispute's own page (/disputes/<game>/<dispute>): what is disputed, its events, whether its
// bundle is ready (a dispute on a running game waits, and says why), the verdict of the checks
// round by round - the verifier's, and those this browser makes itself on the bundle (the hash
// chain, the seeds against their commitments, the receipts it kept) - and the operator's resolution.
import { api, disputes, games } from "./api.js";
import { chainIntact, headInLog, seedsReach } from "./history_check.js";
import { t, lang, onLangChange } from "./i18n.js";
import { checkAgainstExport, receiptsOf } from "./receipts.js";
import { h, mount } from "./ui.js";

const CHECKS = ["deal", "commands", "scores", "receipts", "views", "log", "export"];

function when(ms) {
  return new Intl.DateTimeFormat(lang(), { dateStyle: "medium", timeStyle: "short" }).format(new Date(ms));
}

const outcomeKey = (outcome) => (outcome === "not checked" ? "skipped" : outcome);

function mark(outcome) {
  const cls = outcome === "passed" ? "ok" : outcome === "failed" ? "bad" : "wait";
  return h("span", { class: `mark ${cls}`, text: t(`dispute.outcome.${outcomeKey(outcome)}`) });
}

// A seat by its player's name (``names``: from the table's view, public), else by its number.
function actor(by, names) {
  if (by.role === "operator") return t("dispute.actor.operator", { name: by.name || by.operator });
  return names[by.seat] || t("dispute.actor.seat", { n: by.seat + 1 });
}

function who(by, names) {
  if (by.role === "operator") return t("dispute.byOperator", { name: by.name || by.operator });
  const name = names[by.seat];
  return name ? t("dispute.byName", { name }) : t("dispute.bySeat", { n: by.seat + 1 });
}

export async function render(main, path) {
  const [gameId, disputeId] = path.split("/");
  let record = null;
  let verdict; // undefined: checking; null: not available
  let local = null; // the browser's own checks on the bundle
  let failure = null;

  const seatNames = []; // this page's own: a late answer for another dispute's page never lands here
  async function load() {
    games.view(gameId).then((view) => {
      for (const player of view.players || []) seatNames[player.seat] = player.name;
      if (record) draw(); // else the record's drawing names them
    }).catch(() => null); // the seats stay numbered
    try {
      record = await disputes.get(gameId, disputeId);
    } catch (error) {
      failure = error.message;
      return draw();
    }
    draw();
    if (!record.bundle.ready) { verdict = null; return draw(); }
    try {
      const [report, bundle] = await Promise.all([disputes.verdict(gameId, disputeId), disputes.bundle(gameId, disputeId)]);
      verdict = report;
      draw();
      local = await browserChecks(bundle);
    } catch (error) {
      verdict = verdict || null;
      failure = error.message;
    }
    draw();
  }

  async function browserChecks(bundle) {
    const started = performance.now();
    if (!(globalThis.crypto && crypto.subtle)) return { crypto: false };
    const chain = await chainIntact(bundle.export);
    const seeds = await seedsReach(bundle.export);
    let log;
    try {
      log = await headInLog(bundle.export, api);
    } catch {
      log = "unchecked";
    }
    let receipts = null;
    try {
      const kept = await receiptsOf(gameId);
      const mine = kept.filter((r) => r.version <= bundle.export.head.version);
      if (mine.length) {
        const result = await checkAgainstExport(mine, { ...bundle.export, keys: bundle.keys });
        const bad = result.results.filter((r) => !["present", "unchecked"].includes(r.verdict)).length;
        receipts = { n: mine.length, bad, canVerify: result.canVerify };
      }
    } catch {
      receipts = null;
    }
    const ms = Math.round(performance.now() - started);
    document.documentElement.dataset.disputeCheckMs = String(ms); // read by the browser test's timing
    return { crypto: true, chain, seeds, receipts, log, ms };
  }

  function checksPanel() {
    if (!record.bundle.ready) {
      return h("section", { class: "panel", "data-testid": "dispute-sealed" },
        h("h2", { text: t("dispute.checks") }),
        h("p", { class: "sealed", text: t(`dispute.sealed.${record.bundle.reason}`, { n: record.round || 0 }) }),
        h("p", { class: "muted", text: t("dispute.sealedExplain") }));
    }
    if (verdict === undefined) {
      return h("section", { class: "panel" }, h("h2", { text: t("dispute.checks") }), h("p", { class: "muted", text: t("dispute.checking") }));
    }
    if (verdict === null) return null;
    const rows = CHECKS.map((name) => verdict.checks.find((c) => c.name === name)).filter(Boolean).map((c) =>
      h("div", { class: "check", "data-testid": `dispute-check-${c.name}`, "data-result": c.outcome },
        mark(c.outcome),
        h("div", {}, h("strong", { text: t(`dispute.check.${c.name}`) }), " ",
          h("span", { text: t(`dispute.check.${c.name}.${outcomeKey(c.outcome)}`) }),
          h("details", { class: "detail" }, h("summary", { text: t("dispute.detail") }), h("p", { class: "mono small", text: c.sentence })))));
    const what = record.round ? t("dispute.roundN", { n: record.round }) : t("dispute.wholeGame");
    const summary = verdict.ok ? t("dispute.verdictOk", { what }) : t("dispute.verdictBad", { what });
    return h("section", { class: "panel", "data-testid": "dispute-verdict", "data-ok": verdict.ok ? "true" : "false" },
      h("h2", { text: t("dispute.checks") }),
      h("p", { class: "summary" + (verdict.ok ? " ok" : " bad"), "data-testid": "dispute-summary", text: summary }),
      rows,
      localPanel(),
      h("p", { class: "actions" }, h("a", { class: "button small", href: disputes.bundleHref(gameId, disputeId),
        download: `dispute-${gameId}-${disputeId}.json`, "data-testid": "dispute-download", text: t("dispute.download") })),
      h("p", { class: "muted small", text: t("dispute.outsider") }));
  }

  function localPanel() {
    if (!local) return h("p", { class: "muted", text: t("dispute.browserChecking") });
    if (!local.crypto) return h("p", { class: "muted", text: t("audit.noCrypto") });
    const line = (key, ok, extra = {}) => h("div", { class: "check", ...extra }, h("span", { class: `mark ${ok === true ? "ok" : ok === false ? "bad" : "wait"}`,
      text: t(`dispute.outcome.${ok === true ? "passed" : ok === false ? "failed" : "skipped"}`) }), h("span", { text: key }));
    const r = local.receipts;
    return h("div", { class: "browser-checks", "data-testid": "dispute-browser" },
      h("h3", { text: t("dispute.browser") }),
      line(t("dispute.browserChain"), local.chain, { "data-testid": "dispute-browser-chain", "data-result": local.chain ? "passed" : "failed" }),
      line(t("dispute.browserSeeds"), local.seeds, { "data-testid": "dispute-browser-seeds", "data-result": local.seeds ? "passed" : "failed" }),
      line(t(`dispute.browserLog.${local.log}`), ["included", "prefix"].includes(local.log) ? true : ["fork", "unsigned", "bad_proof"].includes(local.log) ? false : null,
        { "data-testid": "dispute-browser-log", "data-result": local.log }),
      r ? line(t("dispute.browserReceipts", { n: r.n }), r.bad ? false : r.canVerify ? true : null, { "data-testid": "dispute-browser-receipts" })
        : h("p", { class: "muted", text: t("dispute.browserNoReceipts") }),
      h("p", { class: "muted small", "data-testid": "dispute-browser-ms", text: t("dispute.browserTime", { ms: local.ms }) }));
  }

  function eventLine(event) {
    const kind = event.type;
    const extra = kind === "evidence_added" ? t(`dispute.evidence.${event.kind}`)
      : kind === "dispute_resolved" ? t(`dispute.verdict.${event.verdict}`) : "";
    return h("li", { "data-testid": "dispute-event" },
      h("span", { class: "muted", text: `${when(event.at)} · ` }),
      h("span", { text: `${t(`dispute.event.${kind}`)} · ${actor(event.by, seatNames)}${extra ? " · " + extra : ""}` }));
  }

  function draw() {
    document.title = `${t("dispute.title")} · Tablestream`;
    if (failure && !record) return mount(main, h("p", { class: "panel", "data-testid": "dispute-error", text: failure }));
    if (!record) return mount(main, h("p", { class: "loading", text: t("common.loading") }));
    const what = record.round ? t("dispute.roundN", { n: record.round }) : t("dispute.wholeGame");
    mount(main, h("div", { class: "dispute", "data-testid": "dispute-page" },
      h("div", { class: "table-head" },
        h("h1", { text: `${t("dispute.title")} · ${what}` }),
        h("span", { class: `badge ${record.status === "open" ? "warn" : "finished"}`, "data-testid": "dispute-status",
          text: t(`dispute.status.${record.status}`) }),
        h("a", { class: "button small ghost", href: `/audit/${gameId}`, "data-nav": "", text: t("table.audit") })),
      h("section", { class: "panel" },
        h("blockquote", { class: "dispute-text", "data-testid": "dispute-text-shown", text: record.text }),
        h("p", { class: "muted", text: `${who(record.opened_by, seatNames)} · ${when(record.opened_at)}` }),
        record.status === "resolved"
          ? h("div", { class: "resolution", "data-testid": "dispute-resolution" },
            h("h2", { text: t("dispute.resolution") }),
            h("p", { class: "summary" + (record.verdict === "rejected" ? " ok" : ""), text: t(`dispute.verdict.${record.verdict}`) }),
            h("p", { text: record.reason }),
            h("p", { class: "muted", text: who(record.resolved_by, seatNames) }))
          : h("p", { class: "muted", "data-testid": "dispute-unresolved", text: t("dispute.unresolved") })),
      checksPanel(),
      failure ? h("p", { class: "panel", text: failure }) : null,
      h("section", { class: "panel" }, h("h2", { text: t("dispute.events") }),
        h("ol", { class: "dispute-events" }, record.events.map(eventLine)))));
  }

  draw();
  await load();
  return onLangChange(draw);
}
