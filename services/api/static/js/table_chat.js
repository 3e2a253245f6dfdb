// The table's chat: a panel beside the log (on a phone, a sheet above the controls dock that one
// tap on the header's "Chat" button opens), quick reactions, mute for yourself, report, and the
// host's switch. Records come on the game's live stream (table_live.js passes them here) and, for
// a finished table, from GET /games/{id}/chat. Every word a player typed is set as textContent:
// nothing in a message is ever read as HTML.
import { api, ApiError } from "./api.js";
import { t } from "./i18n.js";
import { h, mount, store, toast } from "./ui.js";
import { hosted } from "./hosted.js";

export const REACTIONS = [
  { key: "gg", icon: "👏" },
  { key: "gl", icon: "🍀" },
  { key: "oops", icon: "😅" },
  { key: "hurry", icon: "⏳" },
  { key: "thumbs_up", icon: "👍", iconOnly: true },
  { key: "laugh", icon: "😄", iconOnly: true },
  { key: "wow", icon: "😮", iconOnly: true },
];
const ICONS = Object.fromEntries(REACTIONS.map((r) => [r.key, r.icon]));
const REASONS = ["abuse", "spam", "coaching", "other"];
const MAX_TEXT = 280;
const PHONE = "(max-width: 520px)";
const ENDED = ["finished", "expired", "closed"];

// A person at the table reads the chat numbered by table number while the game runs (records marked
// ``numbering: "table"``, counting nothing of the rail); everyone else, and everyone once it ended,
// by record number. Records are kept by numbering and number.
const keyOf = (record) => (record.numbering === "table" ? "t" : "") + record.n;
const said = (record) => `${record.from}@${record.at}`; // the same message in either numbering

/** What a reader sees of a message's sender. */
export function senderName(record) {
  if (record.name) return record.name;
  return t("chat.spectator", { tag: String(record.from || "").slice(5, 9) });
}

/** A reaction in words (with its picture), in the page's language. */
export function reactionText(key) {
  return `${ICONS[key] || ""} ${t(`chat.reaction.${key}`)}`.trim();
}

/** One record as a list item (text only); ``actions`` adds the mute and report buttons. */
export function messageItem(record, { mine = false, actions = null } = {}) {
  const said = record.text !== undefined
    ? h("span", { class: "chat-text", text: record.text })
    : h("span", { class: "chat-text chat-reaction", text: reactionText(record.reaction) });
  return h("li", { class: `chat-msg ${record.channel}` + (mine ? " mine" : ""), "data-n": record.n, "data-from": record.from,
    "data-testid": "chat-message" },
    h("span", { class: "chat-who" },
      h("span", { class: "chat-name", text: senderName(record) }),
      mine ? h("span", { class: "muted", text: ` (${t("chat.you")})` }) : null,
      record.channel === "rail" ? h("span", { class: "badge rail", text: t("chat.rail") }) : null),
    said, actions);
}

