// "Your tables", live on every page: a server-sent stream (GET /me/live) sends the list of the
// tables where you have a seat whenever it changes (a move, a timeout, a join; no polling). From it
// the header's link counts the tables awaiting your move, the tab's title says so, and, if you
// switched the table's notifications on, a browser notification tells you while the tab is hidden.
// A stream the server refuses or ends for good is opened again after a growing delay.
import { t, onLangChange } from "./i18n.js";
import { gameTitle } from "./game_info.js";
import { onAccountChange } from "./account.js";
import { store } from "./ui.js";

const NOTIFY = "tablestream.notify"; // the table's own notification setting (table_alerts.js)

let listing = null; // the newest list: { tables, awaiting, now_ms, account }
const listeners = new Set();
let source = null;
let retry = null;
let delay = 1000;
let notified = new Set(); // tables already announced while they await you
let shownTitle = null; // the title this module set last
let baseTitle = document.title;

/** The newest list (null until the first message). */
export function tables() {
  return listing;
}

/** Call listener(list) now (when known) and on every change; returns the function that stops. */
export function onTables(listener) {
  listeners.add(listener);
  if (listing) listener(listing);
  return () => listeners.delete(listener);
}

/** Read the list again at once (after a join or a login: the stream's cookies were those it opened with). */
export function refreshTables() {
  open();
}

function notifications() {
  return Boolean(store(NOTIFY)) && typeof Notification !== "undefined" && Notification.permission === "granted";
}

function announce(list) {
  const awaiting = list.tables.filter((table) => table.awaiting);
  const now = new Set(awaiting.map((table) => table.game_id));
  if (notifications() && document.hidden) {
    for (const table of awaiting) {
      if (notified.has(table.game_id)) continue;
      try {
        const note = new Notification(t("mine.notifyTitle"), {
          body: t("mine.notifyBody", { game: gameTitle(table.game) }), tag: `tablestream-${table.game_id}` });
        note.onclick = () => { window.focus(); note.close(); };
      } catch { /* some browsers allow notifications only from a service worker */ }
    }
  }
  notified = now;
}

/** Tables awaiting you besides the one this page shows (a table's page says so in its own title). */
function awaitingElsewhere() {
  if (!listing) return 0;
  const shown = location.pathname.match(/^\/tables\/([A-Za-z0-9_-]+)$/);
  return listing.tables.filter((table) => table.awaiting && !(shown && shown[1] === table.game_id)).length;
}

function drawTitle() {
  if (document.title !== shownTitle) baseTitle = document.title; // a page set its own title meanwhile
  const n = awaitingElsewhere();
  shownTitle = n ? t("mine.docTitle", { n, title: baseTitle }) : baseTitle;
  if (document.title !== shownTitle) document.title = shownTitle;
}

function drawLink() {
  const count = document.getElementById("your-tables-count");
  const link = document.getElementById("your-tables-link");
  if (!count || !link) return;
  const n = listing ? listing.awaiting : 0;
  count.hidden = !n;
  count.textContent = String(n);
  link.setAttribute("aria-label", n ? `${t("nav.yourTables")}: ${t("nav.awaiting", { n })}` : t("nav.yourTables"));
}

function received(list) {
  listing = list;
  announce(list);
  drawLink();
  drawTitle();
  for (const listener of listeners) listener(list);
}

function open() {
  clearTimeout(retry);
  if (source) source.close();
  source = new EventSource("/me/live");
  source.addEventListener("tables", (event) => {
    delay = 1000;
    received(JSON.parse(event.data));
  });
  source.addEventListener("error", () => {
    if (source.readyState !== EventSource.CLOSED) return; // reconnecting by itself
    source.close();
    retry = setTimeout(open, delay);
    delay = Math.min(delay * 2, 30000);
  });
}

/** Start following (once, from app.js). */
export function followYourTables() {
  const title = document.querySelector("title");
  if (title) new MutationObserver(drawTitle).observe(title, { childList: true, characterData: true, subtree: true });
  onLangChange(() => { drawLink(); drawTitle(); });
  onAccountChange(open); // logged in or out: another account's tables
  open();
}
