// Tiny DOM helpers: h() builds elements, never from HTML strings (names are user input).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on") && typeof value === "function") el[key] = value; // a property: patch() can move it
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "style") el.style.cssText = value; // through the CSSOM: the CSP refuses style="..."
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function mount(parent, ...children) {
  parent.replaceChildren();
  append(parent, children);
  return parent;
}

// patch(): like mount(), but the elements already there are kept and brought up to date where the
// new drawing has an element of the same kind in the same place (or with the same key: data-anim,
// data-hold, data-key, data-testid or id). A redraw then keeps what is under the pointer, the focus and the
// card help where they are, and a card that moved stays the same element (table_motion.js slides
// it). ``slots`` names elements kept as they are: a ``data-slot`` placeholder in the new drawing
// stands for them.
const HANDLERS = ["onclick", "onchange", "oninput", "onsubmit", "onkeydown"];

function keyOf(node) {
  if (node.nodeType !== 1) return null;
  const d = node.dataset;
  return d.anim || d.hold || d.key || d.testid || node.id || null;
}

function alike(a, b) {
  return a.nodeType === b.nodeType && (a.nodeType !== 1 || a.tagName === b.tagName);
}

function update(from, to, slots) {
  if (from.nodeType !== 1) {
    if (from.nodeValue !== to.nodeValue) from.nodeValue = to.nodeValue;
    return;
  }
  for (const { name } of [...from.attributes]) if (!to.hasAttribute(name)) from.removeAttribute(name);
  for (const { name, value } of [...to.attributes]) {
    if (from.getAttribute(name) === value) continue;
    if (name === "style") from.style.cssText = value; // the CSP refuses a style attribute set as such
    else from.setAttribute(name, value);
  }
  for (const handler of HANDLERS) if (from[handler] !== to[handler]) from[handler] = to[handler];
  if (from.tagName === "INPUT" || from.tagName === "TEXTAREA" || from.tagName === "SELECT") return; // what is typed stays
  patchChildren(from, [...to.childNodes], slots);
}

function patchChildren(parent, fresh, slots) {
  const old = [...parent.childNodes];
  const keyed = new Map();
  for (const node of old) if (keyOf(node)) keyed.set(keyOf(node), node);
  const used = new Set();
  let cursor = 0;
  const result = fresh.map((node) => {
    if (node.nodeType === 1 && node.dataset.slot && slots[node.dataset.slot]) return slots[node.dataset.slot];
    let match = null;
    const key = keyOf(node);
    if (key) {
      match = keyed.get(key) || null;
    } else {
      while (cursor < old.length && (keyOf(old[cursor]) || used.has(old[cursor]))) cursor++;
      match = old[cursor] || null;
      if (match) cursor++;
    }
    if (!match || used.has(match) || !alike(match, node)) return node;
    used.add(match);
    update(match, node, slots);
    return match;
  });
  const kept = new Set(result);
  for (const node of old) if (!kept.has(node)) node.remove();
  result.forEach((node, index) => {
    if (parent.childNodes[index] !== node) parent.insertBefore(node, parent.childNodes[index] || null);
  });
}

export function patch(parent, children, slots = {}) {
  const holder = document.createElement(parent.tagName);
  append(holder, Array.isArray(children) ? children : [children]);
  patchChildren(parent, [...holder.childNodes], slots);
  // A placeholder inside a new element (nothing there to patch) is filled here.
  for (const hole of parent.querySelectorAll("[data-slot]")) if (slots[hole.dataset.slot]) hole.replaceWith(slots[hole.dataset.slot]);
  return parent;
}

export function randomId() {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export function randomHex(n) {
  const bytes = crypto.getRandomValues(new Uint8Array(n));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

let toastTimer = null;
export function toast(message, kind = "error") {
  let box = document.getElementById("toast");
  if (!box) {
    box = h("div", { id: "toast", role: "status", "aria-live": "polite" });
    document.body.append(box);
  }
  box.className = `toast show ${kind}`;
  box.textContent = message;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => box.classList.remove("show"), 4000);
}

export function store(key, value) {
  try {
    if (value === undefined) return JSON.parse(localStorage.getItem(key));
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    return null;
  }
  return value;
}
