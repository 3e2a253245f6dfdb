// The table's log: one line per narrated event, a heading where a round begins, and it follows the
// game: it stays at its newest line unless the player scrolled up to read (and follows again once
// they scroll back down). No smooth scrolling: a smooth scroll still under way made the "at the
// bottom" check fail, and the log stopped following after a dozen lines.
import { t } from "./i18n.js";
import { h } from "./ui.js";

const ROUND_STARTS = new Set(["round_started", "cards_dealt", "draft_opened"]);
const NEAR_BOTTOM = 24;

export function tableLog(list) {
  let logged = 0; // the last version in the log
  let round = 0; // the last round given a heading
  let follow = true;
  list.addEventListener("scroll", () => {
    follow = list.scrollHeight - list.scrollTop - list.clientHeight < NEAR_BOTTOM;
  });

  function line(event) {
    const starts = ROUND_STARTS.has(event.type) && Number.isInteger(event.round) && event.round > round;
    if (starts) round = event.round;
    return h("li", { "data-version": event.version, class: (event.by ? `by-${event.by}` : "") + (starts ? " round-start" : "") },
      starts ? h("span", { class: "log-round", role: "heading", "aria-level": "3", text: t("table.logRound", { n: event.round }) }) : null,
      h("span", { class: "log-text", text: event.text }));
  }

  return {
    logged: () => logged,
    reset() {
      logged = 0;
      round = 0;
      follow = true;
      list.replaceChildren();
      list.dataset.logged = "0";
    },
    /** Lines for ``events`` past the last one logged; the newest in view when following. */
    append(events) {
      const lines = [];
      for (const event of events) {
        if (event.version <= logged) continue;
        logged = event.version;
        if (event.text) lines.push(line(event));
      }
      list.append(...lines);
      list.dataset.logged = String(logged);
      if (follow) list.scrollTop = list.scrollHeight;
    },
    /** Follow the newest line again (the log was shown after being hidden, or was rebuilt). */
    follow() {
      follow = true;
      list.scrollTop = list.scrollHeight;
    },
  };
}
