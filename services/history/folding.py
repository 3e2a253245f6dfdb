"""From stored entries to folded table state, with a per-process cache so that a command or a
projection reads only the events after the version it already holds."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec

from domain.games import table_for
from domain.kernel import Event
from domain.table import Table, TableCreated, TableState
from services.history.records import Entry, StoredEvent, decode_stored

_created_decoder = msgspec.json.Decoder(TableCreated)


@dataclass(frozen=True)
class Folded:
    """A table folded up to ``version``, with the chain hash at that version."""

    game_id: str
    table: Table
    state: TableState
    version: int
    hash: str


@cache
def _event_decoder(game: str) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(table_for(game).event_type)


def table_of(entries: Sequence[Entry]) -> Table:
    """The table Decider of a stream, read from its first event (``table_created``)."""
    first = decode_stored(entries[0].data)
    return table_for(_created_decoder.decode(first.event).game)


def decode_event(table: Table, stored: StoredEvent) -> Event:
    event: Event = _event_decoder(table.name).decode(stored.event)
    return event


def decode_events(table: Table, entries: Sequence[Entry]) -> list[tuple[int, Event]]:
    return [(entry.version, decode_event(table, decode_stored(entry.data))) for entry in entries]


@cache
def _fold_decoder(game: str) -> msgspec.json.Decoder[Any]:
    """Stored entries of ``game`` decoded straight to their event, in one pass: the fold needs
    nothing else of a ``StoredEvent`` (its other fields are skipped, not built)."""
    only_event = msgspec.defstruct(f"StoredEventOf_{game}", [("event", table_for(game).event_type)])
    return msgspec.json.Decoder(only_event)


def advance(game_id: str, folded: Folded | None, entries: Sequence[Entry]) -> Folded:
    """Fold ``entries`` (which must follow ``folded`` contiguously) onto it."""
    if not entries:
        assert folded is not None
        return folded
    table = folded.table if folded else table_of(entries)
    version = folded.version if folded else 0
    for offset, entry in enumerate(entries, start=1):
        if entry.version != version + offset:
            raise ValueError(f"entries of {game_id} are not contiguous at version {entry.version}")
    decode = _fold_decoder(table.name).decode
    events = [decode(entry.data).event for entry in entries]
    state = table.fold(folded.state if folded else None, events)
    assert state is not None
    return Folded(game_id, table, state, entries[-1].version, entries[-1].hash)


class StateCache:
    """A bounded LRU of folded tables. Entries are immutable, so sharing them is safe."""

    def __init__(self, capacity: int = 4096) -> None:
        self._items: OrderedDict[str, Folded] = OrderedDict()
        self._capacity = capacity

    def get(self, game_id: str) -> Folded | None:
        folded = self._items.get(game_id)
        if folded is not None:
            self._items.move_to_end(game_id)
        return folded

    def fold(self, game_id: str, cached: Folded | None, entries: Sequence[Entry]) -> Folded | None:
        """``entries`` (read after ``cached``, this cache's fold of the game when they were read)
        folded onto it and kept; ``None`` when there is neither: no such game."""
        if cached is None and not entries:
            return None
        folded = advance(game_id, cached, entries)
        self.put(folded)
        return folded

    def put(self, folded: Folded) -> None:
        current = self._items.get(folded.game_id)
        if current is not None and current.version > folded.version:
            return
        self._items[folded.game_id] = folded
        self._items.move_to_end(folded.game_id)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)


class _Tagged(msgspec.Struct):
    type: str


_tag_decoder = msgspec.json.Decoder(_Tagged)


def event_tags(entries: Sequence[Entry]) -> set[str]:
    """The tags (``type``) of every event in ``entries``, read without decoding the events: this
    also sees event types the running code does not know."""
    return {_tag_decoder.decode(decode_stored(entry.data).event).type for entry in entries}
