// Game titles, disc and card faces: symbols and letters as well as colours.
import { t } from "./i18n.js";

export const TITLES = { skull: "Skull", "six-nimmt": "6 nimmt!", "skull-king": "Skull King" };

export const DISC = {
  flower: { symbol: "✿", cls: "flower" },
  skull: { symbol: "☠", cls: "skull" },
  last_chance: { symbol: "✿", cls: "last-chance" },
};

// Suits are told apart by colour, symbol and their name in the page's language (never a letter).
export const SUITS = {
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

/** A Skull King card id as {kind, suit?, rank?, symbol, label, short}: ``short`` is the rank and
 * the suit's symbol for a numbered card, the card's name for a special one. */
export function skCard(id) {
  const [head, tail] = [id.slice(0, id.lastIndexOf("-")), id.slice(id.lastIndexOf("-") + 1)];
  if (SUITS[head] && /^\d+$/.test(tail)) {
    const suit = SUITS[head];
    return { kind: "suit", suit: head, rank: Number(tail), symbol: suit.symbol, short: `${tail}${suit.symbol}`,
      label: `${t("suit." + head)} ${tail}` };
  }
  const kind = SPECIAL[id] ? id : head;
  const special = SPECIAL[kind];
  return { kind, symbol: special.symbol, short: t("card." + kind), label: t("card." + kind) };
}

export function bullheadClass(n) {
  return { 1: "bh1", 2: "bh2", 3: "bh3", 5: "bh5", 7: "bh7" }[n] || "bh1";
}

export function playerName(view, seat) {
  const player = (view.players || []).find((p) => p.seat === seat);
  return player ? player.name : t("table.seat", { n: seat + 1 });
}
