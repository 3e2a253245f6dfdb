// The lobby form's "Turn-based" choice: shown beside the player count rather than among the
// options, and, once ticked, the time per move offered in words (1 hour to 7 days) instead of the
// real-time table's seconds. A turn-based table's turns last up to a week (GET /games/options and
// docs/api.md: a real-time table's at most a day), and it waits a day for its players.
import { t } from "./i18n.js";
import { h } from "./ui.js";

export const TURN_CHOICES = [["turn.h1", 3600], ["turn.h12", 43200], ["turn.d1", 86400], ["turn.d3", 259200],
  ["turn.d7", 604800]];
const DEFAULT_TURN = 86400;

/** Wire the turn-based choice of a create form built by lobby.js (no-op if the options lack it). */
export function turnBasedChoice(form) {
  const box = form.elements.turn_based;
  const seconds = form.elements.turn_seconds;
  const options = form.querySelector("details.options");
  if (!box || !seconds || !options) return;
  const field = box.closest(".field");
  field.classList.add("turn-based-choice");
  options.before(field); // a choice about how to play, not a detail: always in sight
  const realTime = seconds;
  const label = form.querySelector(`label[for="${realTime.id}"]`);
  const realLabel = label ? label.textContent : "";
  const inWords = h("select", { id: realTime.id, name: realTime.name, "data-testid": "turn-duration",
    "aria-describedby": realTime.getAttribute("aria-describedby") },
  TURN_CHOICES.map(([key, value]) => h("option", { value: String(value), selected: value === DEFAULT_TURN, text: t(key) })));
  let moved = false;

  function follow() {
    if (box.checked && !moved) {
      realTime.replaceWith(inWords);
      if (label) label.textContent = t("opt.turn_based.time");
      moved = true;
    } else if (!box.checked && moved) {
      inWords.replaceWith(realTime);
      if (label) label.textContent = realLabel;
      moved = false;
    }
  }
  box.addEventListener("change", follow);
  follow();
}
