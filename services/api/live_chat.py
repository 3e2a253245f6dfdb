"""Table chat on the game's live stream (``services.api.live``), for streams opened with ``chat=1``.

Two positions are resumed at once: the game's version and the chat record number. Every event of a
chat stream carries ``id: <version>.<chat n>`` (the game's events, ``event: view``, keep their data
and order; chat records come as ``event: chat``), so a reconnecting EventSource sends both in
``Last-Event-ID``; a page that opens a new stream itself passes ``last_event_id=<version>`` and
``chat_after=<n>``. Streams without ``chat=1`` are exactly as before: plain version ids, no chat.

The stream of a person at the table (any credential of a seat, the host or a seated account:
``services.api.chat_routes.at_table``) carries no ``rail`` record while the game runs, and numbers
what it sends by table number (``services.people.chat.table_numbers``: its ids and ``chat_after`` too), so
nothing in it counts the rail; when the game ends, it sends the whole chat again, numbered by record
(a client keeps records by numbering and ``n``), and from then on everything. A chat stream stays open
``chat_after_end_seconds`` (settings) after the game ended for the players' last words, then ends.
"""

from __future__ import annotations

import msgspec

from services.history.folding import Folded
from services.people.chat import ended, numbered, table_numbers
from services.store import chat as store_chat
from services.store.event_store import EventStore

PAGE = 200
_encode = msgspec.json.Encoder().encode


class LiveChat:
    """The chat part of one live stream. ``after``: where the reader resumes, in its numbering (a
    person at the table while the game runs numbers by table number, ``services.people.chat``)."""

    def __init__(self, store: EventStore, game_id: str, after: int, table_numbering: bool) -> None:
        self.store = store
        self.game_id = game_id
        self.after = after  # the last record read (its record number), once ``resolved``
        self.shown = after  # the number of the last record sent, in the reader's numbering
        self.table_numbering = table_numbering  # a person at the table while the game runs
        self.resolved = not table_numbering  # whether ``after`` is a record number yet
        self.seen = 0  # table numbering: how many records the reader has seen up to ``after``

    def event_id(self, version: int) -> str:
        return f"{version}.{self.shown}"

    async def events(self, cursor: Folded | None) -> list[bytes]:
        """The chat records after the last one read that this stream shows, as SSE messages."""
        version = cursor.version if cursor is not None else 0
        over = cursor is not None and ended(cursor.state.status)
        if self.table_numbering and over:
            # The game ended: the whole chat again, numbered by record, and everything from then on.
            self.table_numbering, self.resolved, self.after = False, True, 0
        elif not self.resolved:
            # The reader resumes after its table number ``after``: after the record that has it.
            numbers = table_numbers(await self.store.run(store_chat.read(self.game_id)))
            reached = [(n, t) for n, t in numbers.items() if t <= self.shown]
            self.after, self.seen = max(reached, default=(0, 0))
            self.shown = self.seen
            self.resolved = True
        out: list[bytes] = []
        while True:
            records = await self.store.run(store_chat.read(self.game_id, self.after, PAGE))
            for record in records:
                self.after = record.n
                if not self.table_numbering:
                    self.shown = record.n
                    out.append(self._message(version, record.record))
                elif record.record.get("channel") != "rail":
                    self.seen += 1
                    self.shown = self.seen
                    out.append(self._message(version, numbered(record.record, self.seen)))
            if len(records) < PAGE:
                return out

    def _message(self, version: int, record: dict[str, object]) -> bytes:
        return b"id: %s\nevent: chat\ndata: %s\n\n" % (self.event_id(version).encode(), _encode(record))
