// The shell's router: one page module per path; the header's language switcher.
import { applyStatic, setLang } from "./i18n.js";

const ROUTES = [
  [/^\/$/, () => import("./lobby.js")],
  [/^\/tables\/([A-Za-z0-9_-]+)$/, () => import("./table.js")],
  [/^\/replay\/([A-Za-z0-9_-]+)$/, () => import("./replay.js")],
  [/^\/audit\/([A-Za-z0-9_-]+)$/, () => import("./audit.js")],
];

let teardown = null;

export async function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  await route();
}

async function route() {
  if (teardown) {
    teardown();
    teardown = null;
  }
  const main = document.getElementById("main");
  const path = location.pathname;
  for (const [pattern, load] of ROUTES) {
    const match = path.match(pattern);
    if (match) {
      const page = await load();
      teardown = (await page.render(main, match[1])) || null;
      return;
    }
  }
  main.textContent = "404";
}

document.addEventListener("click", (event) => {
  const link = event.target.closest("a[data-nav]");
  if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});
window.addEventListener("popstate", route);

applyStatic();
document.getElementById("lang-select").addEventListener("change", (event) => setLang(event.target.value));
route();
