// The replay viewer of a finished game: every version, everything revealed. Steps one version at a
// time, by trick or turn (Skull: by phase), by round, or through the moves of one seat (this
// browser's own by default), and plays itself at a chosen speed. The table of contents comes from
// GET /games/{id}/replay/index; each version's views and narrated event from GET /games/{id}/replay.
import { disputeForm } from "./dispute_form.js";
import { api, games } from "./api.js";
import { has, lang, t, onLangChange } from "./i18n.js";
import { gameTitle } from "./game_info.js";
import { loadGame } from "./game_board.js";
import { h, mount, store } from "./ui.js";
import { playersPanel } from "./table_players.js";
import { replayChat } from "./table_chat.js";

const SPEEDS = [0.5, 1, 2, 4, 8];
const STEP_MS = 1200; // one version per 1.2 s at 1x: time to read its sentence
const SPEED_KEY = "tablestream.replaySpeed";
const KEPT = 64; // versions kept in memory: stepping back and forth costs no request

/** The span of `spans` (sorted, contiguous {start, end}) holding version `v`. */
export function spanAt(spans, v) {
  let low = 0;
  let high = spans.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (spans[mid].start <= v) low = mid;
    else high = mid - 1;
  }
  return spans[low];
}

/** Where "next" goes: the start of the first span after the one holding `v` (null at the last). */
export function nextStart(spans, v) {
  const next = spans.find((s) => s.start > v);
  return next ? next.start : null;
}

/** Where "previous" goes, as on a music player: the start of the span holding `v`, or of the one
 * before it when `v` is already its start. */
export function prevStart(spans, v) {
  const here = spanAt(spans, v);
  if (here.start < v) return here.start;
  const index = spans.indexOf(here);
  return index > 0 ? spans[index - 1].start : null;
}

/** Several boards share the replay page: give the ids of one (and every reference to them) a suffix,
 * and name its labelled regions after its heading, so that ids and landmarks stay unique. */
function ownIds(panel, suffix, heading) {
  const renamed = new Map();
  for (const el of panel.querySelectorAll("[id]")) {
    if (el === heading) continue;
    renamed.set(el.id, `${el.id}-${suffix}`);
    el.id = `${el.id}-${suffix}`;
  }
  for (const attr of ["aria-labelledby", "aria-describedby", "aria-controls", "for"]) {
    for (const el of panel.querySelectorAll(`[${attr}]`)) {
      const refs = el.getAttribute(attr).split(/\s+/).map((ref) => renamed.get(ref) || ref);
      if (attr === "aria-labelledby" && el.matches("section, [role=region]")) refs.unshift(heading.id);
      el.setAttribute(attr, refs.join(" "));
    }
  }
}

