// The fairness audit: the server's checks per round, each revealed seed hashed down to the
// published commitment right here in the browser (WebCrypto SHA-256), and the receipts this browser
// kept checked against the export (their Ed25519 signatures, their hashes in the history).
import { api, disputes, games } from "./api.js";
import { disputeForm } from "./dispute_form.js";
import { chainIntact, headInLog, seedReachesCommitment, seedsReach } from "./history_check.js";
import { checkAgainstExport, download, receiptsOf } from "./receipts.js";
import { checkGameLeaves, checkLog, checkWitnesses, trustedWitnesses, trustWitnesses } from "./tlog.js";
import { lang, t, onLangChange } from "./i18n.js";
import { gamesKnown, gameTitle } from "./game_info.js";
import { h, mount } from "./ui.js";

const CHAIN_LENGTH = 64;

function mark(state) {
  const cls = state === true ? "ok" : state === false ? "bad" : "wait";
  const text = state === true ? t("audit.passed") : state === false ? t("audit.failed") : t("audit.pending");
  return h("span", { class: `mark ${cls}`, text });
}

function check(label, state, extra = {}) {
  return h("div", { class: "check", ...extra }, mark(state), h("span", { text: label }));
}

const PROBLEM_WORDS = {
  rewritten: "audit.receipts.rewritten",
  forged: "audit.receipts.forged",
  unknown_key: "audit.receipts.unknownKey",
  key_not_valid: "audit.receipts.keyNotValid",
  other_game: "audit.receipts.otherGame",
  malformed: "audit.receipts.malformed",
  unchecked_missing: "audit.receipts.missingUnchecked",
};

const SIGNATURE_WORDS = {
  unknown_key: "tlog.badSignature.unknownKey",
  expired: "tlog.badSignature.expired",
  forged: "tlog.badSignature.forged",
};

/** The witnesses the reader trusts, kept in this browser: their vkeys, one a line, and how many must
 * have cosigned the log's checkpoint (``onTrust`` keeps them and checks again). */
function witnessForm(onTrust) {
  const { vkeys, quorum } = trustedWitnesses();
  const keys = h("textarea", { rows: 3, class: "mono", "data-testid": "witness-keys", "aria-label": t("tlog.witnesses.keys"),
    placeholder: "witness.example+01234567+BAAA…" });
  keys.value = vkeys.join("\n");
  const needed = h("input", { type: "number", min: 1, value: String(quorum), "data-testid": "witness-quorum",
    "aria-label": t("tlog.witnesses.quorum") });
  const save = h("button", { type: "submit", class: "button small", "data-testid": "witness-save", text: t("tlog.witnesses.save") });
  const form = h("form", { class: "witness-form" },
    h("p", { class: "muted", text: t("tlog.witnesses.explain") }),
    h("label", { class: "field" }, h("span", { class: "label", text: t("tlog.witnesses.keys") }), keys),
    h("label", { class: "field" }, h("span", { class: "label", text: t("tlog.witnesses.quorum") }), needed),
    save);
  form.onsubmit = (event) => {
    event.preventDefault();
    const listed = keys.value.split("\n").map((line) => line.trim()).filter(Boolean);
    onTrust(listed, Math.max(1, Math.min(listed.length || 1, Number(needed.value) || 1)));
  };
  return h("details", { "data-testid": "witness-trust" },
    h("summary", { text: t("tlog.witnesses.title") }), form);
}

/** The line saying how many of the witnesses the reader trusts cosigned the checkpoint. */
function witnessLine(witnesses) {
  if (!witnesses) return null;
  if (witnesses.unreadable.length) {
    return check(t("tlog.witnesses.unreadable", { key: witnesses.unreadable[0] }), false,
      { "data-testid": "log-witnesses", "data-result": "failed" });
  }
  const enough = witnesses.k !== null && witnesses.k >= witnesses.quorum;
  const line = check(t("tlog.witnesses.cosigned", { k: witnesses.k ?? 0, n: witnesses.n, quorum: witnesses.quorum }),
    enough ? true : null, { "data-testid": "log-witnesses", "data-result": enough ? "passed" : "pending" });
  if (!enough) line.querySelector(".mark").textContent = t("tlog.witnesses.waiting");
  return line;
}

/** The public log panel: the checkpoint against the one this browser saw before; the game's heads in
 * it; the witnesses the reader trusts. */
