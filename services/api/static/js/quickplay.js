// Quick play: "Play now" for a game and a player count (the lobby's panel), then the waiting screen
// (a modal dialog) until the matcher seats the player, who then goes to the table.
//
// The ticket's state comes by long-poll (GET /quickplay/{ticket}?wait=20): the server answers as
// soon as the ticket is seated (or timed out), else after 20 s, and the next poll starts at once,
// so a seat is seen within a round trip and a waiting browser sends about three requests a minute.
// Those polls also tell the server the player is still there (a ticket nobody asks about for 30 s is
// dropped). The ticket's secret is in the HttpOnly ts_quickplay cookie; this page keeps only the
// ticket's id (to reopen the waiting screen after a reload).
import { api, ApiError } from "./api.js";
import { t } from "./i18n.js";
import { gameTitle } from "./game_info.js";
import { h, mount, store, toast } from "./ui.js";
import { navigate } from "./router.js";
import { joinRefused } from "./account.js";

const POLL_SECONDS = 20;
const KEPT = "tablestream.quickplay"; // the live ticket's id
const CHOICES = "tablestream.quickplayChoices"; // per game: the player count last chosen; and bots

export const quickplay = {
  open: (game, players, name, bots) => api("/quickplay", { method: "POST",
    body: { game, players, ...(name ? { name } : {}), bots_after_wait: bots } }),
  read: (ticket, wait = 0) => api(`/quickplay/${ticket}?wait=${wait}`),
  bots: (ticket) => api(`/quickplay/${ticket}/bots`, { method: "POST", body: {} }),
  cancel: (ticket) => api(`/quickplay/${ticket}`, { method: "DELETE" }),
};

let waiting = null; // the open waiting screen: { close() }

/** The lobby's "Play now" panel: per game one button and its player count, one bots checkbox.
 * `name()`: the name to sit under (null for an account, which sits under its own). */
export function quickPlayPanel(schema, name) {
  const choices = store(CHOICES) || {};
  const bots = h("input", { type: "checkbox", id: "qp-bots", "data-testid": "qp-bots", checked: !!choices.bots,
    onchange: () => store(CHOICES, { ...(store(CHOICES) || {}), bots: bots.checked }) });
  const rows = schema.games.map((g) => {
    const { min, max } = g.players;
    const chosen = Math.max(min, Math.min(max, Number(choices[g.game]) || min));
    const count = h("select", { id: `qp-players-${g.game}`, "data-testid": `qp-players-${g.game}`,
      onchange: () => store(CHOICES, { ...(store(CHOICES) || {}), [g.game]: Number(count.value) }) },
      Array.from({ length: max - min + 1 }, (_, i) => min + i).map((n) =>
        h("option", { value: String(n), selected: n === chosen, text: t("quick.playersN", { n }) })));
    return h("li", { class: "qp-game" },
      h("span", { class: "game-title", text: gameTitle(g.game) }),
      h("label", { class: "sr-only", for: `qp-players-${g.game}`, text: t("quick.playersOf", { game: gameTitle(g.game) }) }),
      count,
      h("button", { type: "button", class: "primary", "data-testid": `qp-play-${g.game}`,
        "aria-label": t("quick.playGame", { game: gameTitle(g.game) }), text: t("quick.play"),
        onclick: (event) => start(g.game, Number(count.value), event.currentTarget) }));
  });
  return h("section", { class: "panel quickplay", "aria-labelledby": "qp-title", "data-testid": "quickplay" },
    h("h2", { id: "qp-title", text: t("quick.title") }),
    h("p", { class: "help lead", text: t("quick.lead", { seconds: 30 }) }),
    h("ul", { class: "qp-games" }, rows),
    h("p", { class: "qp-bots" }, bots, h("label", { for: "qp-bots", text: t("quick.allowBots") })));

  async function start(game, players, opener) {
    const who = name();
    if (who === "") return toast(t("lobby.nameRequired"));
    if (who) store("tablestream.name", who);
    opener.disabled = true;
    try {
      const ticket = await quickplay.open(game, players, who, bots.checked);
      showWaiting(ticket, opener);
    } catch (error) {
      // this browser's own search for another game: show it (its cookie reads it); else say why
      const mine = error instanceof ApiError && error.code === "already_queued" && error.details.ticket
        ? await quickplay.read(error.details.ticket).catch(() => null) : null;
      if (mine) {
        toast(error.message);
        showWaiting(mine, opener);
      } else joinRefused(error);
    } finally {
      opener.disabled = false;
    }
  }
}

/** After a reload: the waiting screen again for a ticket still queued. */
export async function resumeQuickPlay() {
  const kept = store(KEPT);
  if (!kept || waiting) return;
  try {
    const ticket = await quickplay.read(kept);
    if (ticket.state === "queued" || ticket.state === "matched" || ticket.state === "seated") showWaiting(ticket, null);
    else store(KEPT, null);
  } catch {
    store(KEPT, null);
  }
}

