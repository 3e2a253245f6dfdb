// 6 nimmt!: the four rows with bullheads per card, your hand, who has chosen, penalties.
import { h } from "../ui.js";
import { t } from "../i18n.js";
import { action, dock, legal, leftovers, sheetHead, sheetTotals } from "./common.js";

export const stylesheet = true; // css/games/six_nimmt.css

// How the table's change queue paces 6 nimmt!'s events (table_queue.js): a row choice awaited is
// folded into the next step; the cards revealed, a row taken and a round scored are held long enough
// to read, and a taken row's cards slide to the seat that took it.
export const pace = {
  silent: new Set(["row_choice_awaited"]),
  hold: new Set(["cards_revealed", "row_taken", "round_scored"]),
  collector: (event) => (event.type === "row_taken" ? event.seat : null),
};

function bullheadClass(n) {
  return { 1: "bh1", 2: "bh2", 3: "bh3", 5: "bh5", 7: "bh7" }[n] || "bh1";
}

const BULLHEADS = (card) => (card === 55 ? 7 : card % 11 === 0 ? 5 : card % 10 === 0 ? 3 : card % 5 === 0 ? 2 : 1);

export function card(number, { small = false, owner = null, seat = null } = {}) {
  const n = BULLHEADS(number);
  return h("span", { class: `ncard ${bullheadClass(n)}` + (small ? " small" : ""), role: "img",
    "aria-label": `${number}, ${t("play.six-nimmt.bullheads", { n })}` + (owner ? ` · ${owner}` : ""),
    "data-help": t("play.six-nimmt.help.card", { card: number, n }), "data-anim": `n-${number}`,
    "data-from": seat !== null ? `seat:${seat}` : null },
    h("span", { class: "heads", "aria-hidden": "true", text: "▼".repeat(n) }),
    h("span", { class: "num", "aria-hidden": "true", text: String(number) }),
    owner ? h("span", { class: "owner", "aria-hidden": "true", text: owner }) : null);
}

export function round(view) {
  const total = view.options && view.options.rounds;
  const r = total ? t("table.roundOf", { n: view.round, total }) : t("table.round", { n: view.round });
  return `${r} · ${t("play.six-nimmt.turn", { n: Math.min(10, Math.max(1, view.turn)) })}`;
}

export function stat(view, p) {
  const chosen = view.phase === "selecting" ? (p.has_selected ? ` · ✓ ${t("play.six-nimmt.selected")}` : ` · ${t("play.six-nimmt.selecting")}`) : "";
  return `▼ ${p.penalty}${chosen}`;
}

export function prompt(view) {
  if (legal(view, "choose_row").length) return t("play.six-nimmt.chooseRow");
  if (legal(view, "draft_card").length) return t("play.six-nimmt.draft");
  if (legal(view, "select_card").length) return t("play.six-nimmt.pick");
  return null;
}

/** Before a row is taken, it is marked where it lies, with the card that takes it. */
export function before(root, event) {
  if (event.type !== "row_taken") return 0;
  const row = root.querySelector(`[data-testid="row-${event.row}"]`);
  if (!row) return 0;
  row.classList.add("taking");
  return 0.45;
}

export function board(view, ctx) {
  const take = new Map(legal(view, "choose_row").map((c) => [c.row, c]));
  const rows = view.rows.map((row, index) => {
    const cards = row.cards.map((c) => card(c.card));
    const slots = [];
    for (let i = row.cards.length; i < 5; i++) {
      slots.push(h("span", { class: "slot" + (i === 4 ? " sixth" : ""), "aria-hidden": "true",
        "data-help": i === 4 ? t("play.six-nimmt.help.sixth") : null }));
    }
    return h("div", { class: "nrow" + (take.has(index) ? " choosable" : ""), "data-testid": `row-${index}` },
      h("span", { class: "row-label" }, h("span", { text: t("play.six-nimmt.row", { n: index + 1 }) }),
        h("span", { class: "row-heads", text: `▼ ${row.bullheads}` })),
      h("div", { class: "row-cards" }, cards, slots));
  });
  const parts = [h("section", { class: "rows", "aria-label": t("play.six-nimmt.rows") }, rows)];

  if (view.pending && view.pending.length) {
    parts.push(h("div", { class: "chips pending", "data-testid": "revealed" }, h("span", { class: "controls-label", text: t("play.six-nimmt.revealed") }),
      view.pending.map((p) => card(p.card, { small: true, owner: ctx.name(p.seat), seat: p.seat }))));
  }
  const controls = [];
  if (take.size) {
    controls.push(h("section", { class: "controls", "aria-label": t("play.six-nimmt.chooseRow") },
      [...take.entries()].map(([index, c]) => action(ctx, c,
        t("table.nimmt.takeRow", { n: index + 1, heads: `▼ ${view.rows[index].bullheads}` }), { cls: "primary take" }))));
  }
  const draft = legal(view, "draft_card");
  if (view.draft && view.draft.cards.length) {
    const byCard = new Map(draft.map((c) => [c.card, c]));
    controls.push(h("section", { class: "hand-area" }, h("h2", { text: t("play.six-nimmt.draft") }),
      h("div", { class: "hand" + (draft.length ? " live" : "") },
        view.draft.cards.map((c) => action(ctx, byCard.get(c) || null, card(c), { cls: "card-btn", fallbackKey: `draft-${c}` })))));
  }
  if (view.hand) {
    const select = new Map(legal(view, "select_card").map((c) => [c.card, c]));
    controls.push(h("section", { class: "hand-area", "aria-labelledby": "hand-title" },
      h("h2", { id: "hand-title" }, t("play.six-nimmt.hand"),
        view.selection !== null && view.selection !== undefined ? h("span", { class: "chip strong", text: t("play.six-nimmt.yourPick", { card: view.selection }) }) : null),
      h("div", { class: "hand" + (select.size ? " live" : "") },
        view.hand.map((c) => action(ctx, select.get(c) || null, card(c), { cls: "card-btn", fallbackKey: `hand-${c}` })))));
  }
  controls.push(leftovers(view, ctx, new Set(["select_card", "choose_row", "draft_card"])));
  parts.push(dock(controls));
  return h("div", { class: "game six-nimmt" }, parts);
}

/** The end's score sheet: the bullheads every seat took in each round. */
export function sheet(view, pad) {
  const lines = pad.rounds.map((penalties, index) => h("tr", {}, h("th", { scope: "row", text: String(index + 1) }),
    view.players.map((p) => h("td", { "aria-label": t("table.sheetBullheads", { n: penalties[p.seat] }) },
      h("span", { class: "pts", text: penalties[p.seat] ? `▼ ${penalties[p.seat]}` : "0" })))));
  return [sheetHead(view), h("tbody", {}, lines), sheetTotals(view, pad)];
}