function logPanel(state, onTrust) {
  if (state === undefined) {
    return h("section", { class: "panel", "data-testid": "log-panel" }, h("h2", { text: t("tlog.title") }), check(t("audit.checking"), null));
  }
  const { log, leaves } = state;
  const fork = log.kind === "fork" || log.kind === "bad_signature";
  const words = {
    first: t("tlog.first", { size: log.size }),
    consistent: t("tlog.consistent", { size: log.size, old: log.old }),
    fork: t("tlog.fork", { size: log.size, old: log.old }),
    bad_signature: t(SIGNATURE_WORDS[log.signature] || "tlog.badSignature.forged"),
    unavailable: t("tlog.unavailable"),
  }[log.kind];
  const logOk = fork ? false : log.kind === "unavailable" ? null : true;
  return h("section", { class: "panel" + (fork ? " fork" : ""), "data-testid": "log-panel", "data-result": log.kind },
    h("h2", { text: t("tlog.title") }),
    h("p", { class: fork ? "summary bad" : "muted", role: fork ? "alert" : null, "data-testid": "log-words", text: words }),
    check(t("tlog.consistency"), logOk),
    leaves.n ? check(t("tlog.included", { ok: leaves.ok, n: leaves.n }), leaves.ok === leaves.n ? true : null, { "data-testid": "log-leaves" }) : null,
    witnessLine(state.witnesses),
    witnessForm(onTrust));
}

/** The receipts panel: what this browser kept for the table, each checked against the export. */
function receiptsPanel(id, state) {
  const rows = [];
  let summary;
  let result = "pending";
  if (state === undefined) {
    summary = check(t("audit.checking"), null, { "data-testid": "receipts-check", "data-result": result });
  } else if (state.kind === "unfinished") {
    rows.push(h("p", { class: "muted", text: t("audit.receipts.notFinished") }));
  } else if (state.kind === "none") {
    rows.push(h("p", { class: "muted", "data-testid": "receipts-none", text: t("audit.receipts.none") }));
  } else if (state.kind === "error") {
    rows.push(h("p", { class: "muted", text: state.message }));
  } else {
    const good = state.results.filter((r) => r.verdict === "present" || r.verdict === "unchecked").length;
    const bad = state.results.filter((r) => PROBLEM_WORDS[r.verdict]);
    const passed = bad.length === 0 && state.canVerify;
    result = bad.length ? "failed" : state.canVerify ? "passed" : "unchecked";
    summary = check(t("audit.receipts.summary", { ok: good, n: state.results.length }), bad.length ? false : passed ? true : null,
      { "data-testid": "receipts-check", "data-result": result });
    if (!state.canVerify) summary.querySelector(".mark").textContent = t("audit.receipts.noEd25519");
    if (!state.canVerify) rows.push(h("p", { class: "muted", "data-testid": "receipts-no-crypto", text: t("audit.receipts.noEd25519Explain") }));
    if (bad.length) {
      rows.push(h("ul", { class: "receipt-problems" }, bad.map(({ receipt, verdict }) =>
        h("li", { "data-testid": "receipt-problem", "data-verdict": verdict, "data-version": String(receipt.version),
          text: t(PROBLEM_WORDS[verdict], { version: receipt.version, key: receipt.key_id || "?" }) }))));
    }
  }
  const none = state && state.kind === "none";
  return h("section", { class: "panel receipts", "data-testid": "receipts-panel" },
    h("h2", { text: t("audit.receipts.title") }),
    h("p", { class: "muted", text: t("audit.receipts.explain") }),
    summary || null,
    rows,
    h("p", { class: "actions" }, h("button", { class: "button small", type: "button", "data-testid": "receipts-download",
      disabled: none || state === undefined ? "" : null, text: t("audit.receipts.download"),
      onclick: () => download(id) })));
}

/** The game's disputes (for its seated players and operators; others see none) and the form. */
function disputesPanel(id, listed, form) {
  if (!listed && !form) return null;
  return h("section", { class: "panel", "data-testid": "audit-disputes" },
    h("h2", { text: t("dispute.list") }),
    listed && listed.length
      ? h("ul", {}, listed.map((d) => h("li", {}, h("a", { href: `/disputes/${id}/${d.dispute_id}`, "data-nav": "",
        "data-testid": "audit-dispute-link",
        text: `${d.round ? t("dispute.roundN", { n: d.round }) : t("dispute.wholeGame")} · ${t(`dispute.status.${d.status}`)}` }),
        h("span", { class: "muted", text: ` · ${d.text.length > 80 ? d.text.slice(0, 80) + "…" : d.text}` }))))
      : h("p", { class: "muted", text: t("dispute.none") }),
    form);
}

const LOG_OK = { included: true, prefix: true, fork: false, unsigned: false, bad_proof: false };

/** "Check a file": an export or a dispute bundle someone handed you, checked here against the
 * public log (and its chain, seeds and your kept receipts). Made once; it redraws itself. */
