// A table: the game board for this seat (or a spectator), live over server-sent events, every move
// shown in turn by the change queue (table_queue.js), the log, the end screen.
import { api, games, ApiError } from "./api.js";
import { longTimeLeft } from "./time_left.js";
import { t, has, onLangChange } from "./i18n.js";
import { playerName } from "./names.js";
import { gameTitle, loadGames } from "./game_info.js";
import { loadGame } from "./game_board.js";
import { h, mount, patch, randomId, toast } from "./ui.js";
import { onAccountChange } from "./account.js";
import { keyOf } from "./games/common.js";
import { changeQueue, actorOf } from "./table_queue.js";
import { capture, play } from "./table_motion.js";
import { tableLog } from "./table_log.js";
import { notifyButton, settingsMenu, speedFactor, turnAlerts } from "./table_alerts.js";
import { leaveDialog, takeoverBanner, takeoverOf } from "./table_seat.js";
import { endScreen } from "./table_end.js";
import { disputeForm } from "./dispute_form.js";
import { installHelp } from "./card_help.js";
import { liveStream } from "./table_live.js";
import { waitingPanel } from "./table_join.js";
import { tableChat } from "./table_chat.js";
import { playersPanel, secondsLeft } from "./table_players.js";

export { endScreen };

const LONG_CLOCK = 3600; // seconds from which the clock reads in days, hours and minutes

