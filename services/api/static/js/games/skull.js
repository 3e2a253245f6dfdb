// Skull: mats and stacks, your discs, the auction, the reveal, the losses.
import { h } from "../ui.js";
import { t } from "../i18n.js";
import { action, dock, legal, leftovers, sheetHead, sheetTotals } from "./common.js";

export const stylesheet = true; // css/games/skull.css

// How the table's change queue paces Skull's events (table_queue.js): a shuffle and a disc handed
// back are folded into the next step; a challenge's outcome, a lost disc, a player out and the end of
// a round are held long enough to read.
export const pace = {
  silent: new Set(["first_player_choice_requested", "discs_shuffled", "last_chance_returned"]),
  hold: new Set(["challenge_succeeded", "challenge_failed", "disc_lost", "player_eliminated", "round_ended"]),
};

// A disc's face: a symbol as well as a colour.
const DISC = {
  flower: { symbol: "✿", cls: "flower" },
  skull: { symbol: "☠", cls: "skull" },
  last_chance: { symbol: "✿", cls: "last-chance" },
};

/** A disc: face down (``kind`` null: unknown to the viewer), known to its owner, or turned up.
 * ``named``: false inside a button that says the disc's name itself. */
function disc(kind, { faceUp = true, mine = false, small = false, key = null, from = null, named = true } = {}) {
  const anim = key ? { "data-anim": key, "data-from": from } : {};
  const name = (label) => (named ? { role: "img", "aria-label": label } : { "aria-hidden": "true" });
  if (!kind) {
    return h("span", { class: "disc back" + (small ? " small" : ""), ...name(t("play.skull.help.back")),
      "data-help": t("play.skull.help.back"), "data-face": "down", ...anim }, h("span", { "aria-hidden": "true", text: "◍" }));
  }
  const d = DISC[kind];
  return h("span", { class: `disc ${d.cls}` + (faceUp ? " up" : " known") + (mine && !faceUp ? " mine" : "") + (small ? " small" : ""),
    ...name(t("play.skull." + kind)), "data-help": t("play.skull.help." + kind),
    "data-face": faceUp ? "up" : "down", ...anim }, h("span", { "aria-hidden": "true", text: d.symbol }));
}

export function round(view) {
  return t("table.round", { n: view.round });
}

export function stat(view, p) {
  const bits = [t("play.skull.discs", { n: p.discs }), "★".repeat(p.points) + "☆".repeat(Math.max(0, 2 - p.points))];
  if (p.passed) bits.push(t("play.skull.passed"));
  if (p.eliminated) bits.push(t("play.skull.eliminated"));
  return bits.join(" · ");
}

/** What the player may do now, all of it: placing a disc is as legal as opening the bidding. */
export function prompt(view) {
  const phase = view.phase;
  const bid = legal(view, "bid").length > 0;
  const place = legal(view, "place_disc").length > 0;
  if (phase === "placement" || phase === "turns") {
    if (bid && place) return t("table.skull.placeOrBid");
    return bid ? t("table.skull.mustBid") : t("play.skull.place");
  }
  if (phase === "auction") return legal(view, "pass").length ? t("table.skull.raiseOrPass") : t("play.skull.raise");
  if (phase === "reveal") return t("play.skull.flipHint");
  if (phase === "discard_pick" && view.discard) return t("play.skull.discardPick", { name: nameOf(view, view.discard.seat) });
  if (phase === "discard_own") return t("play.skull.discardOwn");
  if (phase === "choose_first_player") return t("play.skull.chooseFirst");
  return null;
}

function nameOf(view, seat) {
  const p = view.players.find((x) => x.seat === seat);
  return p ? p.name : t("table.seat", { n: seat + 1 });
}

function mats(view, flips) {
  return view.stacks.map((stack) => {
    const p = view.players.find((x) => x.seat === stack.seat) || { name: nameOf(view, stack.seat), points: 0 };
    const faceDown = stack.size - stack.turned;
    const mine = stack.seat === view.seat;
    const discs = stack.discs.map((kind, index) => {
      const up = index >= faceDown;
      return disc(kind, { faceUp: up || kind === "last_chance", mine, key: `s-${stack.seat}-${index}`,
        from: (mine && kind ? `key:h-${kind} ` : "") + `seat:${stack.seat}` });
    });
    return h("div", { class: "mat" + (view.to_act.includes(stack.seat) ? " acting" : "") + (p.eliminated ? " out" : "")
      + (mine ? " me" : "") + (flips.has(stack.seat) ? " flippable" : ""), "data-testid": `mat-${stack.seat}` },
      h("div", { class: "mat-head" },
        h("span", { class: "pname", text: p.name }),
        h("span", { class: "stars", role: "img", "aria-label": t("play.skull.points", { n: p.points }), text: "★".repeat(p.points) + "☆".repeat(Math.max(0, 2 - p.points)) })),
      h("div", { class: "stack", role: "group", "aria-label": t("play.skull.stack", { n: stack.size }) }, discs.length ? discs : h("span", { class: "muted", text: "—" })),
      h("div", { class: "mat-foot" },
        h("span", { class: "muted", text: t("play.skull.discs", { n: p.discs }) }),
        p.passed ? h("span", { class: "badge", text: t("play.skull.passed") }) : null,
        p.eliminated ? h("span", { class: "badge warn", text: t("play.skull.eliminated") }) : null,
        p.last_chance ? h("span", { class: "badge", text: t("play.skull.last_chance") }) : null));
  });
}