export function tableChat({ id, root }) {
  const muteKey = `tablestream.chat.muted.${id}`;
  const meKey = `tablestream.chat.me.${id}`;
  const records = new Map(); // keyOf(record) -> record
  let after = 0; // the last number received, in this reader's numbering (for resuming the stream)
  let view = null; // the newest view of the table (seat, status)
  let enabled = true;
  let unread = 0;
  let sending = false;
  let own = null; // this page's stream of a finished table (the game's stream has ended)
  let loadedEnd = false;
  let known = new Set(); // said() of what was read before the chat was read again (not unread)
  let closed = false;
  const muted = new Map((store(muteKey) || []).map((m) => [m.from, m.name]));

  const list = h("ol", { class: "chat-list", "data-testid": "chat-list", tabindex: "0", "aria-live": "polite",
    "aria-labelledby": "chat-title" });
  const empty = h("p", { class: "chat-empty muted", "data-testid": "chat-empty" });
  const note = h("p", { class: "chat-note muted", "data-testid": "chat-note" });
  const mutedLine = h("p", { class: "chat-muted muted", "data-testid": "chat-muted" });
  const input = h("input", { type: "text", id: `chat-input-${id}`, class: "chat-input", maxlength: String(MAX_TEXT),
    autocomplete: "off", enterkeyhint: "send", "data-testid": "chat-input" });
  const inputLabel = h("label", { class: "sr-only", for: input.id });
  const sendButton = h("button", { type: "submit", class: "small", "data-testid": "chat-send" });
  const form = h("form", { class: "chat-form", onsubmit: (event) => { event.preventDefault(); sendText(); } },
    inputLabel, input, sendButton);
  const reactions = h("div", { class: "chat-reactions", role: "group", "data-testid": "chat-reactions" });
  const hostButton = h("button", { type: "button", class: "ghost small chat-switch", "data-testid": "chat-switch", hidden: true,
    onclick: () => setEnabled(!enabled) });
  const closeButton = h("button", { type: "button", class: "ghost small chat-close", "data-testid": "chat-close",
    onclick: () => setOpen(false) });
  const title = h("h2", { id: "chat-title" });
  const panel = h("section", { class: "panel chat-panel", id: `chat-panel-${id}`, "aria-labelledby": "chat-title", "data-testid": "chat-panel" },
    h("div", { class: "chat-head" }, title, hostButton, closeButton), note, list, empty, mutedLine, reactions, form);
  const badge = h("span", { class: "chat-badge", "data-testid": "chat-unread", hidden: true });
  const badgeWords = h("span", { class: "sr-only" });
  const toggle = h("button", { type: "button", class: "ghost small chat-toggle", "data-testid": "chat-toggle",
    "aria-controls": panel.id, "aria-expanded": "false", onclick: () => setOpen(!root.classList.contains("chat-open")) });
  panel.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && root.classList.contains("chat-open")) {
      setOpen(false);
      toggle.focus();
    }
  });

  function me() {
    if (view && view.seat !== null && view.seat !== undefined) return `seat:${view.seat}`;
    return store(meKey);
  }

  function isVisible() {
    return root.classList.contains("chat-open") || !window.matchMedia(PHONE).matches;
  }

  function setOpen(open) {
    root.classList.toggle("chat-open", open);
    toggle.setAttribute("aria-expanded", String(open));
    if (open) {
      unread = 0;
      drawBadge();
      list.scrollTop = list.scrollHeight;
      input.focus();
    }
  }

  function drawBadge() {
    badge.hidden = unread === 0;
    badge.textContent = String(unread);
    badgeWords.textContent = unread ? t("chat.unread", { count: unread }) : "";
  }

  function relabel() {
    title.textContent = t("chat.title");
    mount(toggle, h("span", { "aria-hidden": "true", text: "💬︎ " }), t("chat.toggle"), badge, badgeWords);
    closeButton.textContent = "✕";
    closeButton.setAttribute("aria-label", t("chat.close"));
    closeButton.title = t("chat.close");
    sendButton.textContent = t("chat.send");
    inputLabel.textContent = t("chat.message");
    reactions.setAttribute("aria-label", t("chat.reactions"));
    mount(reactions, REACTIONS.map(({ key, icon, iconOnly }) => h("button", { type: "button", class: "ghost small reaction",
      "data-reaction": key, "data-testid": `react-${key}`, title: t(`chat.reaction.${key}`), "aria-label": t(`chat.reaction.${key}`),
      onclick: () => post({ reaction: key }) }, iconOnly ? icon : `${icon} ${t(`chat.reaction.${key}`)}`)));
    drawState();
    redraw();
  }

  function drawState() {
    const seated = view && view.seat !== null && view.seat !== undefined;
    const over = view && (view.status === "finished" || view.status === "expired");
    input.placeholder = t(seated ? "chat.placeholder" : "chat.placeholderRail");
    note.textContent = !enabled ? t("chat.off") : over ? t("chat.merged") : !seated ? t("chat.railHidden") : "";
    note.hidden = !note.textContent;
    // off only when chat is off: a control disabled while a message is on its way would drop the focus
    for (const el of [input, sendButton, ...reactions.querySelectorAll("button")]) el.disabled = !enabled;
    hostButton.hidden = !hosted().includes(id);
    hostButton.textContent = t(enabled ? "chat.turnOff" : "chat.turnOn");
    const names = [...muted.values()].filter(Boolean);
    mount(mutedLine, names.length ? t("chat.mutedCount", { names: names.join(", ") }) : null,
      ...[...muted.entries()].map(([from, name]) => h("button", { type: "button", class: "ghost small", "data-testid": "chat-unmute",
        "data-from": from, text: t("chat.unmute", { name: name || from }), onclick: () => setMuted(from, name, false) })));
    mutedLine.hidden = muted.size === 0;
  }

  function actionsFor(record) {
    if (record.kind !== "message") return null;
    const name = senderName(record);
    const mine = record.from === me();
    const reportBox = h("span", { class: "chat-report-box", hidden: true },
      h("span", { class: "muted", text: t("chat.reportWhy") + " " }),
      REASONS.map((reason) => h("button", { type: "button", class: "ghost small", "data-testid": `report-${reason}`,
        text: t(`chat.reason.${reason}`), onclick: () => report(record.n, reason, reportBox) })),
      h("button", { type: "button", class: "ghost small", text: t("chat.cancel"), onclick: () => { reportBox.hidden = true; } }));
    return h("span", { class: "chat-actions" },
      mine ? null : h("button", { type: "button", class: "ghost small", "data-testid": "chat-mute", title: t("chat.mute", { name }),
        "aria-label": t("chat.mute", { name }), text: "🔇︎", onclick: () => setMuted(record.from, name, true) }),
      mine ? null : h("button", { type: "button", class: "ghost small", "data-testid": "chat-report", title: t("chat.reportTitle"),
        "aria-label": t("chat.reportTitle"), text: "⚑", onclick: () => { reportBox.hidden = !reportBox.hidden; } }),
      reportBox);
  }

  function item(record) {
    if (record.kind === "settings") {
      return h("li", { class: "chat-msg settings muted", "data-n": record.n, text: t(record.enabled ? "chat.turnOn" : "chat.off") });
    }
    const li = messageItem(record, { mine: record.from === me(), actions: actionsFor(record) });
    li.hidden = muted.has(record.from);
    return li;
  }

  function redraw() {
    const follow = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    mount(list, [...records.values()].sort((a, b) => a.n - b.n).map(item));
    empty.textContent = t("chat.empty");
    empty.hidden = [...list.children].some((li) => !li.hidden);
    if (follow) list.scrollTop = list.scrollHeight;
  }

  // The numbering this reader reads in now: by table number while it sits at a running table.
  function tableNumbered() {
    return view.seat !== null && view.seat !== undefined && !ENDED.includes(view.status) && !loadedEnd;
  }

  function receive(record) {
    if (closed || records.has(keyOf(record))) return;
    // A record in the other numbering was sent before a seat change or the end (by a stream of
    // then, or one opened with a resume point of then): what it says is read again in this one.
    if (view !== null && (record.numbering === "table") !== tableNumbered()) return;
    after = Math.max(after, record.n);
    records.set(keyOf(record), record);
    if (record.kind === "settings") {
      enabled = record.enabled;
      drawState();
    }
    const li = item(record);
    const next = [...list.children].find((el) => Number(el.dataset.n) > record.n);
    const follow = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    list.insertBefore(li, next || null);
    empty.hidden = [...list.children].some((el) => !el.hidden);
    if (follow || record.from === me()) list.scrollTop = list.scrollHeight;
    if (!li.hidden && record.kind === "message" && record.from !== me() && !isVisible() && !known.has(said(record))) {
      unread += 1;
      drawBadge();
    }
  }

  function forget() {
    known = new Set([...known, ...[...records.values()].map(said)]);
    records.clear();
    after = 0;
    redraw();
  }

  function setMuted(from, name, on) {
    if (on) muted.set(from, name);
    else muted.delete(from);
    store(muteKey, [...muted.entries()].map(([f, n]) => ({ from: f, name: n })));
    for (const li of list.querySelectorAll(".chat-msg")) if (li.dataset.from) li.hidden = muted.has(li.dataset.from);
    empty.hidden = [...list.children].some((li) => !li.hidden);
    drawState();
  }

  async function post(body) {
    if (sending) return false;
    sending = true;
    drawState();
    try {
      const { message } = await api(`/games/${id}/chat`, { method: "POST", body });
      if (message.channel === "rail") store(meKey, message.from);
      receive(message);
      return true;
    } catch (error) {
      toast(error.message);
      if (error instanceof ApiError && error.code === "chat_off") {
        enabled = false;
      }
      return false;
    } finally {
      sending = false;
      drawState();
    }
  }

  async function sendText() {
    const text = input.value.trim();
    if (!text) return;
    if (await post({ text })) input.value = "";
    input.focus();
  }

  async function report(n, reason, box) {
    try {
      await api(`/games/${id}/chat/report`, { method: "POST", body: { messages: [n], reason } });
      mount(box, h("span", { class: "muted", "data-testid": "chat-reported", text: t("chat.reported") }));
    } catch (error) {
      toast(error.message);
    }
  }

  async function setEnabled(on) {
    try {
      const answer = await api(`/games/${id}/chat/settings`, { method: "POST", body: { enabled: on } });
      enabled = answer.enabled;
      drawState();
    } catch (error) {
      toast(error.message);
    }
  }

  // Everything this reader may see, page by page (a finished table: merged).
  async function load() {
    let from = 0;
    for (;;) {
      const page = await api(`/games/${id}/chat?after=${from}&limit=500`);
      enabled = page.enabled;
      for (const record of page.messages) receive(record);
      from = page.next;
      if (!page.more) break;
    }
    drawState();
  }

  // A finished table: the game's stream is over, but the players may still say goodbye. The same
  // live stream, for the chat only (the server keeps it open a while after the end).
  function listenAfterEnd() {
    if (own || closed || typeof EventSource === "undefined") return;
    const version = view ? view.version : 0;
    own = new EventSource(`/games/${id}/live?chat=1&last_event_id=${version}&chat_after=${after}`);
    own.addEventListener("chat", (message) => receive(JSON.parse(message.data)));
    own.onerror = () => {
      if (own && own.readyState === EventSource.CLOSED) own = null;
    };
  }

  relabel();
  return {
    panel,
    toggle,
    relabel,
    /** For the live stream: resume after this record, and take each record it brings. */
    live: { after: () => after, receive },
    /** The table's newest view: who this page is, and whether the game ended (then: merged). */
    view(next) {
      const seatChanged = view !== null && (view.seat ?? null) !== (next.seat ?? null);
      view = next;
      if (ENDED.includes(next.status) && !loadedEnd) {
        // Everything, numbered by record: what was read so far is read again in that numbering.
        loadedEnd = true;
        forget();
        load().then(listenAfterEnd, (error) => toast(error.message));
      } else if (seatChanged && !loadedEnd) {
        // Sat down or left: everything this reader may see now, read again in its new numbering
        // (a stream already open after the seat change resumed at a number of the old one).
        forget();
        load().catch((error) => toast(error.message));
      }
      drawState();
    },
    close() {
      closed = true;
      if (own) own.close();
      own = null;
    },
  };
}

