// The change queue: between the view a player last saw and the newest one the server sent, every
// move is drawn in turn, at a pace a person can follow. The table's events say what happened (with
// the narrated sentence and who did it); the view as it was at each move comes from the server's
// time travel (`view?at=v`, the seat's own view then), since a live stream may skip versions.
// The queue reports what it showed on the table's root: `data-shown-version` and `data-played`
// (one `version:type:seat` per event shown, oldest first), so that tests can follow it.
import { api, games } from "./api.js";

// The table's own events (domain/table.py) at their pace: bookkeeping without anything to look at is
// folded into the step that follows it; the end of a game is held long enough to read. A game's
// events are paced by its board module (``pace``, js/games/<package>.js); any event neither names
// is a move.
const SILENT = new Set(["table_created", "table_timers_set", "seed_revealed", "seed_chain_committed", "seat_claimed"]);
const HOLD = new Set(["game_finished"]);
const BASE_MS = { move: 650, hold: 1600 };
const MOTION_MS = 520; // a slide never takes longer than this at normal speed, however long the step
const MOST_STEPS = 24; // a longer backlog (a tab that slept) shows only its last steps
const LAST_STEPS = 6;
const PLAYED_KEPT = 600;

export const SPEEDS = { slow: 1.7, normal: 1, fast: 0.45, instant: 0 };

/** How a step of ``event`` is drawn: "silent", "hold" (a result a person needs time to read) or
 * "move". ``pace`` is the board module's: {silent, hold} sets of its game's event types. */
function kindOf(event, pace) {
  if (SILENT.has(event.type) || pace?.silent?.has(event.type)) return "silent";
  return HOLD.has(event.type) || pace?.hold?.has(event.type) ? "hold" : "move";
}

/** The seat an event is about: who acted, who won, whose stack or row it is. */
export function actorOf(event) {
  if (!event) return null;
  for (const field of ["seat", "winner", "dealer"]) if (Number.isInteger(event[field])) return event[field];
  return null;
}

/** Steps from the events after the shown version up to the target: one per event worth a look, the
 * silent ones folded into the next (or, at the end, the last) step. */
export function plan(events, pace = null) {
  const steps = [];
  let carried = [];
  for (const event of events) {
    const kind = kindOf(event, pace);
    if (kind === "silent") {
      carried.push(event);
      continue;
    }
    steps.push({ version: event.version, kind, event, events: [...carried, event] });
    carried = [];
  }
  if (carried.length) {
    const last = steps[steps.length - 1];
    if (last) last.events.push(...carried);
    else steps.push({ version: carried[carried.length - 1].version, kind: "silent", event: null, events: carried });
  }
  return steps;
}

/**
 * @param {object} o
 * @param {string} o.id the table
 * @param {HTMLElement} o.root where the report goes
 * @param {(view: object, how: object) => void} o.draw draws a view; ``how`` = {step, ms, collect}
 * @param {(step: object) => number} o.before marks the drawing in place before a step (a row about
 *   to be taken); returns the part of the step to wait before drawing it (0..1)
 * @param {{append: Function, reset: Function, logged: Function}} o.log
 * @param {() => number} o.factor the speed factor now (0: instant)
 * @param {() => ?{silent?: Set<string>, hold?: Set<string>, collector?: (event: object) => ?number}} o.pace
 *   the board module's pace of its game's events, asked when a run plans its steps
 */