function fileCheck(id) {
  const result = h("div", { "data-testid": "file-check-result", "aria-live": "polite" });
  const line = (key, ok, testid, value) => h("div", { class: "check", "data-testid": testid, "data-result": value },
    h("span", { class: `mark ${ok === true ? "ok" : ok === false ? "bad" : "wait"}`,
      text: t(`dispute.outcome.${ok === true ? "passed" : ok === false ? "failed" : "skipped"}`) }), h("span", { text: key }));
  const input = h("input", { type: "file", accept: "application/json,.json", "data-testid": "file-check-input",
    "aria-label": t("audit.file.choose") });
  input.onchange = async () => {
    const file = input.files && input.files[0];
    if (!file) return;
    mount(result, h("p", { class: "muted", text: t("dispute.browserChecking") }));
    let doc;
    try {
      doc = JSON.parse(await file.text());
    } catch {
      return mount(result, h("p", { class: "error", "data-testid": "file-check-unreadable", text: t("audit.file.unreadable") }));
    }
    const exportDoc = doc && doc.format === "tablestream-dispute-bundle/1" ? doc.export : doc;
    if (!exportDoc || !Array.isArray(exportDoc.entries) || exportDoc.game_id !== id) {
      return mount(result, h("p", { class: "error", "data-testid": "file-check-unreadable", text: t("audit.file.notThisGame") }));
    }
    const chain = await chainIntact(exportDoc);
    const seeds = await seedsReach(exportDoc);
    let log;
    const found = {};
    try {
      log = await headInLog(exportDoc, api, found);
    } catch {
      log = "unchecked";
    }
    // a bundle's receipts, against the published keys (not the bundle's own) and its history
    const receipts = exportDoc !== doc && Array.isArray(doc.receipts) && doc.receipts.length && found.keys
      ? await checkAgainstExport(doc.receipts, { ...exportDoc, keys: { keys: found.keys } })
      : null;
    const present = receipts ? receipts.results.filter((r) => r.verdict === "present").length : 0;
    const rewritten = receipts ? receipts.results.some((r) => r.verdict === "rewritten") : false;
    const bad = !chain || !seeds || LOG_OK[log] === false || rewritten;
    // a head the log has not published yet: not a failure, not verified either; when to ask again
    const waiting = !bad && log === "pending";
    const due = found.nextCheckpoint
      ? new Intl.DateTimeFormat(lang(), { dateStyle: "medium", timeStyle: "medium" }).format(new Date(found.nextCheckpoint * 1000))
      : null;
    const summary = waiting ? (due ? t("audit.file.pending", { time: due }) : t("dispute.browserLog.pending"))
      : bad ? t("audit.file.bad") : log === "prefix" ? t("audit.file.prefix", { version: found.logged }) : t("audit.file.ok");
    mount(result,
      h("p", { class: "summary" + (bad ? " bad" : waiting ? "" : " ok"), "data-testid": "file-check-summary",
        "data-ok": bad ? "false" : waiting ? "pending" : "true", text: summary }),
      line(t("dispute.browserChain"), chain, "file-check-chain", chain ? "passed" : "failed"),
      line(t("dispute.browserSeeds"), seeds, "file-check-seeds", seeds ? "passed" : "failed"),
      line(t(`dispute.browserLog.${log}`), LOG_OK[log] ?? null, "file-check-log", log),
      receipts ? line(rewritten ? t("audit.file.receiptsRewritten") : t("audit.file.receipts", { ok: present, n: receipts.results.length }),
        rewritten ? false : present === receipts.results.length ? true : null, "file-check-receipts",
        rewritten ? "failed" : present === receipts.results.length ? "passed" : "unproven") : null);
  };
  return h("section", { class: "panel", "data-testid": "file-check" },
    h("h2", { text: t("audit.file.title") }),
    h("p", { class: "muted", text: t("audit.file.explain") }),
    h("label", { class: "field" }, h("span", { class: "label", text: t("audit.file.choose") }), input),
    result);
}

