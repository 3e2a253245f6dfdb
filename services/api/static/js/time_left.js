// The time left on a long clock in words ("2 d 3 h left", "5 h 12 min left"): a turn-based table's
// turn lasts up to a week, where a real-time table's clock counts seconds.
import { t } from "./i18n.js";

/** Words for ``seconds`` left, to the minute. */
export function longTimeLeft(seconds) {
  const minutes = Math.max(0, Math.floor(seconds / 60));
  const d = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  if (d) return t("mine.leftDays", { d, h: hours });
  if (hours) return t("mine.leftHours", { h: hours, m });
  if (m) return t("mine.leftMinutes", { m });
  return t("mine.leftSoon");
}
