// A game's rules in short (/rules/<game>), as Tablestream plays them (docs/rules.md), in the
// page's language: goal, material, a round step by step, scoring and the end, what stays secret,
// the game's own part where its board module adds one (Skull King's special cards:
// games/skull_king.js rulesCards), and every table option that changes play with its default. The
// words are the glossary's (rules.*, and the lobby's opt.* for the options), so the page, the lobby
// and the log name things alike; a game the glossary has no rules for gets its title, blurb, player
// counts and options.
import { has, onLangChange, t } from "./i18n.js";
import { gameList, gameOf, gamesKnown, gameTitle } from "./game_info.js";
import { loadGame } from "./game_board.js";
import { choiceLabel, optionHelp, optionLabel } from "./option_texts.js";
import { h, mount, store } from "./ui.js";
import { navigate } from "./router.js";

// Options about the table rather than the game: the "Playing online" section says what they do.
const ONLINE = new Set(["turn_seconds", "expire_minutes", "takeover_after", "turn_based", "private"]);
const SEATS = new Set(["first_player"]); // numbered from 1 for people; empty means drawn by lot

/** The entries prefix.1, prefix.2, ... that the glossary has, in order. */
function numbered(prefix) {
  const items = [];
  for (let i = 1; has(`${prefix}.${i}`); i++) items.push(t(`${prefix}.${i}`));
  return items;
}

function defaultWords(option) {
  const value = option.default;
  if (option.type === "boolean") return t(value ? "rules.on" : "rules.off");
  if (value === null || value === undefined) return SEATS.has(option.name) ? t("lobby.firstRandom") : t("rules.off");
  if (option.type === "choice") return choiceLabel(option, value);
  return String(value);
}

function section(id, heading, ...content) {
  return h("section", { class: "panel rules-part", "aria-labelledby": id, "data-testid": id },
    h("h2", { id, text: heading }), ...content);
}

function variants(options) {
  const played = options.filter((option) => !ONLINE.has(option.name));
  return h("dl", { class: "rules-options" }, played.map((option) => [
    h("dt", { text: optionLabel(option) }),
    h("dd", {}, h("span", { text: optionHelp(option) }), " ",
      h("span", { class: "rules-default", text: t("rules.default", { value: defaultWords(option) }) })),
  ]));
}

export async function render(main, game) {
  await gamesKnown(); // the games the server offers, each with its title and table options (game_info.js)
  let mod = null; // the game's board module, once loaded: it may add a part of its own (rulesCards)

  function draw() {
    const entry = gameOf(game);
    const key = (part) => `rules.${game}.${part}`;
    if (!entry && !has(key("lead"))) {
      return mount(main, h("p", { class: "panel", "data-testid": "rules-unknown", text: t("board.unknownGame") }));
    }
    const name = gameTitle(game);
    const lead = has(key("lead")) ? t(key("lead")) : [entry.blurb, t("lobby.playersRange", entry.players)].filter(Boolean).join(" · ");
    const play = numbered(key("play"));
    const ends = numbered(key("end"));
    const end = has(key("end")) ? h("p", { text: t(key("end")) }) : ends.length ? h("ul", {}, ends.map((text) => h("li", { text }))) : null;
    const told = (part, heading) => (has(key(part)) ? section(`rules-${part}`, heading, h("p", { text: t(key(part)) })) : null);
    const others = gameList().length ? gameList().map((g) => g.game) : [game];
    const start = h("button", { type: "button", class: "primary", "data-testid": "rules-start",
      text: t("rules.start", { game: name }),
      onclick: () => { store("tablestream.game", game); navigate("/"); } });
    mount(main, h("article", { class: "rules", "data-testid": "rules", "data-game": game },
      h("div", { class: "page-head" }, h("h1", { text: t("rules.title", { game: name }) }),
        h("p", { class: "rules-lead", text: lead })),
      h("nav", { class: "tabs", "aria-label": t("rules.others") }, others.map((g) =>
        h("a", { href: `/rules/${g}`, "data-nav": "", class: "tab", "aria-current": g === game ? "page" : null,
          text: gameTitle(g) }))),
      h("div", { class: "rules-grid" },
        told("goal", t("rules.goal")),
        told("material", t("rules.material")),
        play.length ? section("rules-play", t("rules.play"), h("ol", {}, play.map((text) => h("li", { text })))) : null,
        end ? section("rules-end", t("rules.end"), end) : null,
        told("hidden", t("rules.hidden")),
        mod && mod.rulesCards ? section("rules-cards", t("rules.cards"), mod.rulesCards()) : null,
        entry ? section("rules-variants", t("rules.variants"), h("p", { class: "muted", text: t("rules.variantsLead") }),
          variants(entry.options)) : null,
        section("rules-online", t("rules.online"), h("ul", {}, numbered("rules.online").map((text) => h("li", { text }))))),
      h("p", { class: "rules-actions" }, start)));
  }

  draw();
  const off = onLangChange(draw);
  if (gameOf(game)) {
    try {
      mod = await loadGame(game);
    } catch {
      mod = null; // the rules stand without the game's own part
    }
    draw();
  }
  return off;
}
