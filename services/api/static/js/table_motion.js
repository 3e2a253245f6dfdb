// Moves between two drawings of the table (FLIP): every card or disc carries a stable
// ``data-anim`` key; after a redraw an element found again slides from where it was, one that turned
// over (``data-face`` changed) flips, a new one comes from where it was played (``data-from``: an
// old key, or a seat's place at the table), and one that went away fades out where it was or flies
// to the seat that took it. The Web Animations API only: nothing here changes the final layout.

const EASE = "cubic-bezier(.2, .7, .2, 1)";

/** Where every keyed element of ``root`` is now, before the next drawing replaces it. */
export function capture(root) {
  const seen = new Map();
  for (const el of root.querySelectorAll("[data-anim]")) {
    seen.set(el.dataset.anim, { el, rect: el.getBoundingClientRect(), face: el.dataset.face || "" });
  }
  return seen;
}

function seatRect(root, seat) {
  const el = root.querySelector(`.player[data-seat="${seat}"]`) || root.querySelector(`[data-testid="mat-${seat}"]`);
  return el ? el.getBoundingClientRect() : null;
}

function visible(rect) {
  return rect && rect.width > 0 && rect.height > 0;
}

function origin(root, el, before) {
  for (const source of (el.dataset.from || "").split(" ").filter(Boolean)) {
    const [kind, value] = [source.slice(0, source.indexOf(":")), source.slice(source.indexOf(":") + 1)];
    const rect = kind === "key" ? before.get(value)?.rect : kind === "seat" ? seatRect(root, value) : null;
    if (visible(rect)) return rect;
  }
  return null;
}

function shift(from, to) {
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  const scale = Math.max(0.3, Math.min(1.4, from.width / Math.max(1, to.width)));
  return { dx, dy, scale };
}

/** Animate ``root`` from the positions ``before`` to its new drawing, in ``ms`` milliseconds.
 * ``collect`` (a seat or null) is where elements that went away fly to. Returns when done. */
export function play(root, before, ms, { collect = null } = {}) {
  if (!ms || !before || typeof Element.prototype.animate !== "function") return Promise.resolve();
  const runs = [];
  const now = new Map();
  for (const el of root.querySelectorAll("[data-anim]")) {
    now.set(el.dataset.anim, el);
    const to = el.getBoundingClientRect();
    if (!visible(to)) continue;
    const old = before.get(el.dataset.anim);
    if (old && visible(old.rect)) {
      const { dx, dy, scale } = shift(old.rect, to);
      const turned = old.face !== (el.dataset.face || "");
      if (Math.abs(dx) + Math.abs(dy) < 1 && Math.abs(scale - 1) < 0.02 && !turned) continue;
      const start = `translate(${dx}px, ${dy}px) scale(${scale})` + (turned ? " rotateY(90deg)" : "");
      const middle = turned ? [{ transform: `translate(${dx / 2}px, ${dy / 2}px) rotateY(90deg)`, offset: 0.5 }] : [];
      runs.push(el.animate([{ transform: start }, ...middle, { transform: "none" }], { duration: ms, easing: EASE }));
      continue;
    }
    const from = origin(root, el, before);
    const frames = from
      ? [{ transform: (({ dx, dy }) => `translate(${dx}px, ${dy}px) scale(.5)`)(shift(from, to)), opacity: 0.2 }, { transform: "none", opacity: 1 }]
      : [{ transform: "scale(.6)", opacity: 0 }, { transform: "none", opacity: 1 }];
    runs.push(el.animate(frames, { duration: ms, easing: EASE }));
  }
  const target = collect !== null && collect !== undefined ? seatRect(root, collect) : null;
  for (const [key, old] of before) {
    if (now.has(key) || !visible(old.rect)) continue;
    runs.push(ghost(old, target, ms));
  }
  return Promise.all(runs.map((run) => run.finished.catch(() => null)));
}

// A copy of an element that went away, drawn over the page where it was, for the length of its exit.
function ghost(old, target, ms) {
  const copy = old.el.cloneNode(true);
  copy.removeAttribute("data-anim");
  copy.removeAttribute("id");
  copy.setAttribute("aria-hidden", "true");
  Object.assign(copy.style, { position: "fixed", left: `${old.rect.left}px`, top: `${old.rect.top}px`, width: `${old.rect.width}px`,
    height: `${old.rect.height}px`, margin: "0", zIndex: "30", pointerEvents: "none" });
  copy.classList.add("anim-ghost");
  document.body.append(copy);
  const end = visible(target)
    ? (({ dx, dy }) => `translate(${-dx}px, ${-dy}px) scale(.35)`)(shift(old.rect, target))
    : "scale(.8)";
  const run = copy.animate([{ transform: "none", opacity: 1 }, { transform: end, opacity: 0 }], { duration: ms, easing: EASE, fill: "forwards" });
  run.finished.catch(() => null).then(() => copy.remove());
  return run;
}
