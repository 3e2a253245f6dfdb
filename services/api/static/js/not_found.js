// The page for an address the router has no route for: what happened, and the way back.
import { onLangChange } from "./i18n.js";
import { h, mount } from "./ui.js";
import { tw } from "./words_delivery.js";

export function render(main) {
  function draw() {
    document.title = `${tw("delivery.notFound.title")} · Tablestream`;
    mount(main, h("section", { class: "hero not-found", "data-testid": "not-found" },
      h("h1", { text: tw("delivery.notFound.title") }),
      h("p", { text: tw("delivery.notFound.text", { path: decodeURIComponentSafe(location.pathname) }) }),
      h("a", { class: "button primary", href: "/", "data-nav": "", "data-testid": "back-to-lobby",
        text: tw("delivery.notFound.back") })));
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
