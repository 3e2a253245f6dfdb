// Skull King: the trick in play, your hand, bids once revealed, tricks won, the round.
import { h } from "../ui.js";
import { t } from "../i18n.js";
import { skCard } from "../names.js";
import { action, legal, leftovers } from "./common.js";

export function card(id, { small = false, as = null, owner = null } = {}) {
  const c = skCard(id);
  const label = as ? `${c.label} (${t("sk.as_" + as)})` : c.label;
  return h("span", { class: `kcard ${c.kind}` + (c.suit ? ` suit-${c.suit}` : "") + (small ? " small" : ""), "aria-label": label, title: label },
    h("span", { class: "corner", "aria-hidden": "true", text: c.rank ? `${c.rank}` : c.symbol }),
    h("span", { class: "pip", "aria-hidden": "true", text: c.symbol }),
    h("span", { class: "cname", "aria-hidden": "true", text: c.rank ? c.short : c.label }),
    owner ? h("span", { class: "owner", text: owner }) : null);
}

export function round(view) {
  return t("table.roundOf", { n: view.round, total: view.rounds });
}

export function stat(view, p) {
  const bid = p.bid !== null && p.bid !== undefined ? `${t("sk.bids")} ${p.bid}` : view.phase === "bidding" ? (p.has_bid ? `✓ ${t("sk.hasBid")}` : t("sk.bidding")) : "";
  const dealer = view.dealer === p.seat ? ` · ${t("sk.dealer")}` : "";
  return `${bid}${bid ? " · " : ""}${t("sk.tricks")} ${p.tricks_won}${dealer}`;
}

export function prompt(view) {
  if (legal(view, "bid").length) return t("sk.bid");
  if (legal(view, "play_card").length) return t("sk.play");
  return null;
}

export function board(view, ctx) {
  const trick = view.trick.map((p) => card(p.card, { as: p.as, owner: ctx.name(p.seat) }));
  const last = view.completed_tricks && view.completed_tricks.length ? view.completed_tricks[view.completed_tricks.length - 1] : null;
  const lead = view.lead_suit ? t("sk.lead", { suit: t("suit." + view.lead_suit) }) : t("sk.noLead");
  const parts = [h("section", { class: "trick-area", "aria-label": t("sk.trick") },
    h("div", { class: "chips" }, h("span", { class: "chip strong", text: lead }),
      view.own_bid !== null && view.own_bid !== undefined ? h("span", { class: "chip", text: t("sk.yourBid", { n: view.own_bid }) }) : null,
      last && !view.trick.length ? h("span", { class: "chip", text: t("sk.lastTrick", { name: ctx.name(last.winner) }) }) : null),
    h("div", { class: "trick", "data-testid": "trick" }, trick.length ? trick
      : last ? last.plays.map((p) => h("span", { class: "faded" }, card(p.card, { as: p.as, owner: ctx.name(p.seat) }))) : h("span", { class: "muted", text: "—" })))];

  const bids = legal(view, "bid");
  if (bids.length) {
    parts.push(h("section", { class: "controls", "aria-label": t("sk.bid") }, h("span", { class: "controls-label", text: t("sk.bid") }),
      bids.map((c) => action(ctx, c, String(c.tricks), { cls: "bid" }))));
  }
  if (view.hand) {
    const plays = legal(view, "play_card");
    const byCard = new Map();
    for (const c of plays) byCard.set(c.card, [...(byCard.get(c.card) || []), c]);
    const cards = view.hand.map((id) => {
      const options = byCard.get(id) || [];
      if (options.length > 1) {
        return h("div", { class: "choice" }, card(id), options.map((c) => action(ctx, c, t("sk.as_" + c.as), { cls: "small" })));
      }
      return action(ctx, options[0] || null, card(id), { cls: "card-btn", fallbackKey: `hand-${id}` });
    });
    parts.push(h("section", { class: "hand-area", "aria-labelledby": "hand-title" }, h("h2", { id: "hand-title", text: t("sk.hand") }),
      h("div", { class: "hand" }, cards)));
  }
  parts.push(leftovers(view, ctx, new Set(["bid", "play_card"])));
  return h("div", { class: "game skull-king" }, parts);
}
