// The client's router: `navigate`, the links and the back button, and the table of routes that the
// entry module (app.js) hands to `register`. It imports no page: the pages import it for `navigate`,
// and only app.js imports the pages (each when its path is routed to), so no import runs back up.

let routes = []; // [pattern, () => import("./page.js")], the first match wins
let notFound = null; // () => import(the page for a path no route serves)
let onNavigate = () => {}; // run on every navigation but the first
let teardown = null;
let generation = 0; // one per navigation: a page still loading when the next one starts is stale

/** The entry's table of routes, the page for no route and what to do on each later navigation;
 * from now on a click on an `a[data-nav]` link and the back button route. Called once. */
export function register(table, { missing, navigated = () => {} }) {
  routes = table;
  notFound = missing;
  onNavigate = navigated;
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-nav]");
    if (!link || event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(link.getAttribute("href"));
  });
  window.addEventListener("popstate", route);
}

export async function navigate(path, replace = false) {
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  await route();
}

// Each navigation renders into a fresh element of <main>: a page whose data arrives after the user
// has moved on draws into its own detached element, never over the page now shown, and its
// teardown runs at once instead of replacing the current page's.
export async function route() {
  const mine = ++generation;
  if (mine > 1) onNavigate();
  if (teardown) {
    teardown();
    teardown = null;
  }
  const view = document.createElement("div");
  view.className = "view";
  document.getElementById("main").replaceChildren(view);
  const path = location.pathname;
  for (const [pattern, load] of routes) {
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
  const page = await notFound(); // no route: a page that says so, with the way back
  if (mine === generation) teardown = page.render(view) || null;
}
