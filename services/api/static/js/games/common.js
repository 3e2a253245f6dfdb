// Helpers shared by the game boards: legal commands as real buttons, the action dock, the parts of
// an end-of-game score sheet.
import { h } from "../ui.js";
import { t } from "../i18n.js";

export function legal(view, type) {
  return (view.legal || []).filter((command) => command.type === type);
}

export function keyOf(command) {
  return Object.entries(command).sort().map(([k, v]) => `${k}=${v}`).join("&");
}

/** A button that sends ``command``; disabled (still visible) when ``command`` is null. */
export function action(ctx, command, content, { cls = "", label = null, fallbackKey = null } = {}) {
  return h("button", {
    type: "button",
    class: `act ${cls}`,
    disabled: !command,
    "aria-label": label,
    "data-key": command ? keyOf(command) : fallbackKey,
    "data-hold": fallbackKey, // the same button whether its card may be played now or not (ui.js patch)
    "data-act": command ? command.type : null,
    onclick: command ? (event) => {
      event.currentTarget.disabled = true;
      ctx.send(command);
    } : null,
  }, content);
}

/** Buttons for every legal command the board did not place itself, so no move is ever unreachable. */
export function leftovers(view, ctx, handled) {
  const rest = (view.legal || []).filter((command) => !handled.has(command.type));
  if (!rest.length) return null;
  return h("div", { class: "controls" }, rest.map((command) =>
    action(ctx, command, Object.entries(command).map(([k, v]) => (k === "type" ? v.replaceAll("_", " ") : `${k} ${v}`)).join(" · "))));
}

/** The part of a board a player acts with (controls and hand): the table page puts the prompt on
 * top of it and, on a phone, keeps it on screen at the bottom. */
export function dock(...parts) {
  return h("div", { class: "dock" }, parts);
}

/** The event a step of the change queue is showing, when it is of ``type``. */
export function stepEvent(ctx, type) {
  const event = ctx.step && ctx.step.event;
  return event && event.type === type ? event : null;
}

/** A score with its sign: "+20", "0", "-10". */
export function signed(n) {
  return n > 0 ? `+${n}` : String(n);
}

/** A score sheet's head: ``first`` over the rounds' column, then the players (winners marked). */
export function sheetHead(view, first = t("table.sheetRound")) {
  return h("thead", {}, h("tr", {}, h("th", { scope: "col", text: first }),
    view.players.map((p) => h("th", { scope: "col", class: view.winners.includes(p.seat) ? "winner" : null, text: p.name }))));
}

/** A score sheet's foot: every player's total from the score pad. */
export function sheetTotals(view, pad) {
  return h("tfoot", {}, h("tr", {}, h("th", { scope: "row", text: t("table.sheetTotal") }),
    view.players.map((p) => h("td", { class: view.winners.includes(p.seat) ? "winner" : null, text: String(pad.totals[p.seat]) }))));
}
