// A game's board, found by convention: the module js/games/<package>.js (the package from
// GET /games/options, game_info.js), and its stylesheet css/games/<package>.css, added once, when the
// module exports ``stylesheet = true``. A game without a board module of its own (the server answers
// 404 for it) is played on the default board, js/games/default.js, which shows any game's state and
// moves.
import { packageOf } from "./game_info.js";

const DEFAULT = "default";
const boards = new Map(); // package -> the promise of its module
const sheets = new Map(); // stylesheet address -> the promise of its loading

/** The address of a file of the client's tree, under the same version as this module. */
function address(path) {
  return new URL(path, import.meta.url).href;
}

// Whether the server has no such file: a module that failed for another reason (the network, a
// script error) is a failure, not a game without a board.
async function missing(url) {
  try {
    const response = await fetch(url, { method: "HEAD" });
    return response.status === 404;
  } catch {
    return false;
  }
}

/** Adds the stylesheet's <link> once; resolves when it has loaded, so that the board is first drawn
 * styled. One that cannot load is taken out again (and tried again by the next page): the board
 * still plays, plainly. */
export function linkStylesheet(name) {
  const href = address(`../css/games/${name}.css`);
  if (!sheets.has(href)) {
    sheets.set(href, new Promise((resolve) => {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = href;
      link.dataset.stylesheet = name; // css/games/<name>.css
      link.addEventListener("load", () => resolve(link), { once: true });
      link.addEventListener("error", () => {
        sheets.delete(href);
        link.remove();
        resolve(null);
      }, { once: true });
      document.head.append(link);
    }));
  }
  return sheets.get(href);
}

async function importBoard(name) {
  const url = address(`./games/${name}.js`);
  let mod;
  try {
    mod = await import(url);
  } catch (error) {
    if (name !== DEFAULT && await missing(url)) return importBoard(DEFAULT);
    throw error;
  }
  if (mod.stylesheet) await linkStylesheet(name);
  return mod;
}

/** The board module of ``game`` (its own, else the default board), its stylesheet loaded. */
export async function loadGame(game) {
  const name = await packageOf(game);
  if (!boards.has(name)) {
    const loading = importBoard(name);
    boards.set(name, loading);
    loading.catch(() => boards.delete(name)); // asked again by the next page
  }
  return boards.get(name);
}
