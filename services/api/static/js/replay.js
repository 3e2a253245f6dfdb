// The replay viewer of a finished game: every version, everything revealed, step and scrub.
import { games } from "./api.js";
import { t, onLangChange } from "./i18n.js";
import { TITLES } from "./names.js";
import { h, mount } from "./ui.js";
import { loadGame, playersPanel } from "./table.js";

export async function render(main, id) {
  let mod = null;
  let head = 1;
  let at = 1;
  let current = null;
  let wanted = 0;

  const slider = h("input", { type: "range", min: 1, max: 1, value: 1, "aria-label": t("replay.title"), "data-testid": "scrub" });
  const pos = h("span", { class: "pos", "data-testid": "position", "aria-live": "polite" });
  const stage = h("div", { class: "replay-stage" });
  const buttons = {
    first: h("button", { type: "button", "data-testid": "first", onclick: () => go(1) }),
    prev: h("button", { type: "button", "data-testid": "prev", onclick: () => go(at - 1) }),
    next: h("button", { type: "button", class: "primary", "data-testid": "next", onclick: () => go(at + 1) }),
    last: h("button", { type: "button", "data-testid": "last", onclick: () => go(head) }),
  };
  slider.addEventListener("input", () => go(Number(slider.value)));
  const title = h("h1");
  const hint = h("p", { class: "muted" });
  const links = h("p", { class: "actions left" });

  function labels() {
    buttons.first.textContent = "⏮ " + t("replay.first");
    buttons.prev.textContent = "◀ " + t("replay.prev");
    buttons.next.textContent = t("replay.next") + " ▶";
    buttons.last.textContent = t("replay.last") + " ⏭";
    hint.textContent = t("replay.hint");
  }

  mount(main, h("div", { class: "replay" },
    h("div", { class: "table-head" }, title, h("a", { class: "button small ghost", href: `/tables/${id}`, "data-nav": "", text: "↩" })),
    h("section", { class: "panel" },
      h("div", { class: "replay-bar" }, buttons.first, buttons.prev, slider, buttons.next, buttons.last, pos), hint, links),
    stage));
  labels();

  async function go(target) {
    target = Math.max(1, Math.min(head, target));
    wanted = target;
    let data;
    try {
      data = await games.replay(id, target);
    } catch (error) {
      mount(stage, h("p", { class: "panel", text: error.code === "game_not_finished" ? t("replay.notFinished") : error.message }));
      return;
    }
    if (wanted !== target) return; // a newer step was asked for meanwhile
    current = data;
    head = data.head;
    at = data.version;
    draw();
  }

  function draw() {
    const data = current;
    const spectator = data.spectator;
    title.textContent = `${t("replay.title")} · ${TITLES[spectator.game] || spectator.game}`;
    slider.max = String(head);
    slider.value = String(at);
    pos.textContent = t("replay.version", { v: at, head });
    buttons.first.disabled = buttons.prev.disabled = at <= 1;
    buttons.next.disabled = buttons.last.disabled = at >= head;
    const rounds = Object.keys(spectator.fairness.revealed_seeds || {}).map(Number);
    const roundNow = spectator.round || 1;
    mount(links, h("a", { href: `/audit/${id}#round-${roundNow}`, "data-nav": "", "data-testid": "audit-link",
      text: t("replay.auditRound", { n: roundNow }) }),
      rounds.filter((r) => r !== roundNow).map((r) => h("a", { href: `/audit/${id}#round-${r}`, "data-nav": "", class: "muted",
        text: `#${r}` })));
    const ctx = (view) => ({ send: () => {}, me: view.seat, name: (s) => (view.players.find((p) => p.seat === s) || { name: "?" }).name });
    const frozen = (view) => ({ ...view, legal: [] });
    const events = data.events.map((e) => h("p", { class: "replay-event", "data-testid": "replay-event" },
      e.text || e.type, h("span", { class: "type", text: `v${e.version} · ${e.type}` })));
    mount(stage,
      h("section", { class: "panel" }, events),
      h("div", { class: "table-grid" },
        spectator.status === "waiting" ? h("div", { class: "panel muted", text: t("status.waiting") })
          : mod.board(frozen(spectator), ctx(spectator)),
        h("aside", { class: "side" }, h("section", { class: "panel" }, h("h2", { text: t("table.scores") }),
          playersPanel(spectator, mod, { interactive: false })))),
      spectator.status === "waiting" ? null : h("div", { class: "seat-views" }, data.seats.map((view) =>
        h("section", { class: "panel" }, h("h3", { text: t("replay.seatView", { name: ctx(view).name(view.seat) }) }),
          mod.board(frozen(view), ctx(view))))));
  }

  function onKey(event) {
    if (event.target === slider || ["INPUT", "SELECT", "TEXTAREA"].includes(event.target.tagName)) return;
    if (event.key === "ArrowRight") { event.preventDefault(); go(at + 1); }
    if (event.key === "ArrowLeft") { event.preventDefault(); go(at - 1); }
    if (event.key === "Home") { event.preventDefault(); go(1); }
    if (event.key === "End") { event.preventDefault(); go(head); }
  }

  let first;
  try {
    first = await games.replay(id, 1);
  } catch (error) {
    mount(stage, h("p", { class: "panel", text: error.code === "game_not_finished" ? t("replay.notFinished") : error.message }));
    return null;
  }
  mod = await loadGame(first.spectator.game);
  head = first.head;
  current = first;
  at = 1;
  draw();
  document.addEventListener("keydown", onKey);
  const off = onLangChange(() => { labels(); go(at); });
  return () => { document.removeEventListener("keydown", onKey); off(); };
}
