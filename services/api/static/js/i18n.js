// The page's words in four languages. They live in one glossary per language, shared with the
// server's narration (projections/glossary/<lang>.json): the page loads only its language's file,
// from ../lang/ next to this module's directory. An entry is a template with {placeholders}, or a
// plural object whose form Intl.PluralRules picks from the number `n` (CLDR categories, the same
// rules the server's Babel uses for the log).

export const LANGUAGES = ["en", "pl", "fr", "tr"];
const DEFAULT = "en";
const KEY = "tablestream.lang";
const listeners = new Set();
// The glossaries loaded so far, by language (normally only the page's language).
export const CATALOGS = {};
const loading = {};
const plurals = {};
let current = initial();
let entries = {};
let switched = false; // a setLang applied: the first language's late arrival must not undo it

function initial() {
  try {
    const saved = localStorage.getItem(KEY);
    if (LANGUAGES.includes(saved)) return saved;
  } catch { /* storage may be off */ }
  for (const tag of navigator.languages || [navigator.language || DEFAULT]) {
    const base = String(tag).slice(0, 2).toLowerCase();
    if (LANGUAGES.includes(base)) return base;
  }
  return DEFAULT;
}

function load(language) {
  if (!loading[language]) {
    const url = new URL("../lang/" + language + ".json", import.meta.url);
    loading[language] = fetch(url).then((response) => {
      if (!response.ok) throw new Error(`${url}: ${response.status}`);
      return response.json();
    }).then((glossary) => {
      CATALOGS[language] = glossary;
      return glossary;
    }, (error) => {
      delete loading[language]; // a later attempt may succeed
      throw error;
    });
  }
  return loading[language];
}

/** Resolves once the page's language is loaded (English if it cannot be); the router awaits it. */
export const ready = load(current).catch(() => {
  current = DEFAULT;
  return load(DEFAULT);
}).then((glossary) => {
  if (!switched) entries = glossary;
}, () => { /* no glossary at all: t() shows keys rather than nothing */ });

export function lang() {
  return current;
}

/** Switch to `next` once its glossary is loaded; the listeners then redraw in it. */
let asked = 0; // the latest switch wins when two languages load at once

export async function setLang(next) {
  if (!LANGUAGES.includes(next)) return;
  const mine = ++asked; // also cancels a switch to another language still loading
  if (next === current) {
    await ready; // the page's first language may still be on its way: resolve once its words are in
    return;
  }
  let glossary;
  try {
    glossary = await load(next);
  } catch {
    if (mine === asked) applyStatic(); // the menu shows the language still in use
    return;
  }
  if (mine !== asked) return;
  current = next;
  entries = glossary;
  switched = true;
  try { localStorage.setItem(KEY, next); } catch { /* storage may be off */ }
  applyStatic();
  for (const listener of listeners) listener(next);
}

export function onLangChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function pluralOf(entry, n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return entry.other;
  plurals[current] ??= new Intl.PluralRules(current);
  return entry[plurals[current].select(n)] ?? entry.other;
}

/** The words of `key` with its {placeholders} filled from `vars` (a plural picked by `vars.n`). */
export function t(key, vars = {}) {
  const entry = entries[key];
  const text = entry === undefined ? key : typeof entry === "string" ? entry : pluralOf(entry, vars.n);
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

export function has(key) {
  return key in entries;
}

// The shell's own words: data-i18n elements, and the two the shell cannot mark (index.html is
// shared with the asset pipeline): the skip link and the language menu's name.
export function applyStatic() {
  document.documentElement.lang = current;
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  const skip = document.querySelector("a.skip");
  if (skip) skip.textContent = t("nav.skip");
  const select = document.getElementById("lang-select");
  if (select) {
    select.value = current;
    select.setAttribute("aria-label", t("nav.language"));
  }
}
