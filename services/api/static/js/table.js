// A table: the game board for this seat (or a spectator), live over server-sent events, the log.
import { games, ApiError } from "./api.js";
import { t, lang, onLangChange } from "./i18n.js";
import { TITLES, playerName } from "./names.js";
import { h, mount, randomId, store, toast } from "./ui.js";
import { hosted, fillWithBots } from "./lobby.js";
import { account, joinRefused, onAccountChange } from "./account.js";

const MODULES = { skull: "skull", "six-nimmt": "six_nimmt", "skull-king": "skull_king" };

export async function loadGame(game) {
  return import(`./games/${MODULES[game]}.js`);
}

/** Seconds left on the clock of a view, corrected by the server's clock at sending. */
export function secondsLeft(clock, receivedAt) {
  if (!clock || clock.deadline_ms == null) return null;
  const skew = clock.now_ms - receivedAt;
  return Math.max(0, Math.ceil((clock.deadline_ms - (Date.now() + skew)) / 1000));
}

export function playersPanel(view, mod, { receivedAt = Date.now(), interactive = true } = {}) {
  const toAct = new Set(view.to_act || []);
  const rows = [];
  for (let seat = 0; seat < view.seats; seat++) {
    const p = (view.players || []).find((x) => x.seat === seat);
    if (!p) {
      rows.push(h("li", { class: "player empty" }, h("span", { class: "pname muted", text: t("table.emptySeat") })));
      continue;
    }
    const acting = toAct.has(seat) && view.status === "playing";
    const left = interactive ? secondsLeft(view.clock, receivedAt) : null;
    rows.push(h("li", { class: "player" + (acting ? " acting" : "") + (seat === view.seat ? " me" : "")
      + ((view.winners || []).includes(seat) ? " winner" : ""), "data-seat": seat },
      h("span", { class: "turn-dot", "aria-hidden": "true" }),
      h("span", { class: "pname" }, p.name,
        seat === view.seat ? h("span", { class: "you", text: ` (${t("table.you")})` }) : null,
        p.bot ? h("span", { class: "badge", text: t("table.bot") }) : null,
        p.left ? h("span", { class: "badge warn", text: t("table.left") }) : null),
      acting && left !== null ? h("span", { class: "clock", "data-clock": "", text: "⏱ " + t("table.timeLeft", { s: left }) }) : null,
      h("span", { class: "pstat" }, view.status !== "waiting" ? mod.stat(view, p) : null),
      h("span", { class: "pscore", title: t("table.scores"), text: view.status !== "waiting" ? String(view.scores[seat]) : "" })));
  }
  return h("ol", { class: "players", "aria-label": t("table.scores") }, rows);
}

export function endScreen(view, id) {
  const names = view.winners.map((s) => playerName(view, s)).join(", ");
  const ranked = [...view.players].sort((a, b) =>
    view.game === "six-nimmt" ? view.scores[a.seat] - view.scores[b.seat] : view.scores[b.seat] - view.scores[a.seat]);
  return h("section", { class: "panel end", "data-testid": "end-screen", "aria-labelledby": "end-title" },
    h("div", { class: "trophy", "aria-hidden": "true", text: "🏆︎" }),
    h("h2", { id: "end-title", text: t("table.gameOver") }),
    h("p", { class: "winners", "data-testid": "winners", text: t("table.won", { names }) }),
    h("table", { class: "final" }, h("caption", { text: t("table.final") }),
      h("tbody", {}, ranked.map((p) => h("tr", { class: view.winners.includes(p.seat) ? "winner" : "" },
        h("th", { scope: "row", text: p.name }), h("td", { text: String(view.scores[p.seat]) }))))),
    h("p", { class: "actions" },
      h("a", { class: "button primary", href: `/replay/${id}`, "data-nav": "", text: t("table.replay") }),
      h("a", { class: "button", href: `/audit/${id}`, "data-nav": "", text: t("table.audit") })));
}