export async function render(main, id) {
  let mod = null;
  let receivedAt = Date.now();
  let clockTimer = null;
  let closed = false;
  let sending = false;
  let answered = 0; // the version of the last command's answer
  let leftSeat = null; // the seat this page left (it watches since)
  let pad = null; // the score pad, once the game is over
  let disputeEl = null; // the end screen's "Dispute a round" form, made once (kept across redraws)
  let dockSize = null;
  const baseTitle = document.title;

  const header = h("div", { class: "table-head" });
  const warning = h("div", { class: "banner warning", role: "alert", "data-testid": "time-warning", hidden: true });
  const seatBanner = h("div", { class: "banner-slot" });
  const promptParts = {
    watching: h("span", { class: "watching", "data-testid": "watching", hidden: true }),
    text: h("span", { class: "prompt-text" }),
    clock: h("span", { class: "prompt-clock", "data-clock-main": "", "aria-hidden": "true" }), // not read out every second
  };
  const prompt = h("div", { class: "prompt", role: "status", "aria-live": "polite", "data-testid": "prompt" },
    promptParts.watching, promptParts.text, promptParts.clock);
  const say = (el, text) => { if (el.textContent !== text) el.textContent = text; };
  // Practice tables: the strong bot's suggestion for this seat, while the game is at its version.
  let hint = null;
  const hintButton = h("button", { type: "button", class: "small hint-btn", "data-testid": "hint", title: t("table.hintHelp"),
    text: t("table.hint"), onclick: () => askHint() });
  const hintText = h("span", { class: "hint-text", role: "status", "aria-live": "polite", "data-testid": "hint-text" });
  const hintBox = h("div", { class: "hint-box", "data-testid": "hint-box", hidden: true }, hintButton, hintText);
  const caption = h("p", { class: "now", "data-testid": "now" });
  const board = h("div", { class: "board" });
  const players = h("section", { class: "panel players-panel", id: "players-panel" });
  const logList = h("ol", { class: "log", "data-testid": "log", tabindex: "0", "aria-live": "polite", "aria-labelledby": "log-title" });
  const logBox = h("section", { class: "panel log-panel", "aria-labelledby": "log-title" },
    h("h2", { id: "log-title", text: t("table.log") }), logList);
  const boardCol = h("div", { class: "board-col" }, caption, board);
  const root = h("div", { class: "table-page", "data-testid": "table" }, header, seatBanner, warning,
    h("div", { class: "table-grid" }, boardCol, h("aside", { class: "side" }, players, logBox)));
  const chat = tableChat({ id, root }); // beside the log (table_chat.js)
  logBox.after(chat.panel);
  mount(main, root);
  const log = tableLog(logList);
  // The settings menu closes on a click elsewhere and on Escape, as menus do.
  root.addEventListener("pointerdown", (event) => {
    const menu = root.querySelector(".table-settings[open]");
    if (menu && !menu.contains(event.target)) menu.open = false;
  });
  root.addEventListener("keydown", (event) => {
    const menu = root.querySelector(".table-settings[open]");
    if (event.key === "Escape" && menu) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });
  const uninstallHelp = installHelp(root);
  let alerts = null;
  let dialog = null;
  const head = {};

  const queue = changeQueue({ id, root, log, factor: speedFactor, draw: drawStep, pace: () => mod?.pace ?? null,
    tell: (text) => { caption.firstChild.textContent = text; },
    before: (step) => {
      showCaption(step);
      const seat = actorOf(step.event);
      for (const el of root.querySelectorAll(".player.actor")) el.classList.remove("actor");
      if (seat !== null) root.querySelector(`.player[data-seat="${seat}"]`)?.classList.add("actor");
      return mod.before ? mod.before(board, step.event) : 0;
    } });

  const live = liveStream({ id, root, prompt, show, refresh: () => refresh(), latest: () => queue.latest(), chat: chat.live });

  // This browser's seat changed (it sat down, or left): the stream was opened with the old cookie.
  async function joined() {
    live.stop();
    await refresh();
    if (queue.latest().status !== "finished") live.open();
  }

  // A step that could not be shown: said to the player, and reported as the page's error (the
  // browser tests fail on it) rather than swallowed.
  function failed(error) {
    toast(error.message);
    if (typeof reportError === "function" && !(error instanceof ApiError)) reportError(error);
  }

  // While a command is on its way, and until a view at least as new as its answer arrived, no
  // control is offered: a step of the past drawn meanwhile would offer what was just played.
  // ``data-sent`` and ``data-answered`` count this page's commands and their answers (a move on its
  // way shows as the difference; the browser tests tell a click that sent nothing by them).
  function send(command) {
    sending = true;
    root.dataset.sent = String(Number(root.dataset.sent || 0) + 1);
    for (const button of board.querySelectorAll("button[data-act]")) button.disabled = true;
    const settled = () => { root.dataset.answered = String(Number(root.dataset.answered || 0) + 1); };
    return games.send(id, command, randomId()).then((answer) => {
      settled();
      answered = Math.max(answered, answer.version);
      sending = false;
      // The stream may have brought the move's view while the command was on its way (drawn
      // without controls then): drawn again now, whatever version the answer reads.
      return refresh(true);
    }, (error) => {
      settled();
      sending = false;
      toast(error.message);
      refresh(true); // the view may not have moved: redraw anyway, to enable the refused control again
    });
  }

  // The answer's version is the hint's own (a table event): controls wait for that view, as after a move.
  async function askHint() {
    hintButton.disabled = true;
    hintButton.textContent = t("table.hintBusy");
    try {
      const asked = queue.latest();
      const answer = await games.hint(id);
      hint = { version: answer.version, command: answer.command, words: answer.command_text, reason: answer.reason,
        choices: choicesOf(asked) };
      answered = Math.max(answered, answer.version);
    } catch (error) {
      toast(error.message);
    }
    hintButton.disabled = false;
    hintButton.textContent = t("table.hint");
    return refresh(true);
  }

  // The seat's choices in a view, as one string: a hint holds while they stay the same.
  function choicesOf(view) {
    return view ? (view.legal || []).map(keyOf).sort().join("|") : "";
  }

  // The Hint button for the awaited seat of a practice table; once answered, the suggested move's
  // button is marked and the reason said, until the seat's choices change: another seat's move
  // that leaves them as they were (a bot picking its 6 nimmt! card meanwhile) keeps the hint.
  function drawHint(latest, mine) {
    const holds = hint && latest.version >= hint.version && mine && choicesOf(latest) === hint.choices;
    const shownHint = holds ? hint : null;
    hintBox.hidden = !(latest.practice && latest.status === "playing" && latest.seat !== null && (mine || shownHint));
    hintButton.hidden = Boolean(shownHint);
    if (!shownHint) {
      say(hintText, "");
      return;
    }
    const target = board.querySelector(`[data-key="${CSS.escape(keyOf(shownHint.command))}"]`);
    if (target) target.classList.add("hinted");
    const move = shownHint.words || (target ? (target.getAttribute("aria-label") || target.textContent.trim()) : keyOf(shownHint.command));
    const reason = shownHint.reason;
    const why = !reason ? "" : has(reason.key) ? t(reason.key, reason.params || {}) : reason.text || "";
    say(hintText, t("table.hintSuggests", { move }) + (why ? ` — ${why}` : ""));
  }

  async function refresh(redraw = false) {
    try {
      show(await games.view(id), Date.now(), redraw);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) mount(main, h("p", { class: "panel", text: t("table.notFound") }));
      else toast(error.message);
    }
  }

  function show(next, at = Date.now(), redraw = false) {
    const latest = queue.latest();
    if (latest && next.version < latest.version) return;
    // A spectator stream from before joining; but after leaving, this page watches.
    if (latest && latest.seat !== null && next.seat === null && leftSeat === null) return;
    if (latest && next.version === latest.version && next.seat === latest.seat) {
      // The same table again (a stream's first message, a command's answer): only its clock may be
      // newer. Redrawing would wipe what the player is typing into the join form.
      if (next.clock) {
        latest.clock = next.clock;
        receivedAt = at;
        tickClock();
      }
      if (redraw) queue.redraw();
      return;
    }
    receivedAt = at;
    Object.assign(root.dataset, { version: next.version, status: next.status, seat: next.seat ?? "", game: next.game });
    chat.view(next);
    queue.push(next).catch(failed);
    if (next.status === "finished") {
      live.end();
      if (!pad) loadPad();
    }
    if (next.status === "closed") live.end(); // an operator closed the table: nothing more comes
    tickClock();
  }

  // The score pad is a projection: it may lag the view, by seconds on a busy server, so it is read
  // again (every 0.4 s, then less often, up to every 5 s) until it has the finished game; the end
  // screen says "loading" meanwhile. After two minutes the last answer is shown as it is.
  async function loadPad(wait = 400, since = Date.now()) {
    let read = null;
    try {
      read = await api(`/games/${id}/scores`);
    } catch {
      read = null;
    }
    const head = queue.latest();
    const behind = !read || read.status !== "finished" || (head && read.version < head.version);
    if (closed) return;
    if (behind && Date.now() - since < 120000) {
      setTimeout(() => loadPad(Math.min(wait * 1.5, 5000), since), wait);
      return;
    }
    pad = read || { rounds: [], totals: [] };
    const shown = queue.shown();
    if (shown && shown.status === "finished" && !queue.busy()) drawStep(shown, { step: null, ms: 0 });
    // a step is still being drawn (under load the pad can come before the last step ends): the
    // queue draws the newest view after it, so the end screen gets its sheet and dispute form
    else queue.redraw();
  }

  function showCaption(step) {
    const said = step && (step.event && step.event.text ? step.event : [...step.events].reverse().find((e) => e.text));
    if (said) caption.firstChild.textContent = said.text;
    caption.classList.toggle("live", Boolean(step));
    head.skip.hidden = !queue.busy();
  }

  // A step of the past where nobody is awaited (cards being revealed) says whom the table awaits now.
  function promptText(view, mine, latest) {
    if (view.status === "waiting") return t("table.seatsTaken", { n: view.players.length, taken: view.players.length, seats: view.seats });
    if (view.status === "finished") return t("table.gameOver");
    if (view.status === "closed") return t("table.closedByOperator");
    if (mine) return (mod.prompt && mod.prompt(view)) || t("table.yourTurn");
    const awaited = view.to_act.length || latest.status !== "playing" ? view.to_act : latest.to_act;
    if (view.seat !== null && awaited.includes(view.seat) && !takeoverOf(latest)) return t("table.yourTurn");
    const names = awaited.map((s) => playerName(view, s)).join(", ");
    return names ? t("table.waitingFor", { names }) : "";
  }

  // The header's controls live across drawings (an open settings menu stays open); a new language
  // builds them again.
  function buildHeader(view) {
    head.title = h("h1", {}, gameTitle(view.game));
    head.status = h("span", { class: "badge" });
    head.practice = h("span", { class: "badge", text: t("table.practice") });
    head.round = h("span", { class: "round" });
    head.rules = h("a", { class: "rules-link", href: `/rules/${view.game}`, target: "_blank", rel: "noopener", title: t("table.rulesHint"),
      "data-testid": "rules-link" }, h("span", { "aria-hidden": "true", text: "📖︎ " }), t("table.rules"));
    head.scores = h("button", { type: "button", class: "ghost small scores-toggle", "data-testid": "scores-toggle",
      "aria-controls": "players-panel", "aria-expanded": String(root.classList.contains("scores-open")), text: t("table.scoresToggle"),
      onclick: () => {
        const open = root.classList.toggle("scores-open");
        head.scores.setAttribute("aria-expanded", String(open));
      } });
    head.leave = h("button", { type: "button", class: "ghost small leave", "data-testid": "leave", text: t("table.leave"),
      onclick: (event) => dialog.open(event.currentTarget) });
    head.skip = h("button", { type: "button", class: "ghost small skip", "data-testid": "skip", text: t("table.skip"), hidden: true,
      onclick: () => queue.hurry() });
    mount(caption, h("span", { class: "now-text" }), head.skip);
    mount(header, head.title, head.status, head.practice, head.round,
      h("span", { class: "head-tools" }, head.rules, head.scores, chat.toggle, notifyButton(), settingsMenu(() => { if (speedFactor() === 0) queue.hurry(); }), head.leave));
    if (dialog) dialog.remove();
    dialog = leaveDialog(leave);
    if (alerts) alerts.close();
    alerts = turnAlerts({ banner: warning, gameTitle: gameTitle(view.game), id, base: baseTitle });
  }

  function drawStep(view, { step = null, ms = 0, collect = null } = {}) {
    const before = ms ? capture(root) : null;
    draw(view, step);
    if (ms) play(root, before, ms, { collect });
  }

  function draw(view, step = null) {
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    const typing = typed();
    const latest = queue.latest() || view;
    const takeover = takeoverOf(latest);
    // Only commands the newest view still allows are buttons: a step of the past shows the board
    // as it was, but a click always sends a move that is legal now.
    const allowed = sending || takeover || latest.version < answered ? new Set() : new Set((latest.legal || []).map(keyOf));
    const shown = { ...view, legal: (view.legal || []).filter((c) => allowed.has(keyOf(c))) };
    const mine = shown.legal.length > 0 && view.status === "playing";
    if (!head.title) buildHeader(view);
    root.dataset.shownStatus = view.status;
    head.status.className = `badge ${view.status}`;
    head.status.textContent = t("status." + view.status);
    head.practice.hidden = !view.practice;
    head.round.textContent = view.status !== "waiting" && mod.round ? mod.round(view) : "";
    head.leave.hidden = !(latest.seat !== null && latest.status === "playing" && !takeover);
    head.scores.hidden = view.status === "waiting";
    head.skip.hidden = !queue.busy();
    // The banner is built again only when its reason changes: its button stays under the pointer
    // (and keeps the focus) while the bot plays on.
    const why = latest.status !== "playing" ? null : leftSeat !== null ? "left" : takeover;
    root.classList.toggle("taken-over", Boolean(why));
    if (seatBanner.dataset.reason !== String(why)) {
      seatBanner.dataset.reason = String(why);
      mount(seatBanner, takeoverBanner(why, id, () => refresh(true)));
    }
    prompt.className = "prompt" + (mine ? " mine" : "");
    // The prompt is a live region: its words change only when what it says changes (a redraw per
    // step must not have a screen reader say it again).
    say(promptParts.watching, view.seat === null && view.status !== "waiting" ? t("table.spectating") : "");
    promptParts.watching.hidden = !promptParts.watching.textContent;
    say(promptParts.text, promptText(shown, mine, latest));
    if (!step) caption.classList.remove("live");
    if (step) showCaption(step);
    const actor = step ? actorOf(step.event) : null;
    patch(players, [h("h2", { text: t("table.scores") }), playersPanel(view, mod, { receivedAt, actor })]);
    if (view.status === "waiting") {
      patch(board, [h("span", { "data-slot": "prompt" }), waitingPanel(view, id, { joined, refresh })], { prompt });
      watchDock(null);
    } else {
      const parts = [];
      if (view.status === "finished") parts.push(endScreen(view, id, pad, mod));
      const game = mod.board(shown, { send, me: view.seat, name: (s) => playerName(view, s), step });
      for (const el of game.querySelectorAll(`[data-testid^="mat-"]`)) el.classList.toggle("actor", el.dataset.testid === `mat-${actor}`);
      parts.push(game);
      const dock = game.querySelector(".dock");
      const slot = h("span", { "data-slot": "prompt" });
      (dock || game).prepend(slot);
      if (view.status === "playing") slot.after(h("span", { "data-slot": "hint" }));
      if (!disputeEl && pad && view.status === "finished" && view.seat !== null) disputeEl = disputeForm(id, pad.rounds.length);
      patch(board, parts, disputeEl ? { prompt, hint: hintBox, dispute: disputeEl } : { prompt, hint: hintBox });
      watchDock(view.status === "playing" ? board.querySelector(".dock") : null);
      if (view.status === "playing") drawHint(latest, mine);
    }
    tickClock();
    retype(typing);
    if (focusKey) {
      const again = board.querySelector(`[data-key="${CSS.escape(focusKey)}"]`);
      if (again && !again.disabled) again.focus();
    }
  }

  // On a phone the dock (prompt, controls, hand) stays at the bottom of the screen: the page keeps
  // room for it below its content.
  function watchDock(dock) {
    if (dockSize) dockSize.disconnect();
    dockSize = null;
    root.classList.toggle("docked", Boolean(dock));
    if (!dock || typeof ResizeObserver === "undefined") return;
    dockSize = new ResizeObserver(() => document.documentElement.style.setProperty("--dock-h", `${Math.ceil(dock.offsetHeight)}px`));
    dockSize.observe(dock);
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
    const latest = queue.latest();
    const left = secondsLeft(latest && latest.clock, receivedAt);
    // a turn-based table's long clock in days, hours and minutes (time_left.js); seconds below an hour
    const words = left !== null && left >= LONG_CLOCK ? longTimeLeft(left) : t("table.timeLeft", { s: left });
    for (const el of document.querySelectorAll("[data-clock]")) say(el, "⏱ " + words); // drawn when it changes
    const playing = latest && latest.status === "playing";
    say(promptParts.clock, left !== null && playing ? "⏱ " + words : "");
    promptParts.clock.classList.toggle("urgent", left !== null && left <= 10);
    if (alerts && latest) {
      const mine = playing && latest.seat !== null && latest.to_act.includes(latest.seat) && !takeoverOf(latest) && latest.legal.length > 0;
      alerts.update(mine, left, latest.clock);
    }
  }

  // Leaving ends the seat's token (the server drops its cookie): from now on this page watches,
  // on a stream opened again without the seat.
  async function leave() {
    try {
      const seat = queue.latest().seat;
      await games.leave(id);
      leftSeat = seat;
      await joined();
    } catch (error) {
      toast(error instanceof ApiError && error.status === 404 ? t("lobby.botsMissing") : error.message);
    }
  }

  loadGames().catch(() => null); // asked beside the view; loadGame below says if it failed
  let first;
  try {
    first = await games.view(id);
  } catch (error) {
    mount(main, h("p", { class: "panel", text: error.status === 404 ? t("table.notFound") : error.message }));
    return null;
  }
  try {
    mod = await loadGame(first.game); // its own board module, else the default board (game_board.js)
  } catch (error) {
    mount(main, h("p", { class: "panel", text: error instanceof ApiError ? error.message : t("err.network") }));
    if (!(error instanceof ApiError) && typeof reportError === "function") reportError(error);
    return null;
  }
  show(first);
  if (first.status !== "finished") live.open();
  clockTimer = setInterval(tickClock, 250);
  const off = onLangChange(() => {
    logBox.querySelector("h2").textContent = t("table.log");
    chat.relabel();
    head.title = null; // built again in the new language by the next drawing
    delete seatBanner.dataset.reason;
    if (disputeEl) disputeEl.relabel(); // what was chosen and typed stays
    queue.relog().catch(failed);
  });
  const offAccount = onAccountChange(() => { const v = queue.shown(); if (v && v.status === "waiting") draw(v); }); // the join form
  return () => {
    closed = true;
    queue.close();
    off();
    offAccount();
    uninstallHelp();
    if (alerts) alerts.close();
    if (dialog) dialog.remove();
    if (dockSize) dockSize.disconnect();
    document.documentElement.style.removeProperty("--dock-h");
    clearInterval(clockTimer);
    live.close();
    chat.close();
  };
}
