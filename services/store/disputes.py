"""Disputes in Redis: one stream per dispute, beside its game's keys and in its slot.

- ``ts:{<game_id>}:dispute:<dispute_id>`` (stream, never trimmed): entries ``0-<n>``, n = 1, 2, ...,
  field ``d`` the event's JSON bytes (``domain.disputes``), appended by ``dispute_append.lua`` only
  if the stream still holds the n - 1 events the caller folded (a compare-and-set: two operators
  resolving at once cannot both win);
- ``ts:{<game_id>}:disputes`` (zset): dispute id -> ms it was opened, written by the same script;
- ``ts:disputes:open`` (zset, on the indexes' server): ``<game_id>/<dispute_id>`` -> ms opened,
  while the dispute is open (the operator's console lists it).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from domain.disputes import DisputeEvent
from domain.kernel import Event
from services.store.keys import DISPUTES_OPEN, PREFIX, check_game_id
from services.store.requests import Call, Operation, ScriptCall, index_call, text, version_of

OPEN = DISPUTES_OPEN
DISPUTE_ID = re.compile(r"[0-9a-f]{16}")

_decoder = msgspec.json.Decoder(DisputeEvent)
_encoder = msgspec.json.Encoder()


def stream_key(game_id: str, dispute_id: str) -> str:
    return f"{PREFIX}:{{{check_game_id(game_id)}}}:dispute:{dispute_id}"


def index_key(game_id: str) -> str:
    return f"{PREFIX}:{{{check_game_id(game_id)}}}:disputes"


def decode(data: bytes) -> Event:
    """One stored dispute event (``msgspec.ValidationError`` or ``DecodeError`` if it is not one)."""
    return _decoder.decode(data)


def read(game_id: str, dispute_id: str) -> Operation[list[Event]]:
    """The dispute's events, oldest first (none: no such dispute)."""
    reply = yield Call(("XRANGE", stream_key(game_id, dispute_id), "-", "+"))
    events: list[Event] = []
    for n, (entry_id, fields) in enumerate(reply, start=1):
        if version_of(entry_id) != n:
            raise ValueError(f"dispute stream {dispute_id} is not contiguous at {n}")
        events.append(decode(fields[b"d"]))
    return events


def append(game_id: str, dispute_id: str, known: int, event: Event, at_ms: int) -> Operation[bool]:
    """Append ``event`` after the ``known`` events the caller folded; ``False`` if the stream moved."""
    reply = yield ScriptCall(
        "dispute_append",
        [stream_key(game_id, dispute_id), index_key(game_id)],
        [known, _encoder.encode(event), dispute_id, at_ms],
        durable=True,
    )
    return int(reply) == 1


def of_game(game_id: str) -> Operation[list[str]]:
    """The game's dispute ids, oldest first."""
    reply = yield Call(("ZRANGE", index_key(game_id), 0, -1))
    return [text(member) for member in reply]


def mark_open(game_id: str, dispute_id: str, at_ms: int) -> Operation[None]:
    yield index_call("ZADD", OPEN, at_ms, f"{game_id}/{dispute_id}")


def mark_resolved(game_id: str, dispute_id: str) -> Operation[None]:
    yield index_call("ZREM", OPEN, f"{game_id}/{dispute_id}")


def open_disputes(limit: int, after: tuple[int, str] | None = None) -> Operation[list[tuple[str, str, int]]]:
    """Up to ``limit`` open disputes, oldest first: (game id, dispute id, when opened in ms); after
    ``after`` (when opened, ``<game id>/<dispute id>``), exclusive, when given. Disputes opened in
    the same millisecond are in the order of their members, as Redis keeps them."""
    if after is None:
        reply = yield index_call("ZRANGE", OPEN, 0, limit - 1, "WITHSCORES")
        pairs = _scored(reply)
    else:
        at, last = after
        same = _scored((yield index_call("ZRANGEBYSCORE", OPEN, at, at, "WITHSCORES")))
        later = _scored(
            (yield index_call("ZRANGEBYSCORE", OPEN, f"({at}", "+inf", "WITHSCORES", "LIMIT", 0, limit))
        )
        pairs = ([(m, score) for m, score in same if m > last] + later)[:limit]
    found = []
    for member, score in pairs:
        game_id, _, dispute_id = member.partition("/")
        found.append((game_id, dispute_id, score))
    return found


def _scored(reply: Sequence[Any]) -> list[tuple[str, int]]:
    """``WITHSCORES`` replies: pairs (RESP3), or flat (RESP2)."""
    if reply and isinstance(reply[0], list | tuple):
        return [(text(member), int(float(score))) for member, score in reply]
    return [(text(reply[i]), int(float(reply[i + 1]))) for i in range(0, len(reply), 2)]
