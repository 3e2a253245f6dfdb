// Your seat when a bot plays it (a banner saying why, and the way back after timeouts) and leaving
// the table (a dialog that says what leaving means before anything is sent).
import { t } from "./i18n.js";
import { api, ApiError } from "./api.js";
import { h, toast } from "./ui.js";

/** Why a bot plays the viewer's seat (``"timeouts" | "left" | "host"``), or null. A server
 * without ``players[].takeover`` yet only says ``bot`` (and ``left``): a bot on a seat that was not
 * left took it over after timeouts. */
export function takeoverOf(view) {
  if (view.seat === null || view.seat === undefined) return null;
  const me = (view.players || []).find((p) => p.seat === view.seat);
  if (!me) return null;
  if (me.takeover !== undefined) return me.takeover || null;
  return me.bot ? (me.left ? "left" : "timeouts") : null;
}

/** The banner over the table while a bot plays the seat for ``why``; after timeouts it gives the
 * way back. */
export function takeoverBanner(why, id, done) {
  if (!why) return null;
  const back = why === "timeouts" ? h("button", { class: "primary small", "data-testid": "reclaim", text: t("table.reclaim"),
    onclick: async (event) => {
      event.currentTarget.disabled = true;
      try {
        await api(`/games/${id}/reclaim`, { method: "POST", body: {} });
        toast(t("table.reclaimed"), "ok");
      } catch (error) {
        const key = error instanceof ApiError ? `table.err.${error.code}` : null;
        const said = key ? t(key) : key;
        toast(said && said !== key ? said : error.message);
      }
      done();
    } }) : null;
  return h("div", { class: "banner takeover", role: "status", "data-testid": "takeover-banner", "data-reason": why },
    h("span", { class: "banner-icon", "aria-hidden": "true", text: "⚙" }),
    h("span", { class: "banner-text", text: t("table.takeover." + why) }), back);
}

/** "Leave table": a modal dialog first; ``leave`` runs only on its confirmation. */
export function leaveDialog(leave) {
  let opener = null;
  const cancel = h("button", { type: "button", class: "button", "data-testid": "leave-cancel", text: t("table.leaveCancel"),
    onclick: () => dialog.close("cancel") });
  const confirm = h("button", { type: "button", class: "button danger", "data-testid": "leave-confirm", text: t("table.leaveConfirm"),
    onclick: () => dialog.close("leave") });
  const dialog = h("dialog", { class: "leave-dialog", "data-testid": "leave-dialog", "aria-labelledby": "leave-title",
    "aria-describedby": "leave-text" },
    h("h2", { id: "leave-title", text: t("table.leaveTitle") }),
    h("p", { id: "leave-text", text: t("table.leaveText") }),
    h("div", { class: "actions" }, cancel, confirm));
  dialog.addEventListener("close", () => {
    const chosen = dialog.returnValue;
    dialog.returnValue = "";
    if (opener && opener.isConnected) opener.focus();
    if (chosen === "leave") leave();
  });
  document.body.append(dialog);
  return {
    open(from) {
      opener = from || document.activeElement;
      dialog.returnValue = "";
      dialog.showModal();
      cancel.focus(); // the safe choice first: Enter or Escape leaves nothing
    },
    remove: () => dialog.remove(),
  };
}
