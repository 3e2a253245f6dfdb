// Skull King: the trick in play (and who is winning it), your hand, bids once revealed, tricks won.
import { h } from "../ui.js";
import { t } from "../i18n.js";
import { action, dock, legal, leftovers, sheetHead, sheetTotals, signed, stepEvent } from "./common.js";

export const stylesheet = true; // css/games/skull_king.css

// How the table's change queue paces Skull King's events (table_queue.js): the bids revealed, a
// trick won and a round scored are held long enough to read, and a won trick's cards slide to its
// winner.
export const pace = {
  hold: new Set(["bids_revealed", "trick_won", "round_scored"]),
  collector: (event) => (event.type === "trick_won" ? event.winner : null),
};

// Suits are told apart by colour, symbol and their name in the page's language (never a letter).
const SUITS = {
  yellow: { symbol: "☀" },
  red: { symbol: "♥" },
  blue: { symbol: "⚓" },
  black: { symbol: "☠" },
};

const SPECIAL = {
  escape: { symbol: "⚐" },
  pirate: { symbol: "⚔" },
  mermaid: { symbol: "≈" },
  "scary-mary": { symbol: "⚔⚐" },
  "skull-king": { symbol: "♛" },
};

/** A card id as {kind, suit?, rank?, symbol, label, short}: ``short`` is the rank and the suit's
 * symbol for a numbered card, the card's name for a special one. */
export function skCard(id) {
  const [head, tail] = [id.slice(0, id.lastIndexOf("-")), id.slice(id.lastIndexOf("-") + 1)];
  if (SUITS[head] && /^\d+$/.test(tail)) {
    const suit = SUITS[head];
    return { kind: "suit", suit: head, rank: Number(tail), symbol: suit.symbol, short: `${tail}${suit.symbol}`,
      label: `${t("play.skull-king.suit." + head)} ${tail}` };
  }
  const kind = SPECIAL[id] ? id : head;
  const special = SPECIAL[kind];
  return { kind, symbol: special.symbol, short: t("play.skull-king.card." + kind), label: t("play.skull-king.card." + kind) };
}

function help(c) {
  if (c.kind !== "suit") return t("play.skull-king.help." + c.kind);
  return c.suit === "black" ? t("play.skull-king.help.black") : t("play.skull-king.help.suit", { suit: t("play.skull-king.suit." + c.suit) });
}

export function card(id, { small = false, as = null, owner = null, seat = null, mark = null, focusable = false } = {}) {
  const c = skCard(id);
  const label = (as ? `${c.label} (${t("play.skull-king.as_" + as)})` : c.label) + (owner ? ` · ${owner}` : "")
    + (mark ? ` · ${mark === "wins" ? t("table.wins", { name: owner }) : t("table.winning")}` : "");
  return h("span", { class: `kcard ${c.kind}` + (c.suit ? ` suit-${c.suit}` : "") + (small ? " small" : "") + (mark ? ` ${mark}` : ""),
    role: "img", "aria-label": label, "data-help": help(c), tabindex: focusable ? "0" : null,
    "data-anim": `k-${id}`, "data-from": seat !== null ? `seat:${seat}` : null },
    h("span", { class: "corner", "aria-hidden": "true", text: c.rank ? `${c.rank}` : c.symbol }),
    h("span", { class: "pip", "aria-hidden": "true", text: c.symbol }),
    h("span", { class: "cname", "aria-hidden": "true", text: c.rank ? t("play.skull-king.suit." + c.suit) : c.label }),
    as ? h("span", { class: "as", "aria-hidden": "true", text: t("play.skull-king.as_" + as) }) : null,
    mark ? h("span", { class: "crown", "aria-hidden": "true", text: "♛" }) : null,
    owner ? h("span", { class: "owner", "aria-hidden": "true", text: owner }) : null);
}

// What a play counts as: Scary Mary is what she was declared; numbered cards are "number".
function effectiveKind(play) {
  if (play.card === "scary-mary") return play.as === "pirate" ? "pirate" : "escape";
  const c = skCard(play.card);
  return c.kind === "suit" ? "number" : c.kind;
}

/** Which play takes the trick as it lies (docs/rules.md "Who takes a trick": the first rule that applies). */
export function winningIndex(plays) {
  const kinds = plays.map(effectiveKind);
  const first = (kind) => { const i = kinds.indexOf(kind); return i < 0 ? null : i; };
  const king = first("skull-king");
  const mermaid = first("mermaid");
  const pirate = first("pirate");
  if (king !== null) return mermaid !== null ? mermaid : king;
  if (pirate !== null) return pirate;
  if (mermaid !== null) return mermaid;
  const numbered = kinds.flatMap((kind, i) => (kind === "number" ? [i] : []));
  const highest = (indices) => indices.reduce((best, i) => (skCard(plays[i].card).rank > skCard(plays[best].card).rank ? i : best));
  const blacks = numbered.filter((i) => skCard(plays[i].card).suit === "black");
  if (blacks.length) return highest(blacks);
  if (numbered.length) {
    const suit = skCard(plays[numbered[0]].card).suit;
    return highest(numbered.filter((i) => skCard(plays[i].card).suit === suit));
  }
  return 0; // only Escapes: the first card played takes the trick
}

export function round(view) {
  return t("table.roundOf", { n: view.round, total: view.rounds });
}

