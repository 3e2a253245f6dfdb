// A game's rules in short (/rules/<game>), as Tablestream plays them (docs/rules.md), in the
// page's language: goal, material, a round step by step, scoring and the end, what stays secret,
// the special cards, and every table option that changes play with its default. The words are the
// glossary's (rules.*, and the lobby's opt.* for the options), so the page, the lobby and the log
// name things alike.
import { games } from "./api.js";
import { has, onLangChange, t } from "./i18n.js";
import { SUITS, skCard } from "./names.js";
import { choiceLabel, optionHelp, optionLabel } from "./option_texts.js";
import { h, mount, store } from "./ui.js";
import { navigate } from "./app.js";

const GAMES = ["skull", "six-nimmt", "skull-king"];
const SPECIAL = ["escape", "pirate", "mermaid", "scary-mary", "skull-king"];
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

function section(id, title, ...content) {
  return h("section", { class: "panel rules-part", "aria-labelledby": id, "data-testid": id },
    h("h2", { id, text: title }), ...content);
}

function variants(options) {
  const played = options.filter((option) => !ONLINE.has(option.name));
  return h("dl", { class: "rules-options" }, played.map((option) => [
    h("dt", { text: optionLabel(option) }),
    h("dd", {}, h("span", { text: optionHelp(option) }), " ",
      h("span", { class: "rules-default", text: t("rules.default", { value: defaultWords(option) }) })),
  ]));
}

function specialCards() {
  const entries = [["black", SUITS.black.symbol, t("suit.black")],
    ...SPECIAL.map((kind) => [kind, skCard(kind).symbol, t("card." + kind)])];
  return h("dl", { class: "rules-cards" }, entries.map(([kind, symbol, name]) => [
    h("dt", {}, h("span", { class: `rules-symbol ${kind}`, "aria-hidden": "true", text: symbol }), name),
    h("dd", { text: t("rules.card." + kind) }),
  ]));
}

export async function render(main, game) {
  let options = null; // this game's table options, from GET /games/options

  function draw() {
    if (!GAMES.includes(game)) {
      return mount(main, h("p", { class: "panel", "data-testid": "rules-unknown", text: t("board.unknownGame") }));
    }
    const title = t("game." + game);
    const key = (part) => `rules.${game}.${part}`;
    const end = has(key("end")) ? h("p", { text: t(key("end")) })
      : h("ul", {}, numbered(key("end")).map((text) => h("li", { text })));
    const start = h("button", { type: "button", class: "primary", "data-testid": "rules-start",
      text: t("rules.start", { game: title }),
      onclick: () => { store("tablestream.game", game); navigate("/"); } });
    mount(main, h("article", { class: "rules", "data-testid": "rules", "data-game": game },
      h("div", { class: "page-head" }, h("h1", { text: t("rules.title", { game: title }) }),
        h("p", { class: "rules-lead", text: t(key("lead")) })),
      h("nav", { class: "tabs", "aria-label": t("rules.others") }, GAMES.map((g) =>
        h("a", { href: `/rules/${g}`, "data-nav": "", class: "tab", "aria-current": g === game ? "page" : null,
          text: t("game." + g) }))),
      h("div", { class: "rules-grid" },
        section("rules-goal", t("rules.goal"), h("p", { text: t(key("goal")) })),
        section("rules-material", t("rules.material"), h("p", { text: t(key("material")) })),
        section("rules-play", t("rules.play"), h("ol", {}, numbered(key("play")).map((text) => h("li", { text })))),
        section("rules-end", t("rules.end"), end),
        section("rules-hidden", t("rules.hidden"), h("p", { text: t(key("hidden")) })),
        game === "skull-king" ? section("rules-cards", t("rules.cards"), specialCards()) : null,
        options ? section("rules-variants", t("rules.variants"), h("p", { class: "muted", text: t("rules.variantsLead") }),
          variants(options)) : null,
        section("rules-online", t("rules.online"), h("ul", {}, numbered("rules.online").map((text) => h("li", { text }))))),
      h("p", { class: "rules-actions" }, start)));
  }

  draw();
  try {
    const schema = await games.options();
    options = (schema.games.find((g) => g.game === game) || { options: [] }).options;
  } catch {
    options = null; // the summary stands without the options' list
  }
  draw();
  return onLangChange(draw);
}
