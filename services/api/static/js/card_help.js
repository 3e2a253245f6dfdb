// Card and disc help: what a special card or disc does, in a tooltip on hover or focus, and on a
// long press on a touch screen (which then does not also play the card). The text is the element's
// ``data-help``, already in the page's language.
import { h } from "./ui.js";

const PRESS_MS = 500;

export function installHelp(root) {
  const tip = h("div", { id: "card-tip", class: "card-tip", role: "tooltip", hidden: true });
  document.body.append(tip);
  let anchor = null; // the element whose help is shown
  let described = null; // the focused control that points at the tip
  let pressTimer = null;
  let pressed = false; // a long press showed the help: the click that follows is not a move

  function helpOf(el) {
    if (!el || !el.closest) return null;
    return el.closest("[data-help]") || (el.matches("button") ? el.querySelector("[data-help]") : null);
  }

  function show(el, owner = null) {
    anchor = el;
    tip.textContent = el.dataset.help;
    tip.hidden = false;
    const box = el.getBoundingClientRect();
    const width = Math.min(300, window.innerWidth - 16);
    tip.style.maxWidth = `${width}px`;
    const own = tip.getBoundingClientRect();
    const left = Math.max(8, Math.min(window.innerWidth - own.width - 8, box.left + box.width / 2 - own.width / 2));
    const above = box.top - own.height - 8;
    tip.style.left = `${left}px`;
    tip.style.top = `${above >= 8 ? above : box.bottom + 8}px`;
    if (owner) {
      described = owner;
      owner.setAttribute("aria-describedby", tip.id);
    }
  }

  function hide() {
    anchor = null;
    tip.hidden = true;
    if (described) described.removeAttribute("aria-describedby");
    described = null;
  }

  const on = {
    pointerover(event) {
      if (event.pointerType !== "mouse") return;
      const el = helpOf(event.target);
      if (el && el !== anchor) show(el);
    },
    pointerout(event) {
      if (event.pointerType !== "mouse" || !anchor) return;
      if (!anchor.contains(event.relatedTarget)) hide();
    },
    focusin(event) {
      const el = helpOf(event.target);
      if (el) show(el, event.target);
    },
    focusout() {
      if (described) hide(); // a help shown by a long press stays until the next touch
    },
    keydown(event) {
      if (event.key === "Escape" && anchor) hide();
    },
    pointerdown(event) {
      if (event.pointerType === "mouse") return;
      const el = helpOf(event.target);
      pressed = false;
      clearTimeout(pressTimer);
      if (!el) return hide();
      pressTimer = setTimeout(() => { pressed = true; show(el); }, PRESS_MS);
    },
    pointerup() { clearTimeout(pressTimer); },
    pointercancel() { clearTimeout(pressTimer); },
    contextmenu(event) { if (pressed || anchor) event.preventDefault(); },
  };
  // A long press ends in a click on the card: swallowed before the button sees it.
  const swallow = (event) => {
    if (!pressed) return;
    pressed = false;
    event.preventDefault();
    event.stopPropagation();
  };
  for (const [name, fn] of Object.entries(on)) root.addEventListener(name, fn);
  root.addEventListener("click", swallow, true);
  // The tip is placed on the screen: it goes when what holds its card scrolls (not the log).
  const scrolled = (event) => {
    const box = event.target === document ? document.documentElement : event.target;
    if (anchor && box.contains && box.contains(anchor)) hide();
  };
  window.addEventListener("scroll", scrolled, true);
  // A redraw replaced the card: the help follows the same card in the new drawing, or goes with it.
  const away = () => {
    if (!anchor || anchor.isConnected) return;
    const key = anchor.dataset.anim;
    const again = key ? root.querySelector(`[data-anim="${CSS.escape(key)}"]`) : null;
    const owner = described;
    if (again) show(again, owner && owner.isConnected ? owner : null);
    else hide();
  };
  const observer = new MutationObserver(away);
  observer.observe(root, { childList: true, subtree: true });
  return () => {
    for (const [name, fn] of Object.entries(on)) root.removeEventListener(name, fn);
    root.removeEventListener("click", swallow, true);
    window.removeEventListener("scroll", scrolled, true);
    observer.disconnect();
    clearTimeout(pressTimer);
    tip.remove();
  };
}
