// A game's leaderboard (/rankings/<game>): rated players best first, paged; tabs for the games.
import { accounts, ApiError } from "./api.js";
import { t, onLangChange } from "./i18n.js";
import { gameList, gamesKnown, gameTitle } from "./game_info.js";
import { h, mount, store } from "./ui.js";
import { account, playerHref } from "./account.js";


export const PAGE = 20;
/** Rated games before a rating stops being provisional (projections.ratings.PROVISIONAL_GAMES). */
export const PROVISIONAL_GAMES = 5;
/** Distinct established opponents a rating must meet first (projections.ratings.PROVISIONAL_OPPONENTS). */
export const PROVISIONAL_OPPONENTS = 3;

/** The offset of a page's ?offset= query: a non-negative multiple of the page size. */
export function offsetOf(search, size) {
  const value = Number(new URLSearchParams(search).get("offset"));
  return Number.isInteger(value) && value > 0 ? value - (value % size) : 0;
}

/** "1–20 of 57"-style pager: previous and next buttons, the range shown, focus kept on a button. */
export function pager(offset, size, total, go) {
  const prev = h("button", { type: "button", class: "small", "data-testid": "prev-page", disabled: offset <= 0,
    text: "← " + t("board.prev"), onclick: () => go(Math.max(0, offset - size), "prev-page") });
  const next = h("button", { type: "button", class: "small", "data-testid": "next-page", disabled: offset + size >= total,
    text: t("board.next") + " →", onclick: () => go(offset + size, "next-page") });
  const range = total ? t("board.range", { from: offset + 1, to: Math.min(total, offset + size), total }) : "";
  if (offset === 0 && total <= size) return null; // one page: nothing to turn
  return h("nav", { class: "pager", "aria-label": t("board.pages") }, prev,
    h("span", { class: "range", "aria-live": "polite", text: range }), next);
}

/** A rating as people read it: the server's ``display`` (1000 for a new player, never negative). */
export function rating(r) {
  return String(r.display);
}

/** The "provisional" mark of a rating with too few rated games yet (nothing otherwise). */
export function provisional(r) {
  if (!r.provisional) return null;
  return h("span", { class: "badge provisional", "data-testid": "provisional",
    title: t("rating.provisionalHint", { n: r.games, games: PROVISIONAL_GAMES, opponents: PROVISIONAL_OPPONENTS }),
    text: t("rating.provisional") });
}

/** The tooltip of a rating: the model's own numbers, for those who know them. */
export function details(r) {
  return `μ ${r.mu.toFixed(2)} · σ ${r.sigma.toFixed(2)} · μ − 3σ ${r.rating.toFixed(2)}`;
}

export async function render(main, game) {
  await gamesKnown(); // the games the server offers (game_info.js)
  const GAMES = gameList().map((g) => g.game);
  if (!game || (GAMES.length && !GAMES.includes(game))) {
    if (!GAMES.length) {
      mount(main, h("p", { class: "panel error", text: t("err.network") }));
      return null;
    }
    game = GAMES.includes(store("tablestream.game")) ? store("tablestream.game") : GAMES[0];
    history.replaceState(null, "", `/rankings/${game}`);
  }
  let offset = offsetOf(location.search, PAGE);
  let page = null;
  let problem = null;
  const body = h("div", { class: "board-body" });

  /** The page around the board (title, explanation, the games' tabs): drawn once, and again only
   *  when the language changes, so a page arriving never takes the focus from a tab. */
  function shell() {
    mount(main, h("div", { class: "rankings", "data-testid": "leaderboard", "data-game": game },
      h("div", { class: "page-head" }, h("h1", { text: t("board.title") }),
        h("p", { class: "muted", text: t("rating.explain", { games: PROVISIONAL_GAMES, opponents: PROVISIONAL_OPPONENTS }) })),
      h("nav", { class: "tabs", "aria-label": t("lobby.game") }, GAMES.map((g) =>
        h("a", { href: `/rankings/${g}`, "data-nav": "", class: "tab", "aria-current": g === game ? "page" : null,
          text: gameTitle(g) }))),
      h("section", { class: "panel" }, body)));
  }

  /** The board itself: loading, a problem, or the page of players. */
  function draw(focus) {
    const me = account();
    if (problem) return mount(body, h("p", { class: "error", text: problem }));
    if (!page) return mount(body, h("p", { class: "muted", text: t("common.loading") }));
    // Provisional players are not listed (projections.ratings): say how many, and where to see one's own.
    const hidden = page.provisional_hidden ? h("p", { class: "muted", "data-testid": "provisional-hidden" },
      t("board.provisionalHidden", { n: page.provisional_hidden, games: PROVISIONAL_GAMES, opponents: PROVISIONAL_OPPONENTS }),
      me ? " " : null, me ? h("a", { href: playerHref(me.name), "data-nav": "", text: t("board.yourPage") }) : null) : null;
    if (!page.total) {
      return mount(body, page.provisional_hidden ? hidden : h("p", { class: "empty", "data-testid": "board-empty",
        text: t("board.empty", { game: gameTitle(game) }) }));
    }
    mount(body,
      h("table", { class: "data board-table" },
        h("caption", { class: "sr-only", text: `${t("board.title")} · ${gameTitle(game)}` }),
        h("thead", {}, h("tr", {},
          h("th", { scope: "col", class: "num", text: t("board.rank") }),
          h("th", { scope: "col", text: t("board.player") }),
          h("th", { scope: "col", class: "num", text: t("board.rating") }),
          h("th", { scope: "col", class: "num", text: t("board.games") }))),
        h("tbody", {}, page.entries.map((entry) => {
          const mine = me && me.account_id === entry.account_id;
          return h("tr", { class: mine ? "me" : null, "data-account": entry.account_id },
            h("td", { class: "num rank", text: String(entry.rank) }),
            h("th", { scope: "row" }, h("a", { href: playerHref(entry.name), "data-nav": "", text: entry.name }),
              mine ? h("span", { class: "you", text: ` (${t("table.you")})` }) : null),
            h("td", { class: "num strong", title: details(entry) },
              h("span", { class: "value", "data-testid": "rating", text: rating(entry) }),
              entry.provisional ? h("br") : null, provisional(entry)), // below: the column stays narrow on a phone
            h("td", { class: "num", text: String(entry.games) }));
        }))),
      pager(offset, PAGE, page.total, go), hidden);
    if (focus) {
      const button = body.querySelector(`[data-testid=${focus}]:not(:disabled)`) || body.querySelector(".pager button:not(:disabled)");
      if (button) button.focus();
    }
  }

  async function load(focus) {
    try {
      page = await accounts.leaderboard(game, offset, PAGE);
      problem = null;
    } catch (error) {
      problem = error instanceof ApiError && error.code === "unknown_game" ? t("board.unknownGame") : error.message;
    }
    draw(focus);
  }

  function go(next, focus) {
    offset = next;
    history.pushState(null, "", next ? `/rankings/${game}?offset=${next}` : `/rankings/${game}`);
    load(focus);
  }

  shell();
  draw();
  await load();
  return onLangChange(() => { shell(); draw(); });
}
