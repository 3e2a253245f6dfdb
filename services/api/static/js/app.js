// The shell's router: one page module per path; the header's language switcher and account link.
import { applyStatic, lang, ready, setLang, t, onLangChange } from "./i18n.js";
import { account, onAccountChange, playerHref, whoami } from "./account.js";
import { followYourTables, refreshTables } from "./your_tables_live.js";

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

let teardown = null;
let generation = 0; // one per navigation: a page still loading when the next one starts is stale

export async function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  await route();
}

// Each navigation renders into a fresh element of <main>: a page whose data arrives after the user
// has moved on draws into its own detached element, never over the page now shown, and its
// teardown runs at once instead of replacing the current page's.
async function route() {
  const mine = ++generation;
  if (mine > 1) refreshTables(); // a seat taken on the page just left: the stream reads the cookies anew
  if (teardown) {
    teardown();
    teardown = null;
  }
  const view = document.createElement("div");
  view.className = "view";
  document.getElementById("main").replaceChildren(view);
  const path = location.pathname;
  for (const [pattern, load] of ROUTES) {
    const match = path.match(pattern);
    if (match) {
      const page = await load();
      if (mine !== generation) return;
      const done = (await page.render(view, match[1])) || null;
      if (mine !== generation) {
        if (done) done();
        return;
      }
      teardown = done;
      return;
    }
  }
  const page = await import("./not_found.js"); // no route: a page that says so, with the way back
  if (mine === generation) teardown = page.render(view) || null;
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-nav]");
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});
window.addEventListener("popstate", route);

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