export function stat(view, p) {
  const bid = p.bid !== null && p.bid !== undefined ? `${t("play.skull-king.bids")} ${p.bid}` : view.phase === "bidding" ? (p.has_bid ? `✓ ${t("play.skull-king.hasBid")}` : t("play.skull-king.bidding")) : "";
  const dealer = view.dealer === p.seat ? ` · ${t("play.skull-king.dealer")}` : "";
  return `${bid}${bid ? " · " : ""}${t("play.skull-king.tricks")} ${p.tricks_won}${dealer}`;
}

export function prompt(view) {
  if (legal(view, "bid").length) return t("play.skull-king.bid");
  if (legal(view, "play_card").length) return t("play.skull-king.play");
  return null;
}

/** Before a trick is cleared, its winning card is marked where it lies. */
export function before(root, event) {
  if (event.type !== "trick_won") return 0;
  const el = root.querySelector(`.trick [data-anim="k-${CSS.escape(event.card)}"]`);
  if (!el) return 0;
  el.classList.add("wins");
  return 0.5;
}

function trickArea(view, ctx) {
  const won = stepEvent(ctx, "trick_won");
  const last = view.completed_tricks && view.completed_tricks.length ? view.completed_tricks[view.completed_tricks.length - 1] : null;
  const lead = view.lead_suit ? t("play.skull-king.lead", { suit: t("play.skull-king.suit." + view.lead_suit) }) : t("play.skull-king.noLead");
  const chips = [h("span", { class: "chip strong", text: lead }),
    view.own_bid !== null && view.own_bid !== undefined ? h("span", { class: "chip", text: t("play.skull-king.yourBid", { n: view.own_bid }) }) : null];
  let cards;
  if (view.trick.length) {
    const leading = view.trick.length > 1 ? winningIndex(view.trick) : -1;
    cards = view.trick.map((p, i) => card(p.card, { as: p.as, owner: ctx.name(p.seat), seat: p.seat, focusable: true,
      mark: i === leading ? "leading" : null }));
  } else if (last) {
    const shown = won ? "wins" : "last";
    chips.push(h("span", { class: "chip" + (won ? " strong won" : ""), "data-testid": "trick-winner",
      text: won ? t("table.wins", { name: ctx.name(last.winner) }) : t("play.skull-king.lastTrick", { name: ctx.name(last.winner) }) }));
    cards = last.plays.map((p) => h("span", { class: shown === "last" ? "faded" : "" },
      card(p.card, { as: p.as, owner: ctx.name(p.seat), seat: p.seat, mark: p.seat === last.winner && won ? "wins" : null })));
  } else {
    cards = h("span", { class: "muted", text: "—" });
  }
  return h("section", { class: "trick-area", "aria-label": t("play.skull-king.trick") }, h("div", { class: "chips" }, chips),
    h("div", { class: "trick", "data-testid": "trick" }, cards));
}

export function board(view, ctx) {
  const parts = [trickArea(view, ctx)];
  const controls = [];
  const bids = legal(view, "bid");
  if (bids.length) {
    controls.push(h("section", { class: "controls", "aria-label": t("play.skull-king.bid") }, h("span", { class: "controls-label", text: t("play.skull-king.bids") }),
      bids.map((c) => action(ctx, c, String(c.tricks), { cls: "bid" }))));
  }
  if (view.hand) {
    const plays = legal(view, "play_card");
    const byCard = new Map();
    for (const c of plays) byCard.set(c.card, [...(byCard.get(c.card) || []), c]);
    const cards = view.hand.map((id) => {
      const options = byCard.get(id) || [];
      if (options.length > 1) {
        return h("div", { class: "choice" }, card(id), options.map((c) => action(ctx, c, t("play.skull-king.as_" + c.as), { cls: "small" })));
      }
      return action(ctx, options[0] || null, card(id), { cls: "card-btn", fallbackKey: `hand-${id}` });
    });
    controls.push(h("section", { class: "hand-area", "aria-labelledby": "hand-title" }, h("h2", { id: "hand-title", text: t("play.skull-king.hand") }),
      h("div", { class: "hand" + (plays.length ? " live" : "") }, cards)));
  }
  controls.push(leftovers(view, ctx, new Set(["bid", "play_card"])));
  parts.push(dock(controls));
  return h("div", { class: "game skull-king" }, parts);
}

/** The end's score sheet: per round and seat the score, the bid against the tricks won, any bonus. */
export function sheet(view, pad) {
  return [sheetHead(view), h("tbody", {}, pad.rounds.map((line) => h("tr", {},
    h("th", { scope: "row", text: String(line.round) }),
    view.players.map((p) => {
      const cell = line.seats.find((s) => s.seat === p.seat);
      return h("td", { class: cell.bid === cell.tricks ? "made" : "missed" },
        h("span", { class: "pts", text: signed(cell.score) }),
        h("span", { class: "sub", text: t("table.sheetBid", { bid: cell.bid, tricks: cell.tricks }) }),
        cell.bonus ? h("span", { class: "sub bonus", text: t("table.sheetBonus", { n: cell.bonus }) }) : null);
    })))), sheetTotals(view, pad)];
}

/** The rules page's list of the cards that are more than a number (rules.js): the black suit and
 * each special card, with its symbol and what it does. */
export function rulesCards() {
  const entries = [["black", SUITS.black.symbol, t("play.skull-king.suit.black")],
    ...Object.keys(SPECIAL).map((kind) => [kind, SPECIAL[kind].symbol, t("play.skull-king.card." + kind)])];
  return h("dl", { class: "rules-cards" }, entries.map(([kind, symbol, name]) => [
    h("dt", {}, h("span", { class: `rules-symbol ${kind}`, "aria-hidden": "true", text: symbol }), name),
    h("dd", { text: t("rules.card." + kind) }),
  ]));
}
