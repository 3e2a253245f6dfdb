// The HTTP API. The browser's seat or host token travels in an HttpOnly cookie set by the server.
import { lang } from "./i18n.js";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || { code: "http_" + response.status, message: response.statusText };
    throw new ApiError(response.status, error.code, error.message);
  }
  return data;
}

export const games = {
  options: () => api("/games/options"),
  lobby: () => api("/games"),
  create: (game, players, options) => api("/games", { method: "POST", body: { game, players, options } }),
  join: (id, name, clientSeed) =>
    api(`/games/${id}/players`, { method: "POST", body: clientSeed ? { name, client_seed: clientSeed } : { name } }),
  view: (id) => api(`/games/${id}/view`),
  events: (id, after, limit = 1000) => api(`/games/${id}/events?after=${after}&limit=${limit}&lang=${lang()}`),
  send: (id, command, commandId) => api(`/games/${id}/commands`, { method: "POST", body: { command_id: commandId, command } }),
  replay: (id, at) => api(`/games/${id}/replay?at=${at}&lang=${lang()}`),
  audit: (id) => api(`/games/${id}/audit`),
  bots: (id) => api(`/games/${id}/bots`, { method: "POST", body: {} }),
  leave: (id) => api(`/games/${id}/leave`, { method: "POST", body: {} }),
};