export async function render(main, id) {
  let view = null;
  let receivedAt = Date.now();
  let mod = null;
  let source = null;
  let logged = 0; // the last version shown in the log
  let logChain = Promise.resolve();
  let clockTimer = null;
  let closed = false;

  const header = h("div", { class: "table-head" });
  const prompt = h("div", { class: "prompt", role: "status", "aria-live": "polite" });
  const board = h("div", { class: "board" });
  const side = h("aside", { class: "side" });
  const players = h("section", { class: "panel" });
  const logList = h("ol", { class: "log", "data-testid": "log", "aria-live": "polite" });
  const logBox = h("section", { class: "panel log-panel", "aria-labelledby": "log-title" },
    h("h2", { id: "log-title", text: t("table.log") }), logList);
  side.append(players, logBox);
  const root = h("div", { class: "table-page", "data-testid": "table" }, header, prompt, h("div", { class: "table-grid" }, board, side));
  mount(main, root);

  function send(command) {
    return games.send(id, command, randomId()).then(() => refresh(), (error) => {
      toast(error.message);
      refresh(true); // the view may not have moved: redraw anyway, to enable the refused control again
    });
  }

  async function refresh(redraw = false) {
    try {
      show(await games.view(id), Date.now(), redraw);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) mount(main, h("p", { class: "panel", text: t("table.notFound") }));
      else toast(error.message);
    }
  }

  function syncLog(upTo) {
    logChain = logChain.then(async () => {
      while (logged < upTo && !closed) {
        const page = await games.events(id, logged);
        if (!page.events.length) break;
        const atBottom = logList.scrollHeight - logList.scrollTop - logList.clientHeight < 40;
        for (const event of page.events) {
          if (event.version <= logged) continue;
          logged = event.version;
          if (event.text) {
            logList.append(h("li", { "data-version": event.version, class: event.by ? `by-${event.by}` : null },
              event.text));
          }
        }
        if (atBottom || logList.childElementCount < 12) logList.scrollTop = logList.scrollHeight;
      }
      logList.dataset.logged = String(logged);
    }).catch((error) => toast(error.message));
    return logChain;
  }

  function resetLog() {
    logged = 0;
    logList.dataset.logged = "0";
    logList.replaceChildren();
    logBox.querySelector("h2").textContent = t("table.log");
    if (view) syncLog(view.version);
  }

  function show(next, at = Date.now(), redraw = false) {
    if (view && next.version < view.version) return;
    if (view && view.seat !== null && next.seat === null) return; // a spectator stream from before joining
    if (view && next.version === view.version && next.seat === view.seat && !redraw) {
      // The same table again (a stream's first message): only its clock may be newer. Redrawing
      // would wipe what the player is typing into the join form.
      if (next.clock) {
        view = { ...view, clock: next.clock };
        receivedAt = at;
        tickClock();
      }
      return;
    }
    view = next;
    receivedAt = at;
    draw();
    syncLog(view.version);
    if (view.status === "finished" && source) {
      source.close();
      source = null;
      liveState("ended");
    }
  }

  function promptText() {
    if (view.status === "waiting") return t("table.seatsTaken", { taken: view.players.length, seats: view.seats });
    if (view.status === "finished") return t("table.gameOver");
    if (view.seat !== null && view.to_act.includes(view.seat)) return (mod.prompt && mod.prompt(view)) || t("table.yourTurn");
    const names = view.to_act.map((s) => playerName(view, s)).join(", ");
    return names ? t("table.waitingFor", { names }) : "";
  }

  function draw() {
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    const typing = typed();
    const mine = view.seat !== null && view.to_act.includes(view.seat) && view.status === "playing";
    Object.assign(root.dataset, { version: view.version, status: view.status, seat: view.seat ?? "", game: view.game });
    mount(header,
      h("h1", {}, TITLES[view.game] || view.game),
      h("span", { class: `badge ${view.status}`, text: t("status." + view.status) }),
      view.practice ? h("span", { class: "badge", text: t("table.practice") }) : null,
      view.status !== "waiting" && mod.round ? h("span", { class: "round", text: mod.round(view) }) : null,
      view.seat !== null && view.status === "playing"
        ? h("button", { class: "ghost small leave", text: t("table.leave"), onclick: leave }) : null);
    prompt.className = "prompt" + (mine ? " mine" : "");
    mount(prompt, h("span", { text: promptText() }), h("span", { class: "prompt-clock", "data-clock-main": "" }));
    mount(players, h("h2", { text: t("table.scores") }), playersPanel(view, mod, { receivedAt }));
    if (view.status === "waiting") {
      mount(board, waiting());
    } else {
      const parts = [];
      if (view.status === "finished") parts.push(endScreen(view, id));
      parts.push(mod.board(view, { send, me: view.seat, name: (s) => playerName(view, s) }));
      mount(board, parts);
    }
    tickClock();
    retype(typing);
    if (focusKey) {
      const again = board.querySelector(`[data-key="${CSS.escape(focusKey)}"]`);
      if (again && !again.disabled) again.focus();
    }
  }

  // What the player is typing into the join form, so that a redraw (someone else joined) keeps it.
  function typed() {
    const fields = [...board.querySelectorAll(".join-form input")];
    const active = fields.find((el) => el === document.activeElement);
    return { values: fields.map((el) => [el.id, el.value]), active: active ? [active.id, active.selectionStart, active.selectionEnd] : null };
  }

  function retype({ values, active }) {
    for (const [fieldId, value] of values) {
      const el = board.querySelector(`#${fieldId}`);
      if (el) el.value = value;
    }
    const el = active && board.querySelector(`#${active[0]}`);
    if (el) {
      el.focus();
      el.setSelectionRange(active[1], active[2]);
    }
  }

  function tickClock() {
    const left = secondsLeft(view && view.clock, receivedAt);
    for (const el of document.querySelectorAll("[data-clock]")) el.textContent = "⏱ " + t("table.timeLeft", { s: left });
    const main = prompt.querySelector("[data-clock-main]");
    if (main) main.textContent = left !== null && view.status === "playing" ? "⏱ " + t("table.timeLeft", { s: left }) : "";
    if (main) main.classList.toggle("urgent", left !== null && left <= 10);
  }

  async function leave() {
    try {
      await games.leave(id);
      refresh();
    } catch (error) {
      toast(error instanceof ApiError && error.status === 404 ? t("lobby.botsMissing") : error.message);
    }
  }

  function waiting() {
    const parts = [h("p", { class: "share", text: t("table.share") }),
      h("p", { class: "share-link mono", text: location.href })];
    if (view.seat === null) {
      const me = account(); // a logged-in browser sits down as its account, under the account's name
      const form = h("form", { class: "join-form", "data-testid": "join-form", onsubmit: async (event) => {
        event.preventDefault();
        const who = me ? null : form.elements.name.value.trim();
        if (!me && !who) return toast(t("lobby.nameRequired"));
        if (who) store("tablestream.name", who);
        try {
          await games.join(id, who, form.elements.client_seed.value || null);
          // The stream was opened as a spectator: open it again with the new seat cookie.
          if (source) source.close();
          await refresh();
          if (view.status !== "finished") connect();
        } catch (error) { joinRefused(error); }
      } },
        h("h2", { text: t("table.join") }),
        me ? h("p", { class: "as-account", "data-testid": "playing-as" }, t("account.sitAs", { name: me.name }))
          : h("div", { class: "field" }, h("label", { for: "join-name", text: t("lobby.name") }),
            h("input", { id: "join-name", name: "name", maxlength: 40, value: store("tablestream.name") || "" })),
        h("div", { class: "field" }, h("label", { for: "join-seed", text: t("lobby.clientSeed") }),
          h("input", { id: "join-seed", name: "client_seed", maxlength: 64 })),
        h("button", { class: "primary", type: "submit", text: t("table.joinBtn") }));
      parts.unshift(form);
    }
    if (hosted().includes(id)) {
      parts.push(h("button", { class: "small", "data-testid": "fill-bots", text: t("lobby.bots"),
        onclick: async () => { await fillWithBots(id); refresh(); } }));
    }
    return h("section", { class: "panel waiting" }, parts);
  }

  // The live stream. The browser reconnects an EventSource by itself after a dropped connection
  // (with Last-Event-ID), but gives up for good on an answer that is not a stream (a 429 or a 503
  // while the server is busy or restarting): then the page opens a new one itself, with a growing
  // delay, resuming after the version it shows, and reads the view once in case it missed a move.
  let retryDelay = 1000;
  let retryTimer = null;

  function liveState(state, reconnecting = state !== "open") {
    root.dataset.live = state;
    if (reconnecting) prompt.dataset.reconnecting = "1";
    else delete prompt.dataset.reconnecting;
  }

  function connect(resume = "") {
    clearTimeout(retryTimer);
    retryTimer = null;
    const stream = new EventSource(`/games/${id}/live${resume}`);
    source = stream;
    liveState("connecting", Boolean(resume)); // a first stream is no reconnection
    stream.addEventListener("view", (message) => show(JSON.parse(message.data)));
    stream.onopen = () => {
      retryDelay = 1000;
      liveState("open");
    };
    stream.onerror = () => {
      if (source !== stream) return;
      if (stream.readyState === EventSource.CONNECTING) return liveState("connecting");
      // Closed for good: open a new stream later, unless the game is over or the page is gone.
      source = null;
      liveState("closed");
      if (closed || (view && view.status === "finished")) return;
      retryTimer = setTimeout(() => {
        if (closed || source) return;
        refresh();
        connect(view ? `?last_event_id=${view.version}` : "");
      }, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 15000);
    };
  }

  let first;
  try {
    first = await games.view(id);
  } catch (error) {
    mount(main, h("p", { class: "panel", text: error.status === 404 ? t("table.notFound") : error.message }));
    return null;
  }
  mod = await loadGame(first.game);
  show(first);
  if (first.status !== "finished") connect();
  clockTimer = setInterval(tickClock, 250);
  const off = onLangChange(() => { if (view) draw(); resetLog(); });
  const offAccount = onAccountChange(() => { if (view && view.status === "waiting") draw(); }); // the join form
  return () => {
    closed = true;
    off();
    offAccount();
    clearInterval(clockTimer);
    clearTimeout(retryTimer);
    if (source) source.close();
  };
}