/** The chat on the replay page: each message appears at the version the game was at when it was
 * sent (its record says so), the ones sent at the version shown marked as just said. Muted senders
 * stay muted here too. */
export function replayChat(id) {
  const muted = new Set((store(`tablestream.chat.muted.${id}`) || []).map((m) => m.from));
  let records = [];
  let at = 0;
  const title = h("h2", { id: "replay-chat-title" });
  const list = h("ol", { class: "chat-list", "data-testid": "replay-chat", tabindex: "0", "aria-labelledby": "replay-chat-title" });
  const empty = h("p", { class: "chat-empty muted" });
  const panel = h("section", { class: "panel chat-panel replay-chat", "aria-labelledby": "replay-chat-title", hidden: true },
    title, list, empty);

  function draw(version = at) {
    at = version;
    title.textContent = t("chat.title");
    const said = records.filter((r) => r.kind === "message" && r.version <= at && !muted.has(r.from));
    mount(list, said.map((record) => {
      const li = messageItem(record);
      li.append(h("span", { class: "muted chat-at", text: ` · ${t("chat.atMove", { version: record.version })}` }));
      if (record.version === at) li.classList.add("now");
      return li;
    }));
    empty.textContent = t("chat.empty");
    empty.hidden = said.length > 0;
    list.scrollTop = list.scrollHeight;
  }

  async function load() {
    let from = 0;
    const read = [];
    for (;;) {
      const page = await api(`/games/${id}/chat?after=${from}&limit=500`);
      read.push(...page.messages);
      from = page.next;
      if (!page.more) break;
    }
    records = read;
    panel.hidden = !records.some((r) => r.kind === "message");
    draw();
  }

  return { panel, load, draw };
}