/** Close the waiting screen (leaving the lobby); the ticket stays until it is cancelled or dropped. */
export function closeQuickPlay() {
  if (waiting) waiting.close();
}

function mmss(ms) {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function showWaiting(first, opener) {
  if (waiting) waiting.close();
  let ticket = first;
  let closed = false;
  const since = Date.now() - ticket.waited_ms; // the wait as this browser's clock counts it
  store(KEPT, ticket.ticket);
  const what = h("p", { class: "qp-what", "data-testid": "qp-what" });
  const clock = h("p", { class: "qp-clock", "data-testid": "qp-waited", "aria-live": "off" });
  const status = h("p", { class: "qp-status", role: "status", "data-testid": "qp-status" });
  const offer = h("div", { class: "qp-offer", "data-testid": "qp-offer", hidden: true });
  const cancel = h("button", { type: "button", class: "button", "data-testid": "qp-cancel", text: t("quick.cancel"),
    onclick: () => cancelTicket() });
  const dialog = h("dialog", { class: "qp-dialog", "data-testid": "qp-waiting", "aria-labelledby": "qp-wait-title" },
    h("div", { class: "qp-spinner", "aria-hidden": "true" }),
    h("h2", { id: "qp-wait-title", text: t("quick.waitingTitle") }),
    what, clock, status, offer,
    h("div", { class: "actions" }, cancel));
  dialog.addEventListener("cancel", (event) => { event.preventDefault(); cancelTicket(); }); // Escape
  document.body.append(dialog);
  dialog.showModal();
  cancel.focus();
  const tick = setInterval(drawClock, 1000);
  waiting = { close };
  draw();
  poll();

  function drawClock() {
    const waited = Date.now() - since;
    clock.textContent = t("quick.waited", { time: mmss(waited), bound: ticket.wait_bound_seconds });
    const past = waited >= ticket.wait_bound_seconds * 1000;
    offer.hidden = !past || ticket.state !== "queued";
    if (past && ticket.state === "queued") drawOffer();
  }

  function draw() {
    what.textContent = t("quick.what", { game: gameTitle(ticket.game), n: ticket.players });
    if (ticket.state === "queued") status.textContent = t("quick.position", { n: ticket.position || 1 });
    else if (ticket.state === "matched" || ticket.state === "seated") status.textContent = t("quick.found");
    drawClock();
  }

  function drawOffer() {
    if (offer.dataset.shown === String(ticket.bots_after_wait)) return;
    offer.dataset.shown = String(ticket.bots_after_wait);
    if (ticket.bots_after_wait) return mount(offer, h("p", { class: "help", text: t("quick.botsComing") }));
    mount(offer, h("p", { class: "help", text: t("quick.botsOffer") }),
      h("button", { type: "button", class: "primary", "data-testid": "qp-accept-bots", text: t("quick.botsAccept"),
        onclick: async () => {
          try {
            ticket = { ...ticket, ...(await quickplay.bots(ticket.ticket)) };
            draw();
          } catch (error) { toast(error.message); }
        } }));
  }

  async function poll() {
    let failures = 0;
    while (!closed) {
      try {
        ticket = await quickplay.read(ticket.ticket, POLL_SECONDS);
        failures = 0;
      } catch (error) {
        if (closed) return;
        if (error instanceof ApiError && error.status === 404) return gone(t("quick.gone"));
        failures += 1;
        status.textContent = error.message;
        await new Promise((resolve) => setTimeout(resolve, Math.min(10, 2 ** failures) * 1000)); // back off
        continue;
      }
      if (closed) return;
      if (ticket.state === "seated") {
        store(KEPT, null);
        close();
        return navigate(`/tables/${ticket.game_id}`);
      }
      if (ticket.state === "timed_out") return gone(t("quick.timedOut"));
      draw();
    }
  }

  function gone(sentence) {
    store(KEPT, null);
    clearInterval(tick);
    closed = true;
    status.textContent = sentence;
    offer.hidden = true;
    cancel.textContent = t("quick.close");
    cancel.onclick = () => close();
    cancel.focus();
  }

  async function cancelTicket() {
    if (closed) return close();
    try {
      await quickplay.cancel(ticket.ticket);
      store(KEPT, null);
      close();
      toast(t("quick.cancelled"), "ok");
    } catch (error) {
      if (error instanceof ApiError && error.code === "already_matched") {
        status.textContent = t("quick.found"); // too late: the table is being set; the poll takes us there
        return;
      }
      if (error instanceof ApiError && error.status === 404) {
        store(KEPT, null);
        return close();
      }
      toast(error.message);
    }
  }

  function close() {
    closed = true;
    clearInterval(tick);
    if (waiting && waiting.close === close) waiting = null;
    if (dialog.open) dialog.close();
    dialog.remove();
    if (opener && opener.isConnected) opener.focus();
  }
}
