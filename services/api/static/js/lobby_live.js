// The lobby's tables, live: a server-sent stream (GET /lobby/live) instead of polling. It starts
// with the whole lobby ("lobby") and then sends each table whose summary changed ("table"); every
// reconnection starts with the whole lobby again. A stream the server refuses or ends for good
// (429 or 503 while busy or restarting, after which EventSource gives up) is replaced by one
// re-read of GET /games and a new stream after a growing delay.
import { games } from "./api.js";

const LIMIT = 100; // tables kept, as the server's whole-lobby message
const GONE = new Set(["finished", "expired", "closed"]); // a table in these states leaves the lobby

/** Call onLobby({ games }) with the lobby's open and running tables, newest first (those of
 *  established players, "first": true, before the others), at once and on every change (several
 *  changes arriving together make one call). Returns the function that stops. */
export function followLobby(onLobby) {
  let tables = [];
  let source = null;
  let retry = null;
  let delay = 1000;
  let pending = null;
  let stopped = false;

  function publish() {
    if (pending !== null || stopped) return;
    pending = setTimeout(() => {
      pending = null;
      if (!stopped) onLobby({ games: tables.slice() });
    }, 50);
  }

  function replace(list) {
    tables = list.filter((g) => !GONE.has(g.status)).slice(0, LIMIT);
    publish();
  }

  function apply(entry) {
    const at = tables.findIndex((g) => g.game_id === entry.game_id);
    if (at >= 0 && tables[at].version > entry.version) return; // older than what is shown
    if (GONE.has(entry.status)) {
      if (at >= 0) tables.splice(at, 1);
    } else if (at >= 0) {
      tables[at] = entry;
    } else {
      // a new table: the newest of its part (the tables of established players come first)
      const part = entry.first ? 0 : tables.findIndex((g) => !g.first);
      tables.splice(part < 0 ? tables.length : part, 0, entry);
      tables.length = Math.min(tables.length, LIMIT);
    }
    publish();
  }

  async function reread() {
    try {
      replace((await games.lobby()).games);
    } catch { /* the next stream brings the lobby */ }
  }

  function open() {
    if (stopped) return;
    source = new EventSource("/lobby/live");
    source.addEventListener("lobby", (event) => {
      delay = 1000;
      replace(JSON.parse(event.data).games);
    });
    source.addEventListener("table", (event) => apply(JSON.parse(event.data)));
    source.addEventListener("error", () => {
      if (source.readyState !== EventSource.CLOSED) return; // reconnecting by itself
      source.close();
      reread();
      retry = setTimeout(open, delay);
      delay = Math.min(delay * 2, 30000);
    });
  }

  open();
  return () => {
    stopped = true;
    clearTimeout(retry);
    clearTimeout(pending);
    if (source) source.close();
  };
}