export async function render(main, id) {
  await gamesKnown(); // the games' titles (game_info.js)
  let doc;
  const handed = fileCheck(id);
  let listed = null; // the game's disputes, when this viewer may see them
  let form = null;
  let receiptState;
  let logState;
  const browserResults = new Map();

  async function load() {
    try {
      doc = await games.audit(id);
    } catch (error) {
      mount(main, h("p", { class: "panel", text: error.message }));
      return;
    }
    try {
      listed = (await disputes.list(id)).disputes;
      if (doc.viewer !== "spectator") form = disputeForm(id, doc.rounds.filter((r) => r.round > 0).length);
    } catch {
      listed = null; // a spectator: disputes are their players' and the operators'
    }
    draw();
    await runBrowserChecks();
    await runReceiptChecks();
    await runLogCheck();
  }

  async function runLogCheck() {
    const log = await checkLog();
    let leaves = { ok: 0, n: 0 };
    try { leaves = await checkGameLeaves(await games.log(id)); } catch { /* the panel says what it could check */ }
    const witnesses = await checkWitnesses(api);
    logState = { log, leaves, witnesses };
    draw();
  }

  async function trust(vkeys, quorum) {
    trustWitnesses(vkeys, quorum);
    await runLogCheck();
  }

  async function runReceiptChecks() {
    try {
      const kept = await receiptsOf(id);
      if (!["finished", "closed"].includes(doc.status)) receiptState = { kind: "unfinished" };
      else if (!kept.length) receiptState = { kind: "none" };
      else receiptState = { kind: "checked", ...(await checkAgainstExport(kept, await games.export(id))) };
    } catch (error) {
      receiptState = { kind: "error", message: error.message };
    }
    draw();
  }

  async function runBrowserChecks() {
    const usable = globalThis.crypto && crypto.subtle;
    for (const round of doc.rounds) {
      if (!round.seed) continue;
      if (!usable) { browserResults.set(round.round, null); continue; }
      const chain = Math.floor((round.round - 1) / CHAIN_LENGTH);
      const index = ((round.round - 1) % CHAIN_LENGTH) + 1;
      const commitment = doc.commitments[chain];
      browserResults.set(round.round, commitment ? await seedReachesCommitment(round.seed, index, commitment) : false);
    }
    draw();
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  }

  function draw() {
    const results = [];
    const sections = doc.rounds.map((round) => {
      const chance = round.chance_outcomes.length ? round.chance_outcomes.every((c) => c.matched) : null;
      const browser = browserResults.has(round.round) ? browserResults.get(round.round) : undefined;
      const checks = [];
      if (round.seed) {
        checks.push(check(t("audit.serverCheck"), round.seed_check ? round.seed_check.ok : null));
        const el = check(t("audit.browserCheck"), browser === undefined ? null : browser,
          { "data-testid": `browser-check-${round.round}`, "data-result": browser === true ? "passed" : browser === false ? "failed" : "pending" });
        if (browser === undefined) el.querySelector(".mark").textContent = t("audit.checking");
        if (browser === null) el.querySelector(".mark").textContent = t("audit.noCrypto");
        checks.push(el);
        results.push(round.seed_check && round.seed_check.ok, browser);
      }
      if (round.rules_match !== null) { checks.push(check(t("audit.rules"), round.rules_match)); results.push(round.rules_match); }
      if (chance !== null) { checks.push(check(`${t("audit.chance")} (${round.chance_outcomes.length})`, chance)); results.push(chance); }
      if (!round.finished) checks.push(check(t("audit.pending"), null));
      const title = round.round === 0 ? t("audit.setup") : t("audit.round", { n: round.round });
      return h("section", { class: "panel", id: `round-${round.round}`, "data-testid": "audit-round" },
        h("h2", { text: title }),
        round.seed ? h("p", {}, h("span", { class: "muted", text: t("audit.seed") + ": " }), h("span", { class: "mono", text: round.seed })) : null,
        checks,
        h("details", { class: "events" }, h("summary", { text: t("audit.events", { n: round.events.length }) }),
          h("pre", { text: round.events.map((e) => `v${e.version} ${JSON.stringify(e.event)}`).join("\n") })));
    });
    results.unshift(doc.hash_chain.ok);
    if (receiptState && receiptState.kind === "checked") {
      const bad = receiptState.results.some((r) => PROBLEM_WORDS[r.verdict]);
      results.push(bad ? false : receiptState.canVerify ? true : null);
    }
    if (logState && logState.log.kind !== "unavailable") results.push(!["fork", "bad_signature"].includes(logState.log.kind));
    const ok = results.filter((r) => r === true).length;
    mount(main, h("div", { class: "audit" },
      h("div", { class: "table-head" }, h("h1", { text: `${t("audit.title")} · ${gameTitle(doc.game)}` }),
        h("span", { class: `badge ${doc.status}`, text: t("status." + doc.status) }),
        h("a", { class: "button small ghost", href: `/tables/${id}`, "data-nav": "", text: "↩" })),
      h("section", { class: "panel" },
        h("p", { class: "summary" + (ok === results.length ? " ok" : ""), "data-testid": "audit-summary",
          text: t("audit.summary", { ok, n: results.length }) }),
        h("p", { class: "muted", text: t("audit.explain") }),
        check(t("audit.hashChain"), doc.hash_chain.ok, { "data-testid": "hash-chain" }),
        doc.commitments.map((c) => h("p", {}, h("span", { class: "muted", text: t("audit.commitment") + ": " }), h("span", { class: "mono", text: c })))),
      receiptsPanel(id, receiptState),
      logPanel(logState, trust),
      disputesPanel(id, listed, form),
      handed,
      h("div", { class: "audit-rounds" }, sections)));
  }

  mount(main, h("p", { text: t("common.loading") }));
  await load();
  const off = onLangChange(() => {
    if (form) form.relabel(); // what was chosen and typed stays
    if (doc) draw();
  });
  return off;
}
