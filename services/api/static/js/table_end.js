// The end of a game: the winners, the final scores (best first; lowest first where the game says the
// fewest points win, game_info.js), a score sheet per round (from the score pad,
// `GET /games/{id}/scores`: the game module's own sheet, else the default one below), "Play again"
// (table_rematch.js), and the ways to the replay and the fairness audit, and a seated player's
// "Dispute a round" (dispute_form.js, in a slot table.js keeps).
import { t } from "./i18n.js";
import { lowerScoreWins } from "./game_info.js";
import { sheetHead, sheetTotals } from "./games/common.js";
import { playerName } from "./names.js";
import { h } from "./ui.js";
import { rematchPanel } from "./table_rematch.js";

// The default sheet, for a game whose board module has none: one row per round of the score pad,
// and in each seat's cell the number the round gave it. A round is what the game's scoreboard made of
// it (projections/views.py): a list of numbers by seat, or an object holding such a list, or a list
// of per-seat entries ({seat, score, ...}); the round's other plain fields are said under its number.
const MAIN = ["score", "points", "total"]; // the number that stands for a per-seat entry, when it has one

function plain(value) {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

function words(name) {
  return String(name).replaceAll("_", " ");
}

/** A round's line for ``seat``: {main, subs} (``main`` null when the round says nothing of it). */
function seatLine(line, seat, seats) {
  if (Array.isArray(line)) return { main: line[seat], subs: [] };
  for (const value of Object.values(line || {})) {
    if (!Array.isArray(value) || value.length !== seats) continue;
    if (value.every(plain)) return { main: value[seat], subs: [] };
    const entry = value.find((item) => item && item.seat === seat);
    if (!entry) continue;
    const key = MAIN.find((name) => plain(entry[name]));
    const subs = Object.entries(entry).filter(([name, v]) => name !== "seat" && name !== key && plain(v))
      .map(([name, v]) => `${words(name)} ${v}`);
    return { main: key ? entry[key] : null, subs };
  }
  return { main: null, subs: [] };
}

function defaultSheet(view, pad) {
  const seats = view.seats || view.players.length;
  const lines = pad.rounds.map((line, index) => {
    const about = line && !Array.isArray(line) && typeof line === "object"
      ? Object.entries(line).filter(([name, v]) => name !== "round" && plain(v)).map(([name, v]) => `${words(name)} ${v}`) : [];
    return h("tr", {}, h("th", { scope: "row" }, String(line && typeof line.round === "number" ? line.round : index + 1),
      about.length ? h("span", { class: "sub", text: about.join(" · ") }) : null),
    view.players.map((p) => {
      const { main, subs } = seatLine(line, p.seat, seats);
      return h("td", {}, h("span", { class: "pts", text: main === null || main === undefined ? "—" : String(main) }),
        subs.map((text) => h("span", { class: "sub", text })));
    }));
  });
  return [sheetHead(view), h("tbody", {}, lines), sheetTotals(view, pad)];
}

/** The score sheet of a finished game, or a sentence when no round was scored. */
export function scoreSheet(view, pad, mod = null) {
  if (!pad || !pad.rounds || !pad.rounds.length) return h("p", { class: "muted", text: t("table.sheetNone") });
  return h("div", { class: "sheet-wrap", tabindex: "0", role: "region", "aria-labelledby": "sheet-title" },
    h("table", { class: "sheet", "data-testid": "score-sheet" }, h("caption", { id: "sheet-title", text: t("table.sheet") }),
      (mod && mod.sheet ? mod.sheet : defaultSheet)(view, pad)));
}

/** The end screen; ``mod`` is the game's board module (game_board.js), whose ``sheet`` draws the
 * score sheet when it has one. */
export function endScreen(view, id, pad = null, mod = null) {
  const names = view.winners.map((s) => playerName(view, s)).join(", ");
  const lowest = lowerScoreWins(view.game);
  const ranked = [...view.players].sort((a, b) =>
    lowest ? view.scores[a.seat] - view.scores[b.seat] : view.scores[b.seat] - view.scores[a.seat]);
  return h("section", { class: "panel end", "data-testid": "end-screen", "aria-labelledby": "end-title" },
    h("div", { class: "trophy", "aria-hidden": "true", text: "🏆︎" }),
    h("h2", { id: "end-title", text: t("table.gameOver") }),
    h("p", { class: "winners", "data-testid": "winners", text: t("table.won", { names }) }),
    (view.hints_used || []).length ? h("p", { class: "muted hints-used", "data-testid": "hints-used", text: t("table.hintsUsed") }) : null,
    h("table", { class: "final" }, h("caption", { text: t("table.final") }),
      h("tbody", {}, ranked.map((p) => h("tr", { class: view.winners.includes(p.seat) ? "winner" : "" },
        h("th", { scope: "row", text: p.name }), h("td", { text: String(view.scores[p.seat]) }))))),
    pad ? scoreSheet(view, pad, mod) : h("p", { class: "muted", "data-testid": "sheet-loading", text: t("common.loading") }),
    rematchPanel(view, id),
    view.seat !== null && view.seat !== undefined ? h("div", { "data-slot": "dispute" }) : null, // dispute_form.js, kept by table.js
    h("p", { class: "actions" },
      h("a", { class: "button primary", href: `/replay/${id}`, "data-nav": "", "data-testid": "end-replay", text: t("table.replay") }),
      h("a", { class: "button", href: `/audit/${id}`, "data-nav": "", "data-testid": "end-audit", text: t("table.audit") })));
}
