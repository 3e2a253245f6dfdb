// The default board: any game without a board module of its own (game_board.js) is played here. It
// knows nothing of the game: it shows the game's own fields of the view as a list of names and
// values (what the table shows everywhere, status, players, scores, is left to the table page) and
// every legal move of the seat as a button that sends the command as the server listed it.
import { h } from "../ui.js";
import { t } from "../i18n.js";
import { action, dock } from "./common.js";

export const stylesheet = true; // css/games/default.css

// The fields every table's view has (projections/views.py, services/table/queries.py): the table page
// shows them itself. Whatever else the view holds is the game's.
const TABLE_FIELDS = new Set(["game", "game_id", "version", "status", "phase", "practice", "seats", "options",
  "bot_pace_ms", "turn_based", "players", "to_act", "scores", "winners", "hints_used", "fairness", "seat", "legal",
  "clock"]);
// The fields of a players entry that are the table's rather than the game's.
const PLAYER_FIELDS = new Set(["seat", "name", "account", "bot", "bot_level", "left", "takeover"]);
const IDENTIFIER = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/** A field's name or an identifier as words: ``discs_on_mats`` -> "discs on mats". */
function words(name) {
  return String(name).replaceAll("_", " ");
}

function capitalised(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function scalar(value) {
  return value === null || value === undefined || ["string", "number", "boolean"].includes(typeof value);
}

/** A value as words: nothing is "—", yes and no in the page's language, identifiers with spaces. */
function said(value) {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return t(value ? "common.yes" : "common.no");
  if (typeof value === "string") return IDENTIFIER.test(value) ? words(value) : value;
  return String(value);
}

/** A plain value, or a list of plain values: what fits on one line. */
function flat(value) {
  return scalar(value) || (Array.isArray(value) && value.every(scalar));
}

function inline(value) {
  if (scalar(value)) return said(value);
  return value.length ? value.map(said).join(", ") : "—";
}

/** Any JSON value, readable: plain values and objects of them on one line, the rest as nested lists. */
function shown(value) {
  if (flat(value)) return inline(value);
  if (Array.isArray(value)) return h("ol", { class: "state-items" }, value.map((item) => h("li", {}, shown(item))));
  const entries = Object.entries(value);
  if (!entries.length) return "—";
  if (entries.every(([, v]) => flat(v))) return entries.map(([k, v]) => `${words(k)} ${inline(v)}`).join(" · ");
  return fields(entries, "state nested");
}

function fields(entries, cls) {
  return h("dl", { class: cls }, entries.map(([name, value]) => h("div", { class: "state-field", "data-field": name },
    h("dt", { text: capitalised(words(name)) }), h("dd", {}, shown(value)))));
}

/** The game's own fields of a view, in the order the server wrote them; the phase first. */
export function gameFields(view) {
  const entries = Object.entries(view).filter(([name]) => !TABLE_FIELDS.has(name));
  return view.phase ? [["phase", view.phase], ...entries] : entries;
}

/** What a command's button says: its type, then each argument (a seat by its player's name). */
export function moveWords(command, name) {
  const args = Object.entries(command).filter(([key]) => key !== "type")
    .map(([key, value]) => `${words(key)} ${key === "seat" && typeof value === "number" ? name(value) : said(value)}`);
  return [capitalised(words(command.type)), ...args].join(" · ");
}

export function round(view) {
  if (typeof view.round !== "number") return "";
  const total = typeof view.rounds === "number" ? view.rounds : view.options && view.options.rounds;
  return typeof total === "number" ? t("table.roundOf", { n: view.round, total }) : t("table.round", { n: view.round });
}

/** A player's own game fields, on one line, for the players list. */
export function stat(view, p) {
  return Object.entries(p).filter(([name]) => !PLAYER_FIELDS.has(name))
    .map(([name, value]) => `${words(name)} ${flat(value) ? inline(value) : JSON.stringify(value)}`).join(" · ");
}

export function board(view, ctx) {
  const legal = view.legal || [];
  const state = h("section", { class: "state-area", "aria-labelledby": "state-title" },
    h("h2", { id: "state-title", text: t("table.board.state") }), fields(gameFields(view), "state"));
  const moves = legal.length ? h("section", { class: "moves-area", "aria-labelledby": "moves-title" },
    h("h2", { id: "moves-title", text: t("table.board.moves") }),
    h("div", { class: "controls", "data-testid": "moves" },
      legal.map((command) => action(ctx, command, moveWords(command, ctx.name))))) : null;
  return h("div", { class: "game default-board", "data-board": "default" }, state, dock(moves));
}
