"""Table chat on the game's live stream (``services.api.live``), for streams opened with ``chat=1``.

Two positions are resumed at once: the game's version and the chat record number. Every event of a
chat stream carries ``id: <version>.<chat n>`` (the game's events, ``event: view``, keep their data
and order; chat records come as ``event: chat``), so a reconnecting EventSource sends both in
``Last-Event-ID``; a page that opens a new stream itself passes ``last_event_id=<version>`` and
``chat_after=<n>``. Streams without ``chat=1`` are exactly as before: plain version ids, no chat.

The stream of a person at the table (any credential of a seat, the host or a seated account:
``services.api.chat_routes.at_table``) carries no ``rail`` record while the game runs; when the
game ends, it sends the ``rail`` records it held back (each once per stream, marked by its ``n``; a
client keeps records by ``n``), and from then on everything. A chat stream stays open
``chat_after_end_seconds`` (settings) after the game ended for the players' last words, then ends.
"""

from __future__ import annotations

import msgspec

from services.chat import ended, visible
from services.history.folding import Folded
from services.store import chat as store_chat
from services.store.event_store import EventStore

PAGE = 200
_encode = msgspec.json.Encoder().encode


class LiveChat:
    def __init__(self, store: EventStore, game_id: str, after: int, at_table: bool) -> None:
        self.store = store
        self.game_id = game_id
        self.after = after  # the last chat record read
        self.at_table = at_table  # a person at the table (services.api.chat_routes.at_table)
        self.merged = False  # a seat's held-back rail records were sent

    def event_id(self, version: int) -> str:
        return f"{version}.{self.after}"

    async def events(self, cursor: Folded | None) -> list[bytes]:
        """The chat records after the last one read that this stream shows, as SSE messages."""
        version = cursor.version if cursor is not None else 0
        over = cursor is not None and ended(cursor.state.status)
        seated = self.at_table
        out: list[bytes] = []
        if seated and over and not self.merged:
            self.merged = True
            held = await self.store.run(store_chat.read(self.game_id, 0, self.after)) if self.after else []
            out += [self._message(version, r.record) for r in held if not visible(r.record, True, False)]
        while True:
            records = await self.store.run(store_chat.read(self.game_id, self.after, PAGE))
            for record in records:
                self.after = record.n
                if visible(record.record, seated, over):
                    out.append(self._message(version, record.record))
            if len(records) < PAGE:
                return out

    def _message(self, version: int, record: dict[str, object]) -> bytes:
        return b"id: %s\nevent: chat\ndata: %s\n\n" % (self.event_id(version).encode(), _encode(record))
