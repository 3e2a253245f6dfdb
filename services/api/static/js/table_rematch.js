// "Play again" on the end screen (GET/POST /games/{id}/rematch, POST .../rematch/decline): each
// player of the finished game accepts or declines; once every player has accepted, the server makes
// one new table and this browser, holding its new seat's cookie, goes there.
//
// The game's live stream ends with the game, so the end screen reads the rematch by itself: every
// few seconds while the end screen is shown and the rematch is still open, for at most 15 minutes.
import { api } from "./api.js";
import { navigate } from "./router.js";
import { t } from "./i18n.js";
import { h, patch, toast } from "./ui.js";

const POLL_MS = 2500;
const POLL_FOR_MS = 15 * 60 * 1000;
const states = new Map(); // finished table id -> {state, accepted, timer, until}

function entry(id) {
  if (!states.has(id)) states.set(id, { state: null, accepted: false, timer: null, until: Date.now() + POLL_FOR_MS });
  return states.get(id);
}

function settled(state) {
  return state && (state.status === "made" || state.status === "declined");
}

function redraw(id) {
  const box = document.querySelector(`[data-testid="rematch"][data-game="${id}"]`);
  if (box) patch(box, parts(id));
  return Boolean(box);
}

function acceptedHere(id) {
  const { state, accepted, seat } = entry(id);
  const me = state && state.seats.find((s) => s.seat === seat);
  return accepted || Boolean(me && me.answer === "accepted");
}

function take(id, state) {
  const mine = entry(id);
  mine.state = state;
  if (state.status === "made" && state.your_seat !== null && acceptedHere(id) && !mine.gone) {
    mine.gone = true;
    navigate(`/tables/${state.new_game_id}`);
    return;
  }
  redraw(id);
}

async function poll(id) {
  const mine = entry(id);
  mine.timer = null;
  if (!document.querySelector(`[data-testid="rematch"][data-game="${id}"]`)) return; // the end screen is gone
  try {
    take(id, await api(`/games/${id}/rematch`));
  } catch {
    // a lost answer: the next poll asks again
  }
  if (!settled(mine.state) && Date.now() < mine.until) mine.timer = setTimeout(() => poll(id), POLL_MS);
}

async function answer(id, accept) {
  const mine = entry(id);
  try {
    if (accept) mine.accepted = true;
    take(id, await api(`/games/${id}/rematch${accept ? "" : "/decline"}`, { method: "POST", body: {} }));
  } catch (error) {
    if (accept) mine.accepted = false;
    toast(error.message);
    poll(id);
  }
}

function parts(id) {
  const { state } = entry(id);
  const accepted = acceptedHere(id);
  if (!state) return [h("p", { class: "muted", text: t("common.loading") })];
  const name = (seat) => (state.seats.find((s) => s.seat === seat) || { name: "" }).name;
  const list = h("ul", { class: "rematch-seats" }, state.seats.map((s) => h("li", { class: s.answer || "bot" },
    h("span", { class: "who", text: s.name }),
    h("span", { class: "answer", "data-testid": `rematch-answer-${s.seat}`,
      text: t(`rematch.answer.${s.bot ? "bot" : s.answer}`) }))));
  const out = [h("h3", { text: t("rematch.title") }), list];
  if (state.status === "declined") {
    out.push(h("p", { class: "rematch-note bad", "data-testid": "rematch-declined",
      text: t("rematch.declinedBy", { name: name(state.declined_by) }) }));
  } else if (state.status === "made") {
    out.push(h("p", { class: "rematch-note ok", text: t("rematch.ready") }));
    if (state.your_seat !== null) {
      out.push(h("a", { class: "button primary", href: `/tables/${state.new_game_id}`, "data-nav": "",
        "data-testid": "rematch-go", text: t("rematch.go") }));
    }
  } else if (state.status === "creating") {
    out.push(h("p", { class: "rematch-note", text: t("rematch.creating") }));
  } else {
    if (accepted) out.push(h("p", { class: "rematch-note", text: t("rematch.waiting") }));
    else {
      out.push(h("p", { class: "actions" },
        h("button", { type: "button", class: "primary", "data-testid": "play-again", text: t("rematch.playAgain"),
          onclick: () => answer(id, true) }),
        h("button", { type: "button", "data-testid": "rematch-decline", text: t("rematch.decline"),
          onclick: () => answer(id, false) })));
    }
  }
  return out;
}

/** The rematch box of the end screen, for a player of the finished game (seat `view.seat`). */
export function rematchPanel(view, id) {
  const me = view.players.find((p) => p.seat === view.seat);
  if (view.seat === null || !me || me.bot || me.left) return null;
  const mine = entry(id);
  mine.seat = view.seat;
  if (!mine.timer && !settled(mine.state) && Date.now() < mine.until) mine.timer = setTimeout(() => poll(id), 0);
  return h("section", { class: "rematch", "data-testid": "rematch", "data-game": id, "aria-live": "polite" },
    parts(id));
}
