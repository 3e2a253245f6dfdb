// The HTTP API. The browser's seat, host and account tokens travel in HttpOnly cookies set by the
// server; no script here ever sees one.
import { has, lang, t } from "./i18n.js";
import { keep } from "./receipts.js";

/** The words for an error code in the page's language: `err.<code>.<field>` when the error body
 * carries that field (e.g. "like" of name_confusable), else `err.<code>`; null for a code the
 * glossary does not know (the server's own sentence is shown then). */
export function errorWords(code, details = {}) {
  for (const field of Object.keys(details)) {
    if (has(`err.${code}.${field}`)) return t(`err.${code}.${field}`, details);
  }
  if (has(`err.${code}`)) return t(`err.${code}`, details);
  if (/^http_\d+$/.test(code)) return t("err.http", { status: code.slice(5) });
  return null;
}

export class ApiError extends Error {
  // `message` is what a person reads (the toast): the code in words, in the page's language.
  constructor(status, code, message, details = {}) {
    super(errorWords(code, details) ?? message);
    this.status = status;
    this.code = code;
    this.details = details; // the error body's other fields, e.g. "like" of name_confusable
    this.serverMessage = message; // the server's English sentence, for logs and unknown codes
  }
}

export async function api(path, { method = "GET", body, headers = {} } = {}) {
  const init = { method, headers: { ...headers }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (problem) {
    throw new ApiError(0, "network", problem.message); // no answer at all: offline, server down
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || { code: "http_" + response.status, message: response.statusText };
    const { code, message, ...details } = error;
    throw new ApiError(response.status, code, message, details);
  }
  return data;
}

// A create or a join whose answer was lost (the connection dropped, the store failed over, the
// server restarted) is sent again with the same Idempotency-Key, and gets the first try's table or
// seat and token, never a second one (docs/api.md, POST /games/{id}/players).
const TRANSIENT = new Set(["network", "unavailable", "not_replicated", "shutting_down", "idempotency_key_in_use"]);
export const RETRY_MS = [300, 1000, 2500];

function requestKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16)); // a secret: as hard to guess as a token
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function once(path, options) {
  const headers = { "Idempotency-Key": requestKey() };
  for (let attempt = 0; ; attempt++) {
    try {
      return await api(path, { ...options, headers });
    } catch (error) {
      if (!(error instanceof ApiError) || !TRANSIENT.has(error.code) || attempt >= RETRY_MS.length) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS[attempt]));
    }
  }
}

export const games = {
  options: () => api("/games/options"),
  lobby: () => api("/games"),
  create: (game, players, options) => once("/games", { method: "POST", body: { game, players, options } }),
  // Without a name the seat is the logged-in account's (its ts_account cookie), under its name.
  join: (id, name, clientSeed) => once(`/games/${id}/players`, { method: "POST",
    body: { ...(name ? { name } : {}), ...(clientSeed ? { client_seed: clientSeed } : {}) } }),
  view: (id) => api(`/games/${id}/view`),
  events: (id, after, limit = 1000) => api(`/games/${id}/events?after=${after}&limit=${limit}&lang=${lang()}`),
  // Each accepted move's signed receipt is kept in this browser (receipts.js) before the answer is used.
  send: (id, command, commandId) => api(`/games/${id}/commands`, { method: "POST", body: { command_id: commandId, command } })
    .then(async (answer) => { await keep(answer.receipt); return answer; }),
  export: (id) => api(`/games/${id}/export`),
  replay: (id, at) => api(`/games/${id}/replay?at=${at}&lang=${lang()}`),
  audit: (id) => api(`/games/${id}/audit`),
  log: (id) => api(`/games/${id}/log`), // its heads' inclusion proofs in the public log (tlog.js)
  bots: (id, level, count) => api(`/games/${id}/bots`,
    { method: "POST", body: { ...(level ? { level } : {}), ...(count ? { count } : {}) } }),
  leave: (id) => api(`/games/${id}/leave`, { method: "POST", body: {} }),
  hint: (id) => api(`/games/${id}/hint?lang=${lang()}`, { method: "POST", body: {} }),
  review: (id, seat) => api(`/games/${id}/review?seat=${seat}&lang=${lang()}`),
};

const segment = encodeURIComponent;

export const accounts = {
  // "cookie": the token comes back only as the HttpOnly ts_account cookie, never in the body.
  register: (name, password) =>
    api("/accounts", { method: "POST", body: { name, ...(password ? { password } : {}), cookie: true } }),
  login: (name, password) => api("/accounts/login", { method: "POST", body: { name, password, cookie: true } }),
  logout: () => api("/accounts/logout", { method: "POST", body: {} }),
  me: () => api("/accounts/me"),
  // current: the password the account has now (required when it has one); other devices are logged out
  setPassword: (password, current) => api("/accounts/me/password", { method: "POST",
    body: { password, ...(current ? { current_password: current } : {}) } }),
  profile: (nameOrId) => api(`/accounts/${segment(nameOrId)}`),
  history: (id, offset, limit) => api(`/accounts/${segment(id)}/history?offset=${offset}&limit=${limit}`),
  leaderboard: (game, offset, limit) => api(`/leaderboards/${segment(game)}?offset=${offset}&limit=${limit}`),
};

// Disputes (docs/api.md "Disputes"): a seated player's cookie or an operator's token authenticates.
const disputePath = (gameId, id) => `/games/${segment(gameId)}/disputes/${segment(id)}`;
export const disputes = {
  open: (gameId, round, text) => api(`/games/${segment(gameId)}/disputes`, { method: "POST", body: { round, text } }),
  list: (gameId) => api(`/games/${segment(gameId)}/disputes`),
  get: (gameId, id) => api(disputePath(gameId, id)),
  evidence: (gameId, id, kind, content) => api(`${disputePath(gameId, id)}/evidence`, { method: "POST", body: { kind, content } }),
  resolve: (gameId, id, verdict, reason) => api(`${disputePath(gameId, id)}/resolve`, { method: "POST", body: { verdict, reason } }),
  bundle: (gameId, id) => api(`${disputePath(gameId, id)}/bundle`),
  verdict: (gameId, id) => api(`${disputePath(gameId, id)}/verdict`),
  bundleHref: (gameId, id) => `${disputePath(gameId, id)}/bundle`,
};
