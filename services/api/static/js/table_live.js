// The table's live stream. The browser reconnects an EventSource by itself after a dropped
// connection (with Last-Event-ID), but gives up for good on an answer that is not a stream (a 429 or
// a 503 while the server is busy or restarting): then the page opens a new one itself, with a
// growing delay, resuming after the version it has, and reads the view once in case it missed a move.

/**
 * @param {object} o
 * @param {string} o.id the table
 * @param {HTMLElement} o.root gets ``data-live``: connecting, open, closed or ended
 * @param {HTMLElement} o.prompt gets ``data-reconnecting`` while a stream is being opened again
 * @param {(view: object) => void} o.show a view the stream sent
 * @param {() => void} o.refresh reads the view once
 * @param {() => object|null} o.latest the newest view the page has
 * @param {{after: () => number, receive: (record: object) => void}} [o.chat] the table's chat
 *   (table_chat.js): the stream brings its records too (``chat=1``), resuming after ``after()``
 */
export function liveStream({ id, root, prompt, show, refresh, latest, chat = null }) {
  let source = null;
  let retryDelay = 1000;
  let retryTimer = null;
  let closed = false;

  function state(name, reconnecting = name !== "open" && name !== "ended") {
    root.dataset.live = name;
    if (reconnecting) prompt.dataset.reconnecting = "1";
    else delete prompt.dataset.reconnecting;
  }

  function stop() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (source) source.close();
    source = null;
  }

  function connect(resume = "") {
    stop();
    const query = chat ? `${resume ? "&" : "?"}chat=1&chat_after=${chat.after()}` : "";
    const stream = new EventSource(`/games/${id}/live${resume}${query}`);
    source = stream;
    state("connecting", Boolean(resume)); // a first stream is no reconnection
    stream.addEventListener("view", (message) => show(JSON.parse(message.data)));
    if (chat) stream.addEventListener("chat", (message) => chat.receive(JSON.parse(message.data)));
    stream.onopen = () => {
      retryDelay = 1000;
      state("open");
    };
    stream.onerror = () => {
      if (source !== stream) return;
      if (stream.readyState === EventSource.CONNECTING) return state("connecting");
      // Closed for good: open a new stream later, unless the game is over or the page is gone.
      source = null;
      const now = latest();
      const over = now && (now.status === "finished" || now.status === "closed");
      state(over ? "ended" : "closed");
      if (closed || over) return;
      retryTimer = setTimeout(() => {
        if (closed || source) return;
        refresh();
        const seen = latest();
        connect(seen ? `?last_event_id=${seen.version}` : "");
      }, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 15000);
    };
  }

  return {
    /** A stream for the page's cookies now (a first one, or after joining or leaving a seat). */
    open: () => connect(),
    stop,
    /** The game is over: no stream, and nothing to reconnect. */
    end() {
      stop();
      state("ended");
    },
    close() {
      closed = true;
      stop();
    },
  };
}
