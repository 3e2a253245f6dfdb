// "Your tables" (/your-tables): every table where you have a seat, those awaiting your move first,
// with the time left on each, the game, the others at the table and a link. The list is the one
// your_tables_live.js receives from GET /me/live (the server orders it); a seat of your account
// that this browser does not hold yet (you joined on another device) opens here with "Play on this
// device" (POST /me/tables/{id}/seat). The time left counts down here between messages.
import { api } from "./api.js";
import { account } from "./account.js";
import { t, onLangChange } from "./i18n.js";
import { gamesKnown, gameTitle } from "./game_info.js";
import { h, mount, store, toast } from "./ui.js";
import { navigate } from "./router.js";
import { onTables, refreshTables } from "./your_tables_live.js";
import { longTimeLeft } from "./time_left.js";

const NOTIFY = "tablestream.notify"; // shared with the table's bell (table_alerts.js)
const TICK_MS = 15000; // the time left is shown to the minute

/** The time left before ``deadline`` in words, e.g. "2 d 3 h left"; null without a deadline. */
export function timeLeft(deadline, now) {
  if (deadline === null || deadline === undefined) return null;
  return longTimeLeft((deadline - now) / 1000);
}

function notificationsOn() {
  return Boolean(store(NOTIFY)) && typeof Notification !== "undefined" && Notification.permission === "granted";
}

export async function render(main) {
  await gamesKnown(); // the games' titles (game_info.js)
  let listing = null;
  let skew = 0; // the server's clock minus this one's, from the newest list

  async function playHere(table) {
    try {
      await api(`/me/tables/${table.game_id}/seat`, { method: "POST", body: {} });
      refreshTables();
      navigate(`/tables/${table.game_id}`);
    } catch (error) {
      toast(error.message);
    }
  }

  function row(table) {
    const now = Date.now() + skew;
    const state = table.taken_over ? t("mine.takenOver")
      : table.status === "waiting" ? t("mine.filling")
        : table.awaiting ? t("mine.yourMove") : t("mine.othersMove");
    const left = table.status === "playing" ? timeLeft(table.deadline_ms, now) : null;
    const others = table.opponents.map((o) => o.name).join(", ");
    const open = table.here || !table.account || table.status !== "playing"
      ? h("a", { class: `button small ${table.awaiting ? "primary" : "ghost"}`, href: `/tables/${table.game_id}`,
        "data-nav": "", "data-testid": "open-table", text: t("mine.open") })
      : h("button", { type: "button", class: `small ${table.awaiting ? "primary" : ""}`, "data-testid": "play-here",
        onclick: () => playHere(table), text: t("mine.playHere") });
    return h("li", { class: "table-row mine-row" + (table.awaiting ? " awaiting" : ""), "data-game-id": table.game_id,
      "data-testid": "my-table", "data-awaiting": String(table.awaiting) },
      h("div", { class: "table-info" },
        h("span", { class: "game-title", text: gameTitle(table.game) }),
        h("span", { class: `badge ${table.awaiting ? "host" : table.status}`, text: state }),
        table.turn_based ? h("span", { class: "badge turn-based", text: t("lobby.turnBased") }) : null,
        table.practice ? h("span", { class: "badge", text: t("lobby.practice") }) : null,
        h("span", { class: "mine-with muted", text: others ? t("mine.with", { names: others }) : t("mine.alone") }),
        table.status === "waiting" ? h("span", { class: "mine-left muted",
          text: t("lobby.seats", { taken: table.seats_taken, seats: table.seats, n: table.seats }) }) : null,
        table.status === "playing" ? h("span", { class: "mine-left" + (table.awaiting ? " strong" : " muted"),
          "data-testid": "time-left", text: left ?? t("mine.noClock") }) : null),
      h("div", { class: "table-actions" }, open));
  }

  function notifyToggle() {
    const id = "mine-notify";
    const box = h("input", { id, type: "checkbox", checked: notificationsOn(), "data-testid": "mine-notify",
      onchange: async () => {
        if (!box.checked) return store(NOTIFY, false);
        if (typeof Notification === "undefined") { box.checked = false; return toast(t("mine.notifyDenied")); }
        if (Notification.permission === "default") await Notification.requestPermission();
        const granted = Notification.permission === "granted";
        store(NOTIFY, granted);
        box.checked = granted;
        if (!granted) toast(t("mine.notifyDenied"));
      } });
    return h("div", { class: "field check mine-notify" }, box, h("label", { for: id, text: t("mine.notify") }));
  }

  function draw() {
    const tables = listing ? listing.tables : null;
    const body = !tables ? h("p", { class: "muted", text: t("common.loading") })
      : tables.length ? h("ul", { class: "table-list", "data-testid": "my-tables" }, tables.map(row))
        : h("div", { class: "empty", "data-testid": "my-tables-empty" }, h("p", { text: t("mine.none") }),
          h("a", { href: "/", "data-nav": "", class: "button small", text: t("mine.toLobby") }));
    const focused = main.contains(document.activeElement) && document.activeElement.id === "mine-notify";
    mount(main, h("div", { class: "your-tables", "data-testid": "your-tables" },
      h("div", { class: "page-head" }, h("h1", { text: t("mine.title") }),
        h("p", { class: "muted", text: t("mine.lead") })),
      h("section", { class: "panel", "aria-labelledby": "mine-heading" },
        h("h2", { id: "mine-heading", class: "sr-only", text: t("mine.title") }),
        body,
        account() ? null : h("p", { class: "help", "data-testid": "login-hint", text: t("mine.loginHint") }),
        notifyToggle())));
    if (focused) document.getElementById("mine-notify")?.focus();
  }

  draw();
  const stop = onTables((list) => {
    listing = list;
    skew = list.now_ms - Date.now();
    draw();
  });
  const ticker = setInterval(() => { if (listing) draw(); }, TICK_MS); // the time left, not the server
  const off = onLangChange(draw);
  return () => { stop(); clearInterval(ticker); off(); };
}
