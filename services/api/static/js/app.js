// The entry: the table of page modules per path (routed by router.js); the header's language
// switcher and account link.
import { applyStatic, lang, ready, setLang, t, onLangChange } from "./i18n.js";
import { account, onAccountChange, playerHref, whoami } from "./account.js";
import { followYourTables, refreshTables } from "./your_tables_live.js";
import { register, route } from "./router.js";

const ROUTES = [
  [/^\/$/, () => import("./lobby.js")],
  [/^\/tables\/([A-Za-z0-9_-]+)$/, () => import("./table.js")],
  [/^\/replay\/([A-Za-z0-9_-]+)$/, () => import("./replay.js")],
  [/^\/audit\/([A-Za-z0-9_-]+)$/, () => import("./audit.js")],
  [/^\/disputes\/([A-Za-z0-9_-]+\/[0-9a-f]{16})$/, () => import("./dispute.js")],
  [/^\/rankings(?:\/([A-Za-z0-9_-]+))?\/?$/, () => import("./rankings.js")],
  [/^\/players\/(.+)$/, () => import("./players.js")],
  [/^\/rules\/([A-Za-z0-9_-]+)$/, () => import("./rules.js")],
  [/^\/your-tables\/?$/, () => import("./your_tables.js")],
  [/^\/operator\/?$/, () => import("./operator.js")],
];

// The router (router.js) imports no page: this table is the one place that does, each page when
// its path is routed to; the pages import router.js for `navigate`, never this module.
register(ROUTES, {
  missing: () => import("./not_found.js"), // no route: a page that says so, with the way back
  navigated: refreshTables, // a seat taken on the page just left: the stream reads the cookies anew
});

// The header says who you are (a link to your page) once logged in.
function showWho() {
  const who = document.getElementById("who");
  const me = account();
  who.hidden = !me;
  if (!me) return;
  who.href = playerHref(me.name);
  who.textContent = me.name;
  who.title = t("account.yourPage");
  who.setAttribute("aria-label", t("account.signedInAs", { name: me.name }));
}

// The server preloads the language file of the next page from this cookie (services/api/shell.py).
function rememberLang() {
  document.cookie = `tablestream.lang=${lang()}; path=/; max-age=31536000; samesite=lax`;
}

await ready; // the first render is in the page's language
applyStatic();
rememberLang();
onLangChange(rememberLang);
document.getElementById("lang-select").addEventListener("change", (event) => setLang(event.target.value));
onAccountChange(showWho);
onLangChange(showWho);
showWho();
whoami();
followYourTables();
route();
