// A seat's name as the page shows it: its player's, else "Seat n" counted from 1.
import { t } from "./i18n.js";

export function playerName(view, seat) {
  const player = (view.players || []).find((p) => p.seat === seat);
  return player ? player.name : t("table.seat", { n: seat + 1 });
}
