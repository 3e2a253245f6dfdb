// The operator's console (/operator): live figures, find a table or a player, close a table, ban or
// unban an account, read and handle chat reports, and the audit log of every operator action.
// The server refuses the page and every /operator/... route to anyone but an operator (403); the
// page then says that the console needs operator rights and how to log in.
// Every list is read a page at a time: "Show more" asks for the page after the last one shown
// (the answer's "next" cursor, docs/api.md "Operator's console").
import { api, ApiError, disputes as disputeApi } from "./api.js";
import { t, lang, onLangChange } from "./i18n.js";
import { gamesKnown, gameTitle } from "./game_info.js";
import { h, mount, toast } from "./ui.js";

const FIGURES = ["lag_ms", "tables_waiting", "tables_running", "games_lagging",
  "queue_projections", "queue_lifecycle", "queue_bots", "queue_review", "chat_reports"];
const post = (path, reason) => api(path, { method: "POST", body: { reason } });
const enc = encodeURIComponent;
const PAGE = 10; // items a page of a list brings (the audit log's rows: twice as many)

function when(ms) {
  return new Intl.DateTimeFormat(lang(), { dateStyle: "short", timeStyle: "medium" }).format(new Date(ms));
}

function streamTime(id) {
  return Number(String(id).split("-")[0]);
}

// One list of the console, read a page at a time: the items shown so far and the next page's
// cursor (null: the last page is shown). `draw` draws the list again after each page.
function pagedList(path, key, draw) {
  const list = { items: null, next: null };
  list.load = async () => {
    const page = await api(path);
    list.items = page[key];
    list.next = page.next;
    draw();
  };
  list.more = async () => {
    const page = await api(`${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(list.next)}`);
    list.items = list.items.concat(page[key]);
    list.next = page.next;
    draw();
  };
  return list;
}

// "Show more" under a list: the next page is added below, and the focus moves to the first item
// added (a keyboard user goes on reading where the list grew).
function moreButton(list, container, testid) {
  if (!list.next) return null;
  return h("button", { type: "button", class: "small op-more", "data-testid": `${testid}-more`, text: t("op.showMore"),
    onclick: async (event) => {
      event.target.disabled = true;
      const shown = list.items.length;
      try {
        await list.more();
      } catch (error) {
        toast(error.message);
        event.target.disabled = false;
        return;
      }
      const added = container.querySelectorAll("[data-paged]")[shown];
      if (added) added.focus();
    } });
}

// A small form asking for a reason before an action: label, text field, confirm and cancel.
function reasonForm(label, testid, act, cancel) {
  const input = h("input", { type: "text", required: true, maxlength: 200, "data-testid": `${testid}-reason` });
  const field = h("label", { class: "field" }, h("span", { class: "label", text: label }), input);
  const form = h("form", { class: "op-reason", "data-testid": `${testid}-form` }, field,
    h("div", { class: "op-actions" },
      h("button", { type: "submit", class: "small primary", "data-testid": `${testid}-confirm`, text: t("op.submit") }),
      cancel ? h("button", { type: "button", class: "small ghost", text: t("op.cancel"), onclick: cancel }) : null));
  form.onsubmit = async (event) => {
    event.preventDefault();
    const reason = input.value.trim();
    if (!reason) return input.focus();
    form.querySelector("button[type=submit]").disabled = true;
    try {
      await act(reason);
    } catch (error) {
      toast(error.message);
      form.querySelector("button[type=submit]").disabled = false;
    }
  };
  setTimeout(() => input.focus(), 0);
  return form;
}

