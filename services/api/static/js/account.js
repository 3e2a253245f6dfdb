// Who this browser is logged in as. The token itself is the server's HttpOnly ts_account cookie;
// the page keeps only the public part ({account_id, name}) in localStorage, so that a visitor who
// never logged in costs no request, and checks it against GET /accounts/me once per page load.
import { accounts, ApiError } from "./api.js";
import { t, has } from "./i18n.js";
import { store, toast } from "./ui.js";

const KEY = "tablestream.account";
const listeners = new Set();
let current = store(KEY) || null; // {account_id, name, has_password?, ratings?} or null
let checked = null; // the promise of this page load's check

/** The account as last known (synchronous; null when logged out). */
export function account() {
  return current;
}

export function onAccountChange(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const shown = (a) => JSON.stringify(a ? [a.account_id, a.name, a.has_password] : null);

function set(next) {
  const changed = shown(current) !== shown(next);
  current = next;
  store(KEY, next ? { account_id: next.account_id, name: next.name } : null);
  if (changed) for (const listener of listeners) listener(next);
}

/** The account the server knows this browser as (asked once per page load, or again if `fresh`). */
export function whoami(fresh = false) {
  if (checked && !fresh) return checked;
  if (!current && !fresh) {
    checked = Promise.resolve(null);
    return checked;
  }
  checked = accounts.me().then((me) => { set(me); return me; }, (error) => {
    if (error instanceof ApiError && error.status === 401) {
      forget();
      return null;
    }
    return current; // the server is unreachable: keep what we knew
  });
  return checked;
}

/** Log this browser out locally and ask the server to clear (and revoke) its cookie. */
export async function logout() {
  try {
    await accounts.logout();
  } finally {
    set(null);
  }
}

// The cookie no longer works (revoked elsewhere, or the server's data is gone): clear it quietly.
function forget() {
  set(null);
  accounts.logout().catch(() => {});
}

export async function register(name, password) {
  set(await accounts.register(name, password));
  return whoami(true);
}

export async function login(name, password) {
  set(await accounts.login(name, password));
  return whoami(true);
}

/** Set the password (`current`: the one the account has, when it has one); the server logs every
 * other device of the account out. */
export async function setPassword(password, current) {
  await accounts.setPassword(password, current);
  return whoami(true);
}

/** A sentence for an account error, in the page's language: the account form's own wording of a
 * name or password rule when it has one, else the error code in words (ApiError's message). */
export function accountError(error) {
  if (!(error instanceof ApiError)) return error.message;
  const key = `account.err.${error.code}`;
  return has(key) ? t(key) : error.message;
}

/** After a refused join: a logged-in browser whose cookie stopped working is logged out and told;
 * one the page took for anonymous while its cookie is an account's (its local record was cleared)
 * learns the account, so the forms offer to sit as it. */
export function joinRefused(error) {
  if (error instanceof ApiError && ["invalid_account_token", "account_token_expired"].includes(error.code)) {
    forget();
    toast(t("account.expired"));
  } else {
    if (error instanceof ApiError && error.code === "name_not_yours" && !current) whoami(true);
    toast(error.message);
  }
}

/** The link to a player's page. */
export function playerHref(name) {
  return `/players/${encodeURIComponent(name)}`;
}
