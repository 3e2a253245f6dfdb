// The tables this browser created (the host's controls show on them: the lobby's, the waiting
// table's, the chat's switch) and filling their empty seats with bots.
import { games, ApiError } from "./api.js";
import { t } from "./i18n.js";
import { store, toast } from "./ui.js";

export function hosted() {
  return store("tablestream.hosted") || [];
}

export function rememberHosted(id) {
  store("tablestream.hosted", [id, ...hosted().filter((x) => x !== id)].slice(0, 50));
}

export async function fillWithBots(id, level, count) {
  try {
    await games.bots(id, level, count);
  } catch (error) {
    toast(error instanceof ApiError && error.status === 404 ? t("lobby.botsMissing") : error.message);
  }
}
