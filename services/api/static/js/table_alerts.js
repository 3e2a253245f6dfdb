// Knowing it is your turn: the tab's title while you are awaited, a warning before your time runs
// out, and, if you ask for them, a beep and a browser notification (only while the tab is hidden).
// Also the table's settings (animation speed, sound, notifications), remembered in this browser.
import { t } from "./i18n.js";
import { h, store, toast } from "./ui.js";
import { SPEEDS } from "./table_queue.js";

const KEYS = { speed: "tablestream.speed", sound: "tablestream.sound", notify: "tablestream.notify" };

export function speedName() {
  const chosen = store(KEYS.speed);
  if (chosen && chosen in SPEEDS) return chosen;
  return matchMedia("(prefers-reduced-motion: reduce)").matches ? "instant" : "normal";
}

export function speedFactor() {
  return SPEEDS[speedName()];
}

/** Seconds left at which the warning shows: 10, or half the turn when turns are shorter than 20 s. */
export function warnAt(clock) {
  const turn = clock && clock.turn_seconds;
  if (!turn) return 10;
  return turn >= 20 ? 10 : Math.max(2, Math.floor(turn / 2));
}

let audio = null;

function beep() {
  if (!store(KEYS.sound)) return;
  try {
    audio = audio || new AudioContext();
    if (audio.state === "suspended") audio.resume();
    for (const [at, pitch] of [[0, 660], [0.16, 880]]) {
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = pitch;
      gain.gain.setValueAtTime(0.0001, audio.currentTime + at);
      gain.gain.exponentialRampToValueAtTime(0.2, audio.currentTime + at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, audio.currentTime + at + 0.14);
      tone.connect(gain).connect(audio.destination);
      tone.start(audio.currentTime + at);
      tone.stop(audio.currentTime + at + 0.15);
    }
  } catch { /* no audio here: the title and the banner still say it */ }
}

function notify(title, body, tag) {
  if (!store(KEYS.notify) || !document.hidden || typeof Notification === "undefined" || Notification.permission !== "granted") return;
  try {
    const note = new Notification(title, { body, tag });
    note.onclick = () => { window.focus(); note.close(); };
  } catch { /* some browsers allow notifications only from a service worker */ }
}

/** The settings menu of the table's header: animation speed and sound. ``changed`` runs after the
 * speed changed. */
export function settingsMenu(changed) {
  const speeds = Object.keys(SPEEDS).map((name) => h("label", { class: "radio" },
    h("input", { type: "radio", name: "table-speed", value: name, checked: speedName() === name,
      onchange: () => { store(KEYS.speed, name); changed(); } }), t("table.speed." + name)));
  const sound = h("input", { type: "checkbox", id: "table-sound", checked: Boolean(store(KEYS.sound)),
    onchange: (event) => { store(KEYS.sound, event.target.checked); if (event.target.checked) beep(); } });
  return h("details", { class: "table-settings", "data-testid": "table-settings" },
    h("summary", { class: "button ghost small", title: t("table.settings") },
      h("span", { "aria-hidden": "true", text: "⚙" }), h("span", { class: "sr-only", text: t("table.settings") })),
    h("div", { class: "settings-panel" },
      h("fieldset", {}, h("legend", { text: t("table.speed") }), speeds),
      h("div", { class: "field check" }, sound, h("label", { for: "table-sound", text: t("table.sound") }))));
}

function notificationsOn() {
  return Boolean(store(KEYS.notify)) && typeof Notification !== "undefined" && Notification.permission === "granted";
}

/** One click turns notifications on (the browser asks its permission the first time) or off. */
export function notifyButton() {
  const button = h("button", { type: "button", class: "ghost small notify-toggle", "data-testid": "notify-toggle",
    title: t("table.notify"), "aria-pressed": String(notificationsOn()),
    onclick: async () => {
      if (notificationsOn()) {
        store(KEYS.notify, false);
      } else if (typeof Notification !== "undefined") {
        if (Notification.permission === "default") await Notification.requestPermission();
        store(KEYS.notify, Notification.permission === "granted");
        toast(Notification.permission === "granted" ? t("table.notifyOn") : t("table.notifyBlocked"),
          Notification.permission === "granted" ? "ok" : "error");
      } else {
        toast(t("table.notifyBlocked"));
      }
      button.setAttribute("aria-pressed", String(notificationsOn()));
    } },
  h("span", { "aria-hidden": "true", text: "🔔︎" }), h("span", { class: "sr-only", text: t("table.notify") }));
  return button;
}

/** The title, the warning banner and the signals, kept in step with the newest view. */
export function turnAlerts({ banner, gameTitle, id, base }) {
  let awaited = false;
  let warned = false;

  return {
    /** ``mine``: the newest view awaits this seat; ``left``: seconds on its clock (or null). */
    update(mine, left, clock) {
      const hurry = mine && left !== null && left <= warnAt(clock);
      if (mine && !awaited) {
        beep();
        notify(t("table.titleTurn"), t("table.notifyBody", { game: gameTitle }), `tablestream-${id}`);
      }
      if (hurry && !warned) beep();
      awaited = mine;
      warned = hurry;
      const page = `${gameTitle} · ${base}`;
      document.title = hurry ? `⏰ ${t("table.titleHurry", { n: left })} ${t("table.titleTurn")} · ${page}`
        : mine ? `▶ ${t("table.titleTurn")} · ${page}` : page;
      banner.hidden = !hurry;
      if (hurry) {
        if (!banner.childElementCount) {
          banner.append(h("span", { class: "warn-text", text: t("table.warning") }), h("span", { class: "warn-count", "aria-hidden": "true" }));
        }
        banner.lastChild.textContent = `⏱ ${t("table.seconds", { n: left })}`;
      } else if (banner.childElementCount) {
        banner.replaceChildren();
      }
    },
    close() {
      document.title = base;
    },
  };
}
