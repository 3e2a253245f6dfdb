// Invitations at a waiting table: for the host and the seated players, the link to send (a private
// table's carries its invite code; GET /games/{id}/invite) with "Copy link" and, where the device
// has a share sheet (phones), "Share"; for a visitor who has no seat yet, what they are invited to:
// the game, its options in words (option_texts.js) and who already sits at the table.
import { api } from "./api.js";
import { t } from "./i18n.js";
import { gameOf, gameTitle, loadGames } from "./game_info.js";
import { choiceLabel, optionLabel } from "./option_texts.js";
import { h, mount, toast } from "./ui.js";

const links = new Map(); // table id -> {private, invite, link}, once read
// table id -> what "Copy link" said last ({text, ok}): a view drawn after the click says it still
const copyResults = new Map();
let schemaLoading = null; // GET /games/options (game_info.js), once asked here

function fillLater(testid, promise, draw) {
  promise.then(() => {
    const box = document.querySelector(`[data-testid="${testid}"]`);
    if (box) mount(box, draw());
  }).catch(() => {});
}

/** The link box: the address to send, "Copy link" with a visible confirmation, and "Share". */
export function inviteBox(view, id) {
  const known = links.get(id);
  if (!known) {
    const read = api(`/games/${id}/invite`).then((found) => links.set(id, found));
    fillLater("invite-box", read, () => inviteParts(view, id, links.get(id)));
  }
  return h("div", { class: "invite-box", "data-testid": "invite-box" }, known ? inviteParts(view, id, known) : []);
}

function inviteParts(view, id, found) {
  const address = new URL(found.link, location.origin).href;
  const said = copyResults.get(id);
  const status = h("p", { class: said ? `copied ${said.ok ? "ok" : "bad"}` : "copied", role: "status",
    "aria-live": "polite", "data-testid": "copy-status", text: said ? said.text : "" });
  const tell = (ok) => {
    const result = { ok, text: t(ok ? "invite.copied" : "invite.copyFailed") };
    copyResults.set(id, result);
    status.textContent = result.text;
    status.className = `copied ${ok ? "ok" : "bad"}`;
  };
  const field = h("input", { id: "invite-link", class: "mono", readonly: true, value: address,
    "data-testid": "invite-link", onclick: (event) => event.target.select() });
  const copy = h("button", { type: "button", class: "primary", "data-testid": "copy-link", text: t("invite.copy"),
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(address);
        tell(true);
      } catch {
        field.select();
        tell(false);
      }
    } });
  const share = typeof navigator.share === "function"
    ? h("button", { type: "button", "data-testid": "share-link", text: t("invite.share"), onclick: async () => {
      try {
        await navigator.share({ title: t("invite.shareText", { game: gameTitle(view.game) }), url: address });
      } catch (error) {
        if (error && error.name !== "AbortError") toast(t("invite.copyFailed"));
      }
    } })
    : null;
  return [
    h("p", { class: "share", text: found.private ? t("invite.privateNote") : t("table.share") }),
    h("label", { for: "invite-link", class: "sr-only", text: t("invite.link") }),
    h("div", { class: "invite-row" }, field, copy, share),
    status,
  ];
}

/** What a visitor without a seat is invited to: the game, its options in words, who sits there. */
export function invitation(view) {
  if (!gameOf(view.game) && !schemaLoading) {
    schemaLoading = loadGames().finally(() => { schemaLoading = null; });
    fillLater("invitation-options", schemaLoading, () => optionWords(view));
  }
  const seated = view.players.filter((p) => !p.left);
  return h("div", { class: "invitation", "data-testid": "invitation" },
    h("h2", { class: "invited", text: t("invite.invited", { game: gameTitle(view.game) }) }),
    h("div", { class: "invitation-grid" },
      h("section", { "aria-labelledby": "inv-options" },
        h("h3", { id: "inv-options", text: t("invite.options") }),
        h("div", { "data-testid": "invitation-options" }, optionWords(view))),
      h("section", { "aria-labelledby": "inv-seated" },
        h("h3", { id: "inv-seated", text: t("invite.seated") }),
        seated.length
          ? h("ul", { class: "seated", "data-testid": "invitation-seated" }, seated.map((p) =>
            h("li", {}, h("span", { text: p.name }), p.bot ? h("span", { class: "badge", text: t("table.bot") }) : null)))
          : h("p", { class: "muted", text: t("invite.nobody") }),
        h("p", { class: "muted", text: t("invite.freeSeats", { n: view.seats - seated.length }) }))));
}

function valueWords(option, value) {
  if (value === null || value === undefined) return t("lobby.unset");
  if (option.name === "first_player") return t("table.seat", { n: Number(value) + 1 });
  if (option.type === "boolean") return value ? t("common.yes") : t("common.no");
  if (option.type === "choice") return choiceLabel(option, value);
  return String(value);
}

function optionWords(view) {
  const game = gameOf(view.game);
  if (!game) return [];
  const changed = game.options.filter((o) => o.name in view.options && view.options[o.name] !== o.default);
  if (!changed.length) return [h("p", { class: "standard", text: t("invite.standard") })];
  return [h("dl", { class: "option-words" }, changed.map((o) => [
    h("dt", { text: optionLabel(o) }), h("dd", { text: valueWords(o, view.options[o.name]) })]))];
}
