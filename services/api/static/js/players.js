// A player's page (/players/<name>): ratings per game and the finished games, newest first, paged,
// each with its seats, the result, the rating change and links to the replay and the export.
import { accounts, ApiError } from "./api.js";
import { t, lang, onLangChange } from "./i18n.js";
import { gameList, gamesKnown, gameTitle } from "./game_info.js";
import { h, mount } from "./ui.js";
import { account, playerHref } from "./account.js";
import { details, offsetOf, pager, provisional, rating } from "./rankings.js";


const PAGE = 10;

function when(seconds) {
  return new Intl.DateTimeFormat(lang(), { dateStyle: "medium", timeStyle: "short" }).format(new Date(seconds * 1000));
}

function signed(delta) {
  const text = String(Math.abs(delta));
  return delta > 0 ? `+${text}` : delta < 0 ? `−${text}` : `±${text}`;
}

export async function render(main, rawName) {
  await gamesKnown(); // the games, their titles (game_info.js)
  let name;
  try {
    name = decodeURIComponent(rawName);
  } catch {
    name = rawName;
  }
  let profile = null;
  let page = null;
  let problem = null;
  let offset = offsetOf(location.search, PAGE);
  const games = h("div", { class: "history-body" });

  function draw(focus) {
    if (problem) return mount(main, h("section", { class: "panel" }, h("h1", { text: name }), h("p", { class: "error", text: problem })));
    if (!profile) return mount(main, h("p", { class: "loading", text: t("common.loading") }));
    const me = account();
    const mine = me && me.account_id === profile.account_id;
    document.title = `${profile.name} · Tablestream`;
    mount(main, h("div", { class: "player-page", "data-testid": "player", "data-account": profile.account_id },
      h("div", { class: "page-head" },
        h("h1", {}, profile.name, mine ? h("span", { class: "badge host", text: t("table.you") }) : null),
        h("p", { class: "muted", text: t("player.lead") })),
      h("section", { class: "ratings", "aria-label": t("account.ratings") }, gameList().map(({ game }) => {
        const r = profile.ratings[game];
        return h("a", { class: "rating-card" + (r ? "" : " none"), href: `/rankings/${game}`, "data-nav": "",
          "data-game": game, "data-testid": "rating-card", title: r ? details(r) : null },
          h("span", { class: "game-title", text: gameTitle(game) }),
          h("span", { class: "big" }, h("span", { "data-testid": "rating", text: r ? rating(r) : "—" }),
            r && r.provisional ? " " : null, r ? provisional(r) : null),
          h("span", { class: "muted", text: r ? t("rating.ratedGames", { n: r.games }) : t("player.unrated") }));
      })),
      h("section", { class: "panel", "aria-labelledby": "history-title" },
        h("h2", { id: "history-title", text: t("player.history") }), games)));
    drawGames(focus);
  }

  function drawGames(focus) {
    if (!page) return mount(games, h("p", { class: "muted", text: t("common.loading") }));
    if (!page.total) return mount(games, h("p", { class: "empty", text: t("player.noGames") }));
    mount(games, h("ol", { class: "history", "data-testid": "history", start: offset + 1 }, page.games.map(entry)),
      pager(offset, PAGE, page.total, go));
    if (focus) {
      const button = games.querySelector(`[data-testid=${focus}]:not(:disabled)`) || games.querySelector(".pager button:not(:disabled)");
      if (button) button.focus();
    }
  }

  function entry(game) {
    const you = game.you;
    const seats = [...game.seats].sort((a, b) => a.rank - b.rank || a.seat - b.seat);
    let change;
    if (you && you.rating) {
      const { before, after } = you.rating;
      const delta = after.display - before.display;
      change = h("span", { class: "delta " + (delta > 0 ? "up" : delta < 0 ? "down" : ""), "data-testid": "rating-change",
        title: t("rating.change", { before: rating(before), after: rating(after) }) },
      signed(delta), h("span", { class: "muted", text: ` → ${rating(after)}` }),
      after.provisional ? " " : null, provisional(after));
    } else {
      change = h("span", { class: "badge", "data-testid": "rating-change",
        text: t("player.unratedBecause." + (game.unrated_reason || "anonymous_seats")) });
    }
    return h("li", { class: "hist" + (you && you.winner ? " won" : ""), "data-game-id": game.game_id },
      h("div", { class: "hist-head" },
        h("span", { class: "game-title", text: gameTitle(game.game) }),
        you ? h("span", { class: "result", "data-testid": "result" },
          you.winner ? h("span", { class: "trophy", "aria-hidden": "true", text: "🏆︎ " }) : null,
          t("player.place", { rank: you.rank, of: game.seats.length })) : null,
        change,
        h("time", { class: "muted when", datetime: new Date(game.finished_at * 1000).toISOString(), text: when(game.finished_at) })),
      h("ol", { class: "seats", "aria-label": t("player.seats") }, seats.map((s) => {
        const self = you && s.seat === you.seat;
        const label = s.account ? h("a", { href: playerHref(s.account.name), "data-nav": "", text: s.name }) : h("span", { text: s.name });
        return h("li", { class: "seat-chip" + (self ? " self" : "") + (s.winner ? " winner" : "") },
          h("span", { class: "place", text: `${s.rank}.` }), label,
          s.forfeit ? h("span", { class: "badge", "data-testid": "forfeit", text: t("player.forfeit." + s.forfeit) }) : null,
          h("span", { class: "score", title: t("table.scores"), text: String(s.score) }));
      })),
      // a private table's history has no links: its id is shown only to holders of its invite link
      game.replay ? h("p", { class: "hist-links" },
        h("a", { href: game.replay, "data-nav": "", "data-testid": "replay-link", text: t("table.replay") }),
        h("a", { href: game.export, download: `tablestream-${game.game_id}.json`, "data-testid": "export-link",
          text: t("player.export") })) : null);
  }

  async function loadGames(focus) {
    try {
      page = await accounts.history(profile.account_id, offset, PAGE);
    } catch (error) {
      return mount(games, h("p", { class: "error", text: error.message }));
    }
    drawGames(focus);
  }

  function go(next, focus) {
    offset = next;
    const base = playerHref(profile.name);
    history.pushState(null, "", next ? `${base}?offset=${next}` : base);
    loadGames(focus);
  }

  draw();
  try {
    profile = await accounts.profile(name);
  } catch (error) {
    problem = error instanceof ApiError && error.code === "account_not_found" ? t("player.notFound", { name }) : error.message;
    draw();
    return null;
  }
  draw();
  await loadGames();
  const off = onLangChange(() => draw());
  return () => { off(); document.title = "Tablestream"; };
}
