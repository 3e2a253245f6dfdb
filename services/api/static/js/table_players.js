// The players' strip of a table and of a replay: each seat's name, badges, clock and score.
import { t } from "./i18n.js";
import { h } from "./ui.js";

/** Seconds left on the clock of a view, corrected by the server's clock at sending. */
export function secondsLeft(clock, receivedAt) {
  if (!clock || clock.deadline_ms == null) return null;
  const skew = clock.now_ms - receivedAt;
  return Math.max(0, Math.ceil((clock.deadline_ms - (Date.now() + skew)) / 1000));
}

export function playersPanel(view, mod, { receivedAt = Date.now(), interactive = true, actor = null } = {}) {
  const toAct = new Set(view.to_act || []);
  const rows = [];
  for (let seat = 0; seat < view.seats; seat++) {
    const p = (view.players || []).find((x) => x.seat === seat);
    if (!p) {
      rows.push(h("li", { class: "player empty" }, h("span", { class: "pname muted", text: t("table.emptySeat") })));
      continue;
    }
    const acting = toAct.has(seat) && view.status === "playing";
    const left = interactive ? secondsLeft(view.clock, receivedAt) : null;
    rows.push(h("li", { class: "player" + (acting ? " acting" : "") + (seat === view.seat ? " me" : "")
      + ((view.winners || []).includes(seat) ? " winner" : "") + (seat === actor ? " actor" : ""), "data-seat": seat },
      h("span", { class: "turn-dot", "aria-hidden": "true" }),
      h("span", { class: "pname" }, p.name,
        seat === view.seat ? h("span", { class: "you", text: ` (${t("table.you")})` }) : null,
        p.bot ? h("span", { class: "badge", "data-testid": "bot-badge", title: t("table.bot_level.label"),
          text: t("table.bot") + (p.bot_level ? " · " + t(`table.bot_level.${p.bot_level}`) : "") }) : null,
        p.left ? h("span", { class: "badge warn", text: t("table.left") }) : null),
      acting && left !== null ? h("span", { class: "clock", "data-clock": "", text: "⏱ " + t("table.timeLeft", { s: left }) }) : null,
      h("span", { class: "pstat" }, view.status !== "waiting" ? mod.stat(view, p) : null),
      h("span", { class: "pscore", title: t("table.scores"), text: view.status !== "waiting" ? String(view.scores[seat]) : "" })));
  }
  return h("ol", { class: "players", "aria-label": t("table.scores"), tabindex: "0" }, rows); // a strip that scrolls on a phone: keyboard users scroll it too
}