export function changeQueue({ id, root, draw, tell, before, log, factor, pace = () => null }) {
  let latest = null;
  let drawn = null; // the view drawn last: not drawn twice over
  let stale = false; // the newest view must be drawn again (a command refused or answered meanwhile)
  let shown = null;
  let running = false;
  let restart = true; // the next run draws at once and reads the whole log (first view, new seat, language)
  let closed = false;
  let wake = null; // resolves the pause in progress early
  let skipping = false; // the player asked to see the newest view now
  const played = [];

  function pause(ms) {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => { wake = null; resolve(); }, ms);
      wake = () => { clearTimeout(timer); wake = null; resolve(); };
    });
  }

  async function eventsUpTo(version) {
    const all = [];
    let after = log.logged();
    while (after < version) {
      const page = await games.events(id, after);
      const fresh = page.events.filter((e) => e.version > after && e.version <= version);
      if (!fresh.length) break;
      all.push(...fresh);
      after = fresh[fresh.length - 1].version;
    }
    return all;
  }

  function report(events, target, jumped = false) {
    for (const event of events) played.push(`${event.version}:${event.type}:${actorOf(event) ?? ""}` + (jumped ? ":j" : ""));
    if (played.length > PLAYED_KEPT) played.splice(0, played.length - PLAYED_KEPT);
    root.dataset.played = played.join(" ");
    root.dataset.shownVersion = String(target.version);
  }

  // The view a step draws: as it was after the step's last event (a silent one after its move
  // changes nothing to look at, and may be what makes the controls come: the newest view then).
  function viewAt(step, target) {
    const at = step.events[step.events.length - 1].version;
    if (at >= target.version) return Promise.resolve(target);
    return api(`/games/${id}/view?at=${at}`).catch(() => null);
  }

  // How long a step takes against normal speed: instant when hidden or skipped, faster when far behind.
  function speed(behind) {
    if (document.hidden || skipping) return 0;
    let f = factor();
    if (behind > 8) f *= 0.5;
    return f;
  }

  function paint(view, how = { step: null, ms: 0 }) {
    drawn = view;
    if (view === latest) stale = false;
    draw(view, how);
  }

  function sayLast(events) {
    const said = events.filter((e) => e.text).pop();
    if (said) tell(said.text);
  }

  // The first view, a new seat or a new language: drawn at once, then the whole log read again.
  async function catchUp(target) {
    shown = target;
    paint(target);
    log.reset();
    const events = await eventsUpTo(target.version);
    log.append(events);
    sayLast(events);
    report(events, target, true);
  }

  async function advance(target) {
    const paced = pace();
    const steps = plan(await eventsUpTo(target.version), paced);
    const jump = speed(steps.length) === 0 ? steps.length : steps.length > MOST_STEPS ? steps.length - LAST_STEPS : 0;
    for (const step of steps.slice(0, jump)) log.append(step.events);
    if (jump) report(steps.slice(0, jump).flatMap((s) => s.events), shown, true);
    const rest = steps.slice(jump);
    const views = rest.map((step) => viewAt(step, target)); // fetched together, drawn in turn
    for (let i = 0; i < rest.length; i++) {
      const step = rest[i];
      const behind = rest.length - i - 1 + Math.max(0, latest.version - target.version);
      const ms = Math.round(BASE_MS[step.kind === "hold" ? "hold" : "move"] * speed(behind));
      const view = (await views[i]) || (i === rest.length - 1 ? target : null);
      if (closed || restart) return;
      let waited = 0;
      if (ms && step.event) {
        waited = Math.round(ms * before(step));
        await pause(waited);
      }
      if (view) {
        paint(view, { step, ms: Math.min(ms, Math.round(MOTION_MS * Math.max(speed(behind), 0.4))), collect: collectorOf(step, paced) });
        shown = view;
      }
      log.append(step.events);
      report(step.events, view || shown);
      await pause(ms - waited);
    }
    if (drawn !== target || stale) paint(target);
    if (!rest.length) sayLast(steps.flatMap((step) => step.events));
    shown = target;
    report([], target);
  }

  async function run() {
    if (running) return;
    running = true;
    try {
      while (!closed && latest && (restart || !shown || shown.version < latest.version)) {
        const target = latest;
        if (restart || !shown) {
          restart = false;
          await catchUp(target);
        } else {
          await advance(target);
        }
      }
    } catch (error) {
      // A page of events that failed to load: show the newest view as it is; the log catches up on
      // the next change (it reads from the last line it holds).
      if (latest && !closed) {
        shown = latest;
        paint(latest);
        report([], latest);
      }
      throw error;
    } finally {
      running = false;
      skipping = false;
    }
  }

  return {
    /** A newer view from the server (stream, command answer or reload). */
    push(view, { fresh = false } = {}) {
      if (fresh || (latest && latest.seat !== view.seat)) restart = true;
      latest = view;
      // Nothing to animate: the newest view is drawn at once, as it arrives; the run below only
      // brings the log along.
      if (!restart && shown && speed(0) === 0) paint(view);
      return run();
    },
    /** Draw the newest view again (a refused command: its control comes back) if nothing plays. */
    redraw() {
      if (!latest) return;
      if (!running || drawn === latest) paint(latest);
      else stale = true; // a step of the past is on screen: the newest view comes after it
    },
    /** Read the whole log again (a new language) and show the newest view. */
    relog() {
      restart = true;
      if (wake) wake();
      return run();
    },
    /** Show the newest view now: the steps left are drawn at once. */
    hurry() {
      skipping = running;
      if (wake) wake();
    },
    busy: () => running && shown && latest && shown.version < latest.version,
    latest: () => latest,
    shown: () => shown,
    close() {
      closed = true;
      if (wake) wake();
    },
  };
}

/** The seat whose pile a step's cards slide to (a row taken, a trick won), as the board module says. */
function collectorOf(step, pace) {
  return step.event && pace?.collector ? pace.collector(step.event) ?? null : null;
}