export async function render(main, id) {
  let index = null;
  let mod = null;
  let at = 1;
  let current = null;
  let wanted = 0;
  let follow = null;
  let playing = false;
  let timer = null;
  let speed = SPEEDS.includes(store(SPEED_KEY)) ? store(SPEED_KEY) : 2;
  const kept = new Map();
  // Where the replay is going: the version asked for last, drawn or still loading. A control that
  // moves relative to the position steps from there, so that clicks quicker than the server each
  // count (five clicks on "next step" are five steps, not five times the step after the one drawn).
  const aim = () => wanted || at;

  const control = (testid, icon, onclick, keys, cls = "") => h("button", {
    type: "button", class: `ctl ${cls}`.trim(), "data-testid": testid, "aria-keyshortcuts": keys, onclick },
  h("span", { class: "icon", "aria-hidden": "true", text: icon }), h("span", { class: "lbl" }));
  const buttons = {
    first: control("first", "⇤", () => go(1), "Home", "iconic"),
    prevRound: control("prev-round", "⇇", () => jump(prevStart(index.rounds, aim())), "PageUp"),
    prevStep: control("prev-step", "«", () => jump(prevStart(index.steps, aim())), "Shift+ArrowLeft"),
    prev: control("prev", "‹", () => go(aim() - 1), "ArrowLeft", "iconic"),
    play: control("play", "▶\uFE0E", () => (playing ? pause() : play()), "Space", "primary"),
    next: control("next", "›", () => go(aim() + 1), "ArrowRight", "iconic"),
    nextStep: control("next-step", "»", () => jump(nextStart(index.steps, aim())), "Shift+ArrowRight"),
    nextRound: control("next-round", "⇉", () => jump(nextStart(index.rounds, aim())), "PageDown"),
    last: control("last", "⇥", () => go(index.head), "End", "iconic"),
    prevMove: control("prev-move", "‹", () => jump(moveBefore()), "Shift+M", "iconic"),
    nextMove: control("next-move", "›", () => jump(moveAfter()), "M", "iconic"),
  };
  const slider = h("input", { type: "range", id: "replay-scrub", min: 1, max: 1, value: 1, list: "replay-rounds",
    "data-testid": "scrub" });
  slider.addEventListener("input", () => go(Number(slider.value)));
  const ticks = h("datalist", { id: "replay-rounds" });
  const strip = h("div", { class: "replay-strip", "aria-hidden": "true" });
  const where = h("p", { class: "where", "data-testid": "where" });
  const pos = h("span", { class: "pos", "data-testid": "position" });
  const said = h("div", { class: "said" });
  const moveChip = h("span", { class: "move-chip", "data-testid": "move-chip" });
  const followSelect = h("select", { id: "replay-follow", "data-testid": "follow" });
  followSelect.addEventListener("change", () => { follow = Number(followSelect.value); drawFollow(); drawStage(); });
  const movePos = h("span", { class: "move-pos", "data-testid": "move-position" });
  const speedSelect = h("select", { id: "replay-speed", "data-testid": "speed" },
    SPEEDS.map((s) => h("option", { value: String(s) })));
  speedSelect.value = String(speed);
  speedSelect.addEventListener("change", () => { speed = Number(speedSelect.value); store(SPEED_KEY, speed); schedule(); });
  const labels = {
    scrub: h("label", { for: "replay-scrub", class: "sr-only" }),
    follow: h("label", { for: "replay-follow" }),
    speed: h("label", { for: "replay-speed" }),
  };
  const title = h("h1");
  const back = h("a", { class: "button small ghost", href: `/tables/${id}`, "data-nav": "", text: "↩" });
  const hint = h("p", { class: "muted hint" });
  const links = h("p", { class: "actions left" });
  const stage = h("div", { class: "replay-stage" });
  const groups = {
    transport: h("div", { class: "replay-bar", role: "group" }, buttons.first, buttons.prevRound, buttons.prevStep,
      buttons.prev, buttons.play, buttons.next, buttons.nextStep, buttons.nextRound, buttons.last),
    moves: h("div", { class: "replay-follow", role: "group" }, labels.follow, followSelect, buttons.prevMove, movePos,
      buttons.nextMove, h("span", { class: "spacer" }), labels.speed, speedSelect),
  };
  const deck = h("section", { class: "panel replay-deck" },
    h("div", { class: "replay-now", "aria-live": "polite", "aria-atomic": "true" },
      h("div", { class: "now-head" }, where, pos), said, moveChip),
    groups.transport,
    h("div", { class: "replay-scrubber" }, labels.scrub, slider, ticks, strip),
    groups.moves, hint, links);
  const chat = replayChat(id); // the table's chat, each message at the version it was sent (table_chat.js)
  // The strong bot's review of the followed seat's moves (GET /games/{id}/review, built by a job).
  const review = { seat: null, data: null, timer: null };
  const reviewBody = h("div", { class: "review-body" });
  const reviewPanel = h("section", { class: "panel review", "data-testid": "review", "aria-labelledby": "review-title" },
    h("div", { class: "review-head" }, h("h2", { id: "review-title" })), reviewBody);
  const usedHints = h("p", { class: "muted hints-used", "data-testid": "replay-hints-used", hidden: true });
  const root = h("div", { class: "replay", "data-testid": "replay", "data-playing": "false" },
    h("div", { class: "table-head" }, title, back), usedHints, deck, reviewPanel, chat.panel, stage);

  function game() {
    return index.game;
  }

  /** The game's own word for its steps ("Previous trick"), from its glossary; else the common one. */
  function gameWord(part) {
    const own = `replay.${game()}.${part}`;
    return t(has(own) ? own : `replay.${part}`);
  }

  function nameOf(seat) {
    const player = index.players.find((p) => p.seat === seat);
    return player ? player.name : t("table.seat", { n: seat + 1 });
  }

  function whereLabel(v) {
    const step = spanAt(index.steps, v);
    const where = `replay.where.${step.kind}`; // a kind of step the common words lack: said generically
    return t(has(where) ? where : "replay.where.step", { r: step.round, n: step.n });
  }

  function followed() {
    return index.moves.filter((m) => m.seat === follow);
  }

  function moveBefore() {
    const earlier = followed().filter((m) => m.version < at);
    return earlier.length ? earlier[earlier.length - 1].version : null;
  }

  function moveAfter() {
    const later = followed().find((m) => m.version > at);
    return later ? later.version : null;
  }

  function relabel() {
    const set = (button, text) => { button.querySelector(".lbl").textContent = text; button.title = text; };
    set(buttons.first, t("replay.first"));
    set(buttons.prevRound, t("replay.prevRound"));
    set(buttons.prevStep, gameWord("prevStep"));
    set(buttons.prev, t("replay.prev"));
    set(buttons.play, playing ? t("replay.pause") : t("replay.play"));
    buttons.play.querySelector(".icon").textContent = playing ? "❚❚" : "▶\uFE0E";
    set(buttons.next, t("replay.next"));
    set(buttons.nextStep, gameWord("nextStep"));
    set(buttons.nextRound, t("replay.nextRound"));
    set(buttons.last, t("replay.last"));
    set(buttons.prevMove, t("replay.prevMove"));
    set(buttons.nextMove, t("replay.nextMove"));
    title.textContent = `${t("replay.title")} · ${gameTitle(game())}`;
    back.setAttribute("aria-label", t("replay.toTable"));
    back.title = t("replay.toTable");
    labels.scrub.textContent = t("replay.timeline");
    labels.follow.textContent = t("replay.follow");
    labels.speed.textContent = t("replay.speed");
    groups.transport.setAttribute("aria-label", t("replay.controls"));
    groups.moves.setAttribute("aria-label", t("replay.follow"));
    hint.textContent = t("replay.keys", { unit: gameWord("unit") });
    mount(followSelect, index.players.map((p) => h("option", { value: String(p.seat),
      text: `${p.seat === index.you ? t("replay.you", { name: p.name }) : p.name} · ${t("replay.moves",
        { n: index.moves.filter((m) => m.seat === p.seat).length })}` })));
    followSelect.value = String(follow);
    const number = new Intl.NumberFormat(lang());
    for (const option of speedSelect.options) option.textContent = `${number.format(Number(option.value))}×`;
  }

  function drawStrip() {
    const span = Math.max(1, index.head - 1);
    const at_ = (v) => `${((v - 1) / span) * 100}%`;
    mount(ticks, index.rounds.filter((r) => r.round > 0).map((r) => h("option", { value: String(r.start) })));
    mount(strip,
      index.rounds.filter((r) => r.round > 0).map((r) => h("span", { class: `seg ${r.round % 2 ? "odd" : "even"}`,
        style: `left:${at_(r.start)};width:calc(${at_(r.end + 1)} - ${at_(r.start)})` })),
      followed().map((m) => h("span", { class: "tick", style: `left:${at_(m.version)}` })));
  }

  async function loadReview(seat, tries = 60) {
    clearTimeout(review.timer);
    if (review.seat !== seat) review.data = null;
    review.seat = seat;
    drawReview();
    let answer = null;
    try {
      answer = await games.review(id, seat);
    } catch (error) {
      if (review.seat === seat) mount(reviewBody, h("p", { class: "muted", text: error.message }));
      return;
    }
    if (review.seat !== seat) return; // the followed seat changed meanwhile
    if (answer.status === "computing") {
      if (tries > 1) review.timer = setTimeout(() => loadReview(seat, tries - 1), (answer.retry_after || 2) * 1000);
      return;
    }
    review.data = answer;
    drawReview();
  }

  function drawReview() {
    reviewPanel.querySelector("h2").textContent = t("replay.review");
    const data = review.data;
    if (!data) {
      mount(reviewBody, h("p", { class: "muted", "data-testid": "review-working", text: t("replay.reviewWorking") }));
      return;
    }
    const same = data.moves.length - data.differs;
    mount(reviewBody,
      h("p", { "data-testid": "review-summary", text: t("replay.reviewSummary", { same, total: data.moves.length }) }),
      h("ol", { class: "review-moves" }, data.moves.map((move) => h("li", {
        class: (move.differs ? "differs" : "same") + (move.version === at ? " current" : ""),
        "data-testid": "review-move", "data-version": String(move.version), "data-differs": String(move.differs) },
      h("a", { href: `#v=${move.version}`, onclick: (event) => { event.preventDefault(); jump(move.version); },
        text: `${whereLabel(move.version)}: ${move.played_text}` }),
      " — ",
      move.differs
        ? h("span", { class: "review-mark", title: t("replay.reviewMark"), text: "⚑︎ " + t("replay.reviewDiffers", { move: move.strong_text }) })
        : h("span", { class: "muted", text: t("replay.reviewSame") }),
      move.differs || move.shares.length > 1
        ? h("ul", { class: "shares" }, move.shares.slice(0, 4).map((share) => h("li", {
          text: t("replay.reviewShare", { move: share.text, share: Math.round(share.share * 100) })
            + (JSON.stringify(share.command) === JSON.stringify(move.played) ? ` (${t("replay.reviewPlayed")})` : "") })))
        : null))));
  }

  function drawFollow() {
    const mine = followed();
    const done = mine.filter((m) => m.version <= at).length;
    movePos.textContent = done ? t("replay.moveOf", { i: done, n: mine.length }) : t("replay.moves", { n: mine.length });
    buttons.prevMove.disabled = moveBefore() === null;
    buttons.nextMove.disabled = moveAfter() === null;
    const move = index.moves.find((m) => m.version === at);
    moveChip.hidden = !move;
    moveChip.className = "move-chip" + (move && move.seat === follow ? " followed" : "");
    if (move) moveChip.textContent = t(`replay.movedBy.${move.by}`, { name: nameOf(move.seat) });
    const reviewed = review.data && move && move.seat === review.seat ? review.data.moves.find((m) => m.version === at) : null;
    if (reviewed && reviewed.differs) moveChip.textContent += ` · ⚑︎ ${t("replay.reviewMark")}`;
    if (review.seat !== follow && index.players.length) loadReview(follow);
    else if (review.data) for (const li of reviewBody.querySelectorAll("[data-version]")) li.classList.toggle("current", Number(li.dataset.version) === at);
    drawStrip();
  }

  function drawControls() {
    slider.max = String(index.head);
    slider.value = String(at);
    const place = whereLabel(at);
    slider.setAttribute("aria-valuetext", `${place}, ${t("replay.version", { v: at, head: index.head })}`);
    where.textContent = place;
    pos.textContent = t("replay.version", { v: at, head: index.head });
    root.dataset.version = String(at);
    buttons.first.disabled = buttons.prev.disabled = at <= 1;
    buttons.next.disabled = buttons.last.disabled = at >= index.head;
    buttons.prevRound.disabled = prevStart(index.rounds, at) === null;
    buttons.nextRound.disabled = nextStart(index.rounds, at) === null;
    buttons.prevStep.disabled = prevStart(index.steps, at) === null;
    buttons.nextStep.disabled = nextStart(index.steps, at) === null;
    mount(said, current.events.map((e) => h("p", { class: "replay-event", "data-testid": "replay-event",
      text: e.text || whereLabel(e.version) })));
    chat.draw(at);
    drawFollow();
  }

  function drawStage() {
    const data = current;
    const spectator = data.spectator;
    const rounds = Object.keys(spectator.fairness.revealed_seeds || {}).map(Number);
    const roundNow = spectator.round || 1;
    mount(links, h("a", { href: `/audit/${id}#round-${roundNow}`, "data-nav": "", "data-testid": "audit-link",
      text: t("replay.auditRound", { n: roundNow }) }),
    rounds.filter((r) => r !== roundNow).map((r) => h("a", { href: `/audit/${id}#round-${r}`, "data-nav": "",
      class: "muted", "aria-label": t("replay.auditRound", { n: r }), text: `#${r}` })));
    const ctx = (view) => ({ send: () => {}, me: view.seat, name: nameOf });
    const frozen = (view) => ({ ...view, legal: [] });
    if (spectator.status === "waiting") {
      mount(stage, h("div", { class: "panel muted", text: t("status.waiting") }));
      return;
    }
    mount(stage,
      h("div", { class: "table-grid" }, mod.board(frozen(spectator), ctx(spectator)),
        h("div", { class: "side" }, h("section", { class: "panel" }, h("h2", { text: t("table.scores") }),
          playersPanel(spectator, mod, { interactive: false })))),
      h("section", { class: "seat-views-wrap", "aria-labelledby": "replay-hands" },
        h("h2", { id: "replay-hands", text: t("replay.hands") }),
        h("div", { class: "seat-views" }, data.seats.map((view) => seatPanel(view, ctx, frozen)))));
  }

  function seatPanel(view, ctx, frozen) {
    const name = t("replay.seatView", { name: nameOf(view.seat) });
    const heading = h("h3", { id: `replay-seat-${view.seat}`,
      text: view.seat === index.you ? t("replay.you", { name }) : name });
    const panel = h("section", { class: "panel" + (view.seat === follow ? " followed" : ""), "data-seat": view.seat },
      heading, mod.board(frozen(view), ctx(view)));
    ownIds(panel, `seat-${view.seat}`, heading);
    return panel;
  }

  function draw() {
    drawControls();
    drawStage();
  }

  async function fetchAt(v) {
    if (kept.has(v)) return kept.get(v);
    const data = await games.replay(id, v);
    kept.set(v, data);
    if (kept.size > KEPT) kept.delete(kept.keys().next().value);
    return data;
  }

  function showError(error) {
    mount(stage, h("p", { class: "panel", role: "alert",
      text: error.code === "game_not_finished" ? t("replay.notFinished") : error.message }));
  }

  async function go(target, remember = true) {
    if (!index) return;
    target = Math.max(1, Math.min(index.head, target));
    wanted = target;
    let data;
    try {
      data = await fetchAt(target);
    } catch (error) {
      if (wanted === target) wanted = at; // the step that failed is not where the replay is going
      pause();
      showError(error);
      return;
    }
    if (wanted !== target) return; // a newer step was asked for meanwhile
    current = data;
    at = target;
    draw();
    if (remember) history.replaceState(history.state, "", `#v=${at}`);
    if (playing && at >= index.head) pause();
    else if (playing) { fetchAt(at + 1).catch(() => {}); schedule(); }
  }

  function jump(target) {
    if (target !== null) go(target);
  }

  function schedule() {
    clearTimeout(timer);
    if (playing) timer = setTimeout(() => go(at + 1), STEP_MS / speed);
  }

  function play() {
    playing = true;
    root.dataset.playing = "true";
    relabel();
    if (at >= index.head) go(1);
    else schedule();
  }

  function pause() {
    clearTimeout(timer);
    if (!playing) return;
    playing = false;
    root.dataset.playing = "false";
    if (index) relabel();
  }

  function onKey(event) {
    const target = event.target;
    if (event.ctrlKey || event.metaKey || event.altKey || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName)) return;
    const key = event.key;
    const act = {
      ArrowRight: () => (event.shiftKey ? buttons.nextStep : buttons.next).click(),
      ArrowLeft: () => (event.shiftKey ? buttons.prevStep : buttons.prev).click(),
      PageDown: () => buttons.nextRound.click(),
      PageUp: () => buttons.prevRound.click(),
      Home: () => go(1),
      End: () => go(index.head),
      m: () => buttons.nextMove.click(),
      M: () => buttons.prevMove.click(),
      " ": () => buttons.play.click(),
    }[key];
    // Space and Enter on a focused button or link press it: leave them to the browser.
    if (!act || (key === " " && ["BUTTON", "A"].includes(target.tagName))) return;
    event.preventDefault();
    act();
  }

  mount(main, root);
  mount(stage, h("p", { text: t("common.loading") }));
  let first;
  const asked = Number((location.hash.match(/^#v=(\d+)$/) || [])[1]) || 1;
  try {
    [index, first] = await Promise.all([api(`/games/${id}/replay/index`), games.replay(id, asked)]);
  } catch (error) {
    if (error.code === "invalid_query" && asked !== 1) {
      history.replaceState(history.state, "", location.pathname);
      return render(main, id); // a stale #v= link: start from the beginning
    }
    showError(error);
    return null;
  }
  try {
    mod = await loadGame(index.game); // its own board module, else the default board (game_board.js)
  } catch (error) {
    showError(error);
    return null;
  }
  follow = index.you ?? 0;
  const dispute = index.you !== null && index.you !== undefined // a seated player may dispute a round (dispute_form.js)
    ? disputeForm(id, index.rounds.filter((r) => r.round > 0).length) : null;
  if (dispute) root.append(dispute);
  usedHints.textContent = t("replay.hintsUsed");
  games.view(id).then((end) => { usedHints.hidden = !(end.hints_used || []).length; }, () => {}); // the seats that asked, by the end
  current = first;
  at = first.version;
  kept.set(at, first);
  relabel();
  draw();
  chat.load().catch(() => {}); // a replay without its chat is still the game's replay
  document.addEventListener("keydown", onKey);
  const off = onLangChange(() => {
    kept.clear();
    relabel();
    go(at, false);
    usedHints.textContent = t("replay.hintsUsed");
    review.seat = null;
    if (dispute) dispute.relabel();
  });
  return () => { pause(); clearTimeout(review.timer); review.seat = -1; document.removeEventListener("keydown", onKey); off(); };
}
