// The page for an address the router has no route for: what happened, and the way back.
import { onLangChange, t } from "./i18n.js";
import { h, mount } from "./ui.js";

export function render(main) {
  function draw() {
    document.title = `${t("notFound.title")} · Tablestream`;
    mount(main, h("section", { class: "hero not-found", "data-testid": "not-found" },
      h("h1", { text: t("notFound.title") }),
      h("p", { text: t("notFound.text", { path: decodeURIComponentSafe(location.pathname) }) }),
      h("a", { class: "button primary", href: "/", "data-nav": "", "data-testid": "back-to-lobby",
        text: t("notFound.back") })));
  }
  draw();
  const off = onLangChange(draw);
  return () => { off(); document.title = "Tablestream"; };
}

function decodeURIComponentSafe(path) {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}
