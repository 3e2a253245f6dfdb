// A table still waiting for players: the way to sit down (as the logged-in account, or under a
// name) below what the visitor is invited to, the link to share (table_invite.js), and the host's
// button that fills the empty seats with bots.
import { games } from "./api.js";
import { t } from "./i18n.js";
import { h, store, toast } from "./ui.js";
import { hosted, fillWithBots } from "./hosted.js";

let botLevel = "normal"; // the host's pick in the waiting panel's level menu, while this page lives
import { account, joinRefused } from "./account.js";
import { invitation, inviteBox } from "./table_invite.js";

/** ``joined`` runs once this browser has a seat; ``refresh`` reads the table again. */
export function waitingPanel(view, id, { joined, refresh }) {
  // The host and the seated players get the link to send (table_invite.js); a visitor sees what
  // they are invited to, above the one button that seats them.
  const parts = view.seat !== null || hosted().includes(id) ? [inviteBox(view, id)] : [];
  if (view.seat === null) {
    const me = account(); // a logged-in browser sits down as its account, under the account's name
    const form = h("form", { class: "join-form", "data-testid": "join-form", onsubmit: async (event) => {
      event.preventDefault();
      const who = me ? null : form.elements.name.value.trim();
      if (!me && !who) return toast(t("lobby.nameRequired"));
      if (who) store("tablestream.name", who);
      try {
        await games.join(id, who, form.elements.client_seed.value || null);
        await joined();
      } catch (error) { joinRefused(error); }
    } },
      h("h2", { text: t("table.join") }),
      me ? h("p", { class: "as-account", "data-testid": "playing-as" }, t("account.sitAs", { name: me.name }))
        : h("div", { class: "field" }, h("label", { for: "join-name", text: t("lobby.name") }),
          h("input", { id: "join-name", name: "name", maxlength: 40, value: store("tablestream.name") || "" })),
      // Jargon a first-time player need not see: their own entropy for the shuffles, under a fold.
      h("details", { class: "advanced" }, h("summary", { text: t("lobby.advanced") }),
        h("div", { class: "field" }, h("label", { for: "join-seed", text: t("lobby.clientSeed") }),
          h("input", { id: "join-seed", name: "client_seed", maxlength: 64 }),
          h("p", { class: "help", text: t("lobby.clientSeedHelp") }))),
      h("button", { class: "primary", type: "submit", text: t("table.joinBtn") }));
    parts.unshift(invitation(view), form);
  }
  if (hosted().includes(id)) {
    // The level picked lives in botLevel, not in this element: a redraw (a live update, "Add one
    // bot") patches the page's select in place and hands it these handlers, while this element,
    // which the handlers would otherwise read, stays detached with the value it was drawn with.
    const level = h("select", { id: "fill-bots-level", "data-testid": "fill-bots-level",
      onchange: (event) => { botLevel = event.target.value; } },
      ...["easy", "normal", "strong"].map((value) => h("option", { value, text: t(`table.bot_level.${value}`),
        ...(value === botLevel ? { selected: "" } : {}) })));
    parts.push(h("div", { class: "field inline" },
      h("label", { for: "fill-bots-level", text: t("lobby.botLevel") }), level,
      // one seat at a time, each at the level picked before: a table of a strong and an easy bot
      h("button", { class: "small", "data-testid": "add-bot", text: t("lobby.addBot"),
        onclick: async () => { await fillWithBots(id, botLevel, 1); refresh(); } }),
      h("button", { class: "small", "data-testid": "fill-bots", text: t("lobby.bots"),
        onclick: async () => { await fillWithBots(id, botLevel); refresh(); } })));
  }
  return h("section", { class: "panel waiting" }, parts);
}
