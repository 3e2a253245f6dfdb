// The end of a game: the winners, the final scores, a score sheet per round (from the score pad,
// `GET /games/{id}/scores`), "Play again" (table_rematch.js), and the ways to the replay and the
// fairness audit, and a seated player's "Dispute a round" (dispute_form.js, in a slot table.js keeps).
import { t } from "./i18n.js";
import { playerName } from "./names.js";
import { h } from "./ui.js";
import { rematchPanel } from "./table_rematch.js";

function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

function head(view, first) {
  return h("thead", {}, h("tr", {}, h("th", { scope: "col", text: first }),
    view.players.map((p) => h("th", { scope: "col", class: view.winners.includes(p.seat) ? "winner" : null, text: p.name }))));
}

function totals(view, pad) {
  return h("tfoot", {}, h("tr", {}, h("th", { scope: "row", text: t("table.sheetTotal") }),
    view.players.map((p) => h("td", { class: view.winners.includes(p.seat) ? "winner" : null, text: String(pad.totals[p.seat]) }))));
}

function skullKing(view, pad) {
  return [head(view, t("table.sheetRound")), h("tbody", {}, pad.rounds.map((line) => h("tr", {},
    h("th", { scope: "row", text: String(line.round) }),
    view.players.map((p) => {
      const cell = line.seats.find((s) => s.seat === p.seat);
      return h("td", { class: cell.bid === cell.tricks ? "made" : "missed" },
        h("span", { class: "pts", text: signed(cell.score) }),
        h("span", { class: "sub", text: t("table.sheetBid", { bid: cell.bid, tricks: cell.tricks }) }),
        cell.bonus ? h("span", { class: "sub bonus", text: t("table.sheetBonus", { n: cell.bonus }) }) : null);
    })))), totals(view, pad)];
}

function sixNimmt(view, pad) {
  const lines = pad.rounds.map((penalties, index) => h("tr", {}, h("th", { scope: "row", text: String(index + 1) }),
    view.players.map((p) => h("td", { "aria-label": t("table.sheetBullheads", { n: penalties[p.seat] }) },
      h("span", { class: "pts", text: penalties[p.seat] ? `▼ ${penalties[p.seat]}` : "0" })))));
  return [head(view, t("table.sheetRound")), h("tbody", {}, lines), totals(view, pad)];
}

function skull(view, pad) {
  const lines = pad.rounds.map((line) => h("tr", {},
    h("th", { scope: "row" }, String(line.round), h("span", { class: "sub",
      text: `${t("table.sheetChallenge", { name: playerName(view, line.challenger), n: line.bid })} · `
        + t(line.outcome === "success" ? "table.sheetWon" : "table.sheetLost") })),
    view.players.map((p) => h("td", { "aria-label": t("table.sheetPoints", { n: line.points[p.seat] }) },
      h("span", { class: "pts stars", text: "★".repeat(line.points[p.seat]) + "☆".repeat(Math.max(0, 2 - line.points[p.seat])) })))));
  return [head(view, t("table.sheetRound")), h("tbody", {}, lines), totals(view, pad)];
}

const SHEETS = { "skull-king": skullKing, "six-nimmt": sixNimmt, skull };

/** The score sheet of a finished game, or a sentence when no round was scored. */
export function scoreSheet(view, pad) {
  if (!pad || !pad.rounds || !pad.rounds.length) return h("p", { class: "muted", text: t("table.sheetNone") });
  return h("div", { class: "sheet-wrap", tabindex: "0", role: "region", "aria-labelledby": "sheet-title" },
    h("table", { class: "sheet", "data-testid": "score-sheet" }, h("caption", { id: "sheet-title", text: t("table.sheet") }),
      SHEETS[view.game](view, pad)));
}

export function endScreen(view, id, pad = null) {
  const names = view.winners.map((s) => playerName(view, s)).join(", ");
  const ranked = [...view.players].sort((a, b) =>
    view.game === "six-nimmt" ? view.scores[a.seat] - view.scores[b.seat] : view.scores[b.seat] - view.scores[a.seat]);
  return h("section", { class: "panel end", "data-testid": "end-screen", "aria-labelledby": "end-title" },
    h("div", { class: "trophy", "aria-hidden": "true", text: "🏆︎" }),
    h("h2", { id: "end-title", text: t("table.gameOver") }),
    h("p", { class: "winners", "data-testid": "winners", text: t("table.won", { names }) }),
    (view.hints_used || []).length ? h("p", { class: "muted hints-used", "data-testid": "hints-used", text: t("table.hintsUsed") }) : null,
    h("table", { class: "final" }, h("caption", { text: t("table.final") }),
      h("tbody", {}, ranked.map((p) => h("tr", { class: view.winners.includes(p.seat) ? "winner" : "" },
        h("th", { scope: "row", text: p.name }), h("td", { text: String(view.scores[p.seat]) }))))),
    pad ? scoreSheet(view, pad) : h("p", { class: "muted", "data-testid": "sheet-loading", text: t("common.loading") }),
    rematchPanel(view, id),
    view.seat !== null && view.seat !== undefined ? h("div", { "data-slot": "dispute" }) : null, // dispute_form.js, kept by table.js
    h("p", { class: "actions" },
      h("a", { class: "button primary", href: `/replay/${id}`, "data-nav": "", "data-testid": "end-replay", text: t("table.replay") }),
      h("a", { class: "button", href: `/audit/${id}`, "data-nav": "", "data-testid": "end-audit", text: t("table.audit") })));
}