export async function render(main) {
  await gamesKnown(); // the games' titles (game_info.js)
  let me = null;
  let figures = null;
  let tables = null; // a pagedList of the tables found; null: no search yet
  let players = null; // a pagedList of the players found
  let player = null; // the player's card opened
  const live = {
    figures: h("div", { "data-testid": "op-figures" }),
    found: h("div", { "data-testid": "op-found", "aria-live": "polite" }),
    reports: h("div", { "data-testid": "op-reports" }),
    audit: h("div", { "data-testid": "op-audit" }),
    disputes: h("div", { "data-testid": "op-disputes" }),
  };
  const reports = pagedList(`/operator/reports?limit=${PAGE}`, "reports", () => drawReports());
  const audit = pagedList(`/operator/audit?limit=${2 * PAGE}`, "entries", () => drawAudit());
  const openDisputes = pagedList(`/operator/disputes?limit=${PAGE}`, "disputes", () => drawDisputes());
  let asking = null; // which action's reason form is open: "close:<id>", "ban", "report:<id>"
  let query = "";

  async function loadFigures() {
    figures = await api("/operator/figures");
    drawFigures();
  }
  const loadReports = () => reports.load();
  const loadDisputes = () => openDisputes.load();
  const loadAudit = () => audit.load();

  function draw() {
    document.title = `${t("op.title")} · Tablestream`;
    if (!me) return mount(main, h("p", { class: "loading", text: t("common.loading") }));
    const input = h("input", { id: "op-query", type: "search", maxlength: 100, value: query, "data-testid": "op-query",
      oninput: (e) => { query = e.target.value; } });
    const find = (kind) => async (event) => {
      if (event) event.preventDefault();
      query = input.value.trim();
      if (!query) return input.focus();
      const found = kind === "tables"
        ? pagedList(`/operator/tables?q=${enc(query)}&limit=${PAGE}`, "tables", () => drawFound())
        : pagedList(`/operator/players?q=${enc(query)}&limit=${PAGE}`, "players", () => drawFound());
      asking = null;
      try {
        await found.load();
      } catch (error) {
        toast(error.message);
        return;
      }
      [tables, players, player] = kind === "tables" ? [found, null, null] : [null, found, null];
      drawFound();
    };
    const form = h("form", { class: "op-find", role: "search", onsubmit: find("tables") },
      h("div", { class: "field" }, h("label", { for: "op-query", text: t("op.query") }), input),
      h("div", { class: "op-actions" },
        h("button", { type: "submit", class: "primary", "data-testid": "op-find-tables", text: t("op.findTables") }),
        h("button", { type: "button", "data-testid": "op-find-player", text: t("op.findPlayer"), onclick: find("player") })));
    mount(main, h("div", { class: "operator-page", "data-testid": "operator" },
      h("div", { class: "page-head" },
        h("h1", { text: t("op.title") }),
        h("p", { class: "muted", text: t("op.lead") }),
        h("p", { class: "muted", "data-testid": "op-me", text: t("op.actingAs", { name: me.name }) })),
      h("div", { class: "op-grid" },
        h("section", { class: "panel", "aria-labelledby": "op-figures-title" },
          h("div", { class: "op-head" }, h("h2", { id: "op-figures-title", text: t("op.figures") }),
            h("button", { type: "button", class: "small", "data-testid": "op-refresh", text: t("op.refresh"),
              onclick: () => Promise.all([loadFigures(), loadReports(), loadDisputes(), loadAudit()]).catch((e) => toast(e.message)) })),
          live.figures),
        h("section", { class: "panel", "aria-labelledby": "op-find-title" },
          h("h2", { id: "op-find-title", text: t("op.find") }), form, live.found),
        h("section", { class: "panel", "aria-labelledby": "op-reports-title" },
          h("h2", { id: "op-reports-title", text: t("op.reports") }), live.reports),
        h("section", { class: "panel", "aria-labelledby": "op-disputes-title" },
          h("h2", { id: "op-disputes-title", text: t("op.disputes") }), live.disputes),
        h("section", { class: "panel op-wide", "aria-labelledby": "op-audit-title" },
          h("h2", { id: "op-audit-title", text: t("op.audit") }), live.audit))));
    drawFigures();
    drawFound();
    drawReports();
    drawDisputes();
    drawAudit();
  }

  // Open disputes, oldest first: each links to its page (the checks' verdict), and resolves here
  // with a verdict and a reason (recorded in the dispute's stream and in the audit log).
  function drawDisputes() {
    if (!openDisputes.items) return mount(live.disputes, h("p", { class: "muted", text: t("common.loading") }));
    if (!openDisputes.items.length) return mount(live.disputes, h("p", { class: "empty", text: t("op.noDisputes") }));
    mount(live.disputes, h("ul", { class: "op-list" }, openDisputes.items.map((d) => {
      const what = d.round ? t("dispute.roundN", { n: d.round }) : t("dispute.wholeGame");
      return h("li", { class: "op-item", "data-testid": "op-dispute", "data-dispute": d.dispute_id, "data-paged": "", tabindex: -1 },
        h("div", { class: "op-line" },
          h("a", { href: `/disputes/${d.game_id}/${d.dispute_id}`, "data-nav": "", text: `${d.game_id} · ${what}` }),
          h("span", { class: "muted", text: when(d.opened_at) })),
        h("p", { text: d.text }),
        ["upheld", "rejected"].map((verdict) => {
          const key = `dispute:${d.dispute_id}:${verdict}`;
          if (asking === key) {
            return reasonForm(t(`op.disputeReason.${verdict}`), `dispute-${verdict}`, async (reason) => {
              await disputeApi.resolve(d.game_id, d.dispute_id, verdict, reason);
              toast(t("op.disputeResolved"), "ok");
              asking = null;
              await Promise.all([loadDisputes(), loadAudit()]);
            }, () => { asking = null; drawDisputes(); });
          }
          return asking && asking.startsWith(`dispute:${d.dispute_id}:`) ? null : h("button", { type: "button", class: "small",
            "data-testid": `op-dispute-${verdict}`, text: t(`op.dispute.${verdict}`),
            onclick: () => { asking = key; drawDisputes(); } });
        }));
    })), moreButton(openDisputes, live.disputes, "op-disputes"));
  }

  function drawFigures() {
    if (!figures) return mount(live.figures, h("p", { class: "muted", text: t("common.loading") }));
    const health = t(`op.health.${figures.health}`);
    mount(live.figures, h("dl", { class: "op-figures" },
      h("div", { class: figures.ready ? "ok" : "bad" }, h("dt", { text: t("op.fig.health") }),
        h("dd", { "data-testid": "op-fig-health", text: health })),
      FIGURES.map((name) => h("div", {}, h("dt", { text: t(`op.fig.${name}`) }),
        h("dd", { "data-testid": `op-fig-${name}`, text: figures[name] ?? "—" })))));
  }

  function drawFound() {
    if (player) return mount(live.found, playerCard(player));
    if (players) return drawPlayers();
    if (tables === null) return mount(live.found);
    if (!tables.items.length) return mount(live.found, h("p", { class: "empty", text: t("op.noTables") }));
    mount(live.found, h("h3", { text: t("op.tables") }),
      h("ul", { class: "op-list", "data-testid": "op-tables" }, tables.items.map(tableItem)),
      moreButton(tables, live.found, "op-tables"));
    if (asking && asking.startsWith("close:")) {
      const input = live.found.querySelector("[data-testid=close-reason]");
      if (input) input.focus();
    }
  }

  // The players whose name begins like the query or looks like it; each opens its card.
  function drawPlayers() {
    if (!players.items.length) return mount(live.found, h("p", { class: "empty", text: t("op.noPlayers") }));
    mount(live.found, h("h3", { text: t("op.players") }),
      h("ul", { class: "op-list", "data-testid": "op-players" }, players.items.map((p) =>
        h("li", { class: "op-item", "data-testid": "op-player-found", "data-account": p.account_id, "data-paged": "", tabindex: -1 },
          h("div", { class: "op-line" },
            h("button", { type: "button", class: "link", "data-testid": "op-open-player", text: p.name,
              onclick: () => openCard(p.account_id) }),
            h("span", { class: p.match === "lookalike" ? "badge warn" : "badge", "data-testid": "op-match", text: t(`op.match.${p.match}`) }),
            p.banned ? h("span", { class: "badge warn", text: t("op.banned") }) : null)))),
      moreButton(players, live.found, "op-players"));
  }

  async function openCard(accountId) {
    try {
      player = await api(`/operator/players/${enc(accountId)}`);
    } catch (error) {
      toast(error.message);
      return;
    }
    asking = null;
    drawFound();
    const head = live.found.querySelector("[data-testid=op-player] h3");
    if (head) head.focus();
  }

  function tableItem(table) {
    const open = table.status === "waiting" || table.status === "playing";
    const names = table.players.map((p) => p.account ? `${p.name} (${p.account.name})` : p.name).join(", ");
    const key = `close:${table.game_id}`;
    return h("li", { class: "op-item", "data-testid": "op-table", "data-game-id": table.game_id, "data-status": table.status },
      h("div", { class: "op-line" },
        h("a", { href: `/tables/${table.game_id}`, "data-nav": "", text: `${gameTitle(table.game)} · ${table.game_id}` }),
        h("span", { class: `badge ${table.status}`, "data-testid": "op-table-status", text: t(`status.${table.status}`) })),
      h("p", { class: "muted", text: names || "—" }),
      open && asking !== key ? h("button", { type: "button", class: "small", "data-testid": "op-close",
        text: t("op.close"), onclick: () => { asking = key; drawFound(); } }) : null,
      asking === key ? reasonForm(t("op.closeReason", { id: table.game_id }), "close", async (reason) => {
        await post(`/operator/tables/${enc(table.game_id)}/close`, reason);
        toast(t("op.closedNow", { id: table.game_id }), "ok");
        asking = null;
        Object.assign(table, await api(`/operator/tables/${enc(table.game_id)}`));
        drawFound();
        await Promise.all([loadFigures(), loadAudit()]);
      }, () => { asking = null; drawFound(); }) : null);
  }

  function playerCard(found) {
    const action = found.banned ? "unban" : "ban";
    return h("div", { class: "op-item", "data-testid": "op-player", "data-account": found.account_id },
      players ? h("button", { type: "button", class: "small ghost", "data-testid": "op-back", text: t("op.backToList"),
        onclick: () => { player = null; asking = null; drawFound(); } }) : null,
      h("h3", { text: t("op.player"), tabindex: -1 }),
      h("div", { class: "op-line" },
        h("a", { href: `/players/${enc(found.name)}`, "data-nav": "", text: found.name }),
        found.operator ? h("span", { class: "badge host", text: t("op.isOperator") }) : null,
        h("span", { class: found.banned ? "badge warn" : "badge playing", "data-testid": "op-ban-state",
          text: found.banned ? t("op.banned") : t("op.notBanned") })),
      h("p", { class: "muted", text: `${found.account_id} · ${t("op.gamesPlayed", { n: found.games_played })}` }),
      found.banned ? h("p", { text: t("op.bannedFor", { reason: found.ban_reason }) }) : null,
      asking !== "ban" ? h("button", { type: "button", class: "small", "data-testid": `op-${action}`,
        text: t(`op.${action}`), onclick: () => { asking = "ban"; drawFound(); } }) : null,
      asking === "ban" ? reasonForm(t(`op.${action}Reason`, { name: found.name }), action, async (reason) => {
        Object.assign(found, await post(`/operator/accounts/${enc(found.account_id)}/${action}`, reason));
        asking = null;
        drawFound();
        await loadAudit();
      }, () => { asking = null; drawFound(); }) : null,
      h("h4", { text: t("op.recentGames") }),
      found.recent_games.length
        ? h("ul", { class: "op-games", "data-testid": "op-recent-games" }, found.recent_games.map(recentGame))
        : h("p", { class: "muted", text: t("op.noRecentGames") }));
  }

  // One of a player's recent finished games: its title, when it ended, the player's place, and
  // the replay's page.
  function recentGame(game) {
    const ended = game.finished_at
      ? h("time", { datetime: new Date(game.finished_at * 1000).toISOString(), text: when(game.finished_at * 1000) })
      : null;
    const place = game.rank ? t("op.place", { rank: game.rank, players: game.players, score: game.score }) : null;
    return h("li", { "data-testid": "op-recent-game", "data-game-id": game.game_id },
      h("a", { href: game.replay, "data-nav": "", "data-testid": "op-replay-link",
        text: `${game.game ? gameTitle(game.game) : t("table.replay")} · ${game.game_id}` }),
      h("span", { class: "muted" }, ended ? " · " : null, ended, place ? ` · ${place}` : null));
  }

  function message(m) {
    if (m.gone) return h("li", { class: "muted", text: `#${m.n} ${t("op.messageGone")}` });
    const said = m.text ?? t("op.reaction", { reaction: m.reaction });
    return h("li", { "data-testid": "op-message" }, h("strong", { text: `${m.name}: ` }), said);
  }

  function drawReports() {
    if (!reports.items) return mount(live.reports, h("p", { class: "muted", text: t("common.loading") }));
    if (!reports.items.length) return mount(live.reports, h("p", { class: "empty", text: t("op.noReports") }));
    mount(live.reports, h("ul", { class: "op-list" }, reports.items.map((report) => {
      const key = `report:${report.id}`;
      return h("li", { class: "op-item", "data-testid": "op-report", "data-report": report.id, "data-paged": "", tabindex: -1 },
        h("div", { class: "op-line" },
          h("span", { text: t("op.reportHead", { reason: t(`op.why.${report.reason}`), id: report.game_id, when: when(report.at) }) }),
          h("span", { class: report.handled ? "badge finished" : "badge warn", text: report.handled ? t("op.handled") : t("op.open") })),
        h("ul", { class: "op-messages" }, report.messages.map(message)),
        report.handled ? h("p", { class: "muted", "data-testid": "op-handled",
          text: t("op.handledBy", { name: report.handled.name, note: report.handled.note }) }) : null,
        !report.handled && asking !== key ? h("button", { type: "button", class: "small", "data-testid": "op-handle",
          text: t("op.handle"), onclick: () => { asking = key; drawReports(); } }) : null,
        asking === key ? reasonForm(t("op.note", { id: report.id }), "handle", async (note) => {
          await post(`/operator/reports/${enc(report.id)}/handled`, note);
          asking = null;
          await Promise.all([loadReports(), loadAudit()]);
        }, () => { asking = null; drawReports(); }) : null);
    })), moreButton(reports, live.reports, "op-reports"));
  }

  function drawAudit() {
    if (!audit.items) return mount(live.audit, h("p", { class: "muted", text: t("common.loading") }));
    if (!audit.items.length) return mount(live.audit, h("p", { class: "empty", text: t("op.noAudit") }));
    const cols = ["when", "who", "action", "target", "reason"];
    mount(live.audit, h("div", { class: "op-scroll", tabindex: 0, role: "region", "aria-labelledby": "op-audit-title" },
      h("table", { class: "data op-audit" },
        h("thead", {}, h("tr", {}, cols.map((c) => h("th", { scope: "col", text: t(`op.col.${c}`) })))),
        h("tbody", {}, audit.items.map((entry) => h("tr", { "data-testid": "op-audit-entry", "data-action": entry.action, "data-paged": "", tabindex: -1 },
          h("td", { text: when(streamTime(entry.id)) }),
          h("td", { "data-testid": "op-audit-who", text: entry.name }),
          h("td", { text: t(`op.action.${entry.action}`) }),
          h("td", { text: entry.target }),
          h("td", { text: entry.reason })))))),
    moreButton(audit, live.audit, "op-audit"));
  }

  try {
    me = await api("/operator/me");
  } catch (error) {
    document.title = `${t("op.title")} · Tablestream`;
    const refused = error instanceof ApiError && error.code === "not_an_operator";
    mount(main, h("section", { class: "panel", "data-testid": refused ? "op-refused" : "op-error" },
      h("h1", { text: t("op.title") }),
      h("p", { class: refused ? null : "error", text: refused ? t("op.refused") : error.message }),
      refused ? h("p", {}, h("a", { href: "/", "data-nav": "", "data-testid": "op-login-link", text: t("op.refusedLink") })) : null));
    return null;
  }
  draw();
  await Promise.all([loadFigures(), loadReports(), loadDisputes(), loadAudit()]).catch((error) => toast(error.message));
  return onLangChange(draw);
}