export function board(view, ctx) {
  const flips = new Map(legal(view, "flip").map((c) => [c.seat, c]));
  const info = [h("span", { class: "chip", text: t("play.skull.onMats", { n: view.discs_on_mats }) })];
  if (view.bid !== null && view.bidder !== null) info.push(h("span", { class: "chip strong", text: t("play.skull.bidBy", { n: view.bid, name: nameOf(view, view.bidder) }) }));
  if (view.challenger !== null && view.phase === "reveal") {
    info.push(h("span", { class: "chip", text: t("play.skull.challenge", { name: nameOf(view, view.challenger), n: view.bid }) }));
    if (view.flips_left !== null) info.push(h("span", { class: "chip", text: t("play.skull.flipsLeft", { n: Math.max(0, view.flips_left) }) }));
  }
  const parts = [h("div", { class: "chips" }, info), h("div", { class: "mats" }, mats(view, flips))];

  const controls = [];
  if (flips.size) {
    controls.push(h("section", { class: "controls", "aria-label": t("table.skull.flips") },
      [...flips.values()].map((c) => action(ctx, c, [h("span", { "aria-hidden": "true", text: "↻ " }),
        t("table.skull.flipOf", { name: nameOf(view, c.seat) })], { cls: "primary flip" }))));
  }
  const bids = legal(view, "bid");
  const pass = legal(view, "pass")[0];
  if (bids.length || pass) {
    controls.push(h("section", { class: "controls", "aria-label": t("play.skull.bid") },
      h("span", { class: "controls-label", text: t("play.skull.bid") }),
      bids.map((c) => action(ctx, c, String(c.count), { cls: "bid" })),
      pass ? action(ctx, pass, t("play.skull.pass"), { cls: "ghost" }) : null));
  }
  if (view.hand) {
    const place = new Map(legal(view, "place_disc").map((c) => [c.disc, c]));
    const kinds = Object.entries(view.hand).filter(([, n]) => n > 0);
    controls.push(h("section", { class: "hand-area", "aria-labelledby": "hand-title" },
      h("h2", { id: "hand-title", text: t("play.skull.hand") }),
      h("div", { class: "hand" + (place.size ? " live" : "") }, kinds.map(([kind, n]) => action(ctx, place.get(kind) || null,
        [disc(kind, { key: `h-${kind}`, named: false }), h("span", { class: "disc-label", text: `${t("play.skull." + kind)} ×${n}` })],
        { cls: "disc-btn", fallbackKey: `hand-${kind}` }))),
      view.lost && view.lost.length ? h("p", { class: "muted lost" }, t("play.skull.lost") + ": ", view.lost.map((k) => disc(k, { small: true }))) : null));
  }
  const picks = legal(view, "discard_pick");
  if (picks.length) {
    controls.push(h("section", { class: "controls" }, h("span", { class: "controls-label", text: prompt(view) }),
      picks.map((c) => action(ctx, c, [disc(null, { named: false }), " ", t("play.skull.position", { n: c.position + 1 })], { cls: "disc-btn" }))));
  }
  const own = legal(view, "discard_own");
  if (own.length) {
    controls.push(h("section", { class: "controls" }, h("span", { class: "controls-label", text: t("play.skull.discardOwn") }),
      own.map((c) => action(ctx, c, [disc(c.disc, { named: false }), " ", t("play.skull." + c.disc)], { cls: "disc-btn" }))));
  }
  const first = legal(view, "choose_first_player");
  if (first.length) {
    controls.push(h("section", { class: "controls" }, h("span", { class: "controls-label", text: t("play.skull.chooseFirst") }),
      first.map((c) => action(ctx, c, nameOf(view, c.seat)))));
  }
  controls.push(leftovers(view, ctx, new Set(["place_disc", "bid", "pass", "flip", "discard_pick", "discard_own", "choose_first_player"])));
  parts.push(dock(controls));
  return h("div", { class: "game skull" }, parts);
}

/** The end's score sheet: per round the challenge and its outcome, and every seat's points after it. */
export function sheet(view, pad) {
  const lines = pad.rounds.map((line) => h("tr", {},
    h("th", { scope: "row" }, String(line.round), h("span", { class: "sub",
      text: `${t("table.sheetChallenge", { name: nameOf(view, line.challenger), n: line.bid })} · `
        + t(line.outcome === "success" ? "table.sheetWon" : "table.sheetLost") })),
    view.players.map((p) => h("td", { "aria-label": t("table.sheetPoints", { n: line.points[p.seat] }) },
      h("span", { class: "pts stars", text: "★".repeat(line.points[p.seat]) + "☆".repeat(Math.max(0, 2 - line.points[p.seat])) })))));
  return [sheetHead(view), h("tbody", {}, lines), sheetTotals(view, pad)];
}
