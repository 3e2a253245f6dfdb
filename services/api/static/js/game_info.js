// What the client knows of each game, learnt from the server (GET /games/options, read once per
// page load): its title, blurb, package (the name of its board module js/games/<package>.js and its
// stylesheet css/games/<package>.css), which way its scores run, its player counts and options.
// The client keeps no table of games of its own: a game the server lists is a game the pages show.
import { games } from "./api.js";
import { has, t } from "./i18n.js";

let loading = null; // the one request, while it stands; a failed one is asked again next time
let schema = null;
const known = new Map(); // game name -> its entry of GET /games/options

/** The whole answer of GET /games/options (games, practice seed, languages), read once. */
export function loadGames() {
  if (!loading) {
    loading = games.options().then((answer) => {
      schema = answer;
      known.clear();
      for (const entry of answer.games) known.set(entry.game, entry);
      return answer;
    }, (error) => {
      loading = null;
      throw error;
    });
  }
  return loading;
}

/** Resolves once the games are known, or once asking failed (the pages then show games by name). */
export function gamesKnown() {
  return loadGames().then(() => true, () => false);
}

/** Every game the server offers, in its order ([] until known). */
export function gameList() {
  return schema ? schema.games : [];
}

/** One game's entry ({game, title, blurb, package, lower_score_wins, players, options}), or null. */
export function gameOf(game) {
  return known.get(game) || null;
}

/** How people write the game's name: the glossary's words when it has them, else the server's title. */
export function gameTitle(game) {
  if (has(`game.${game}`)) return t(`game.${game}`);
  const entry = known.get(game);
  return entry ? entry.title : game;
}

export function blurb(game) {
  const entry = known.get(game);
  return entry ? entry.blurb : "";
}

/** The module name shared by the game's board and stylesheet (``six_nimmt``). */
export async function packageOf(game) {
  await loadGames();
  const entry = known.get(game);
  if (!entry) throw new Error(`${game}: not a game the server offers`);
  return entry.package;
}

/** Whether the player with the fewest points wins (6 nimmt!'s bullheads). */
export function lowerScoreWins(game) {
  const entry = known.get(game);
  return Boolean(entry && entry.lower_score_wins);
}
