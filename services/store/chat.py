"""A table's chat in Redis: its own append-only stream beside the game's, never inside it.

The game's stream (``ts:{<id>}:events``) and its hash chain stay exactly the game. The chat lives in
``ts:{<id>}:chat`` (entries ``0-<n>``, n = 1, 2, ...: fields ``d`` the record's canonical JSON bytes,
``h`` its chain hash) with a small state hash ``ts:{<id>}:chat-state`` (``n``, ``hash``,
``messages``, ``enabled``), both in the game's slot. Each record names the game version it was
appended at, and is chained like the game's entries: ``h_n = SHA-256(h_{n-1} hex || d_n)`` from 64
zeros, so an export's chat section can be checked offline (``services.history.chat_verify``).

An append (``chat_append.lua``) is a compare-and-set on the chat head and on the game's version:
the record and its hash are computed here from one read, and the script writes them only if neither
moved meanwhile (else this operation reads again, a few times). It also refuses a message when the
host turned chat off or the table holds ``cap`` messages already, and publishes ``chat`` on the
game's live channel (live streams read the chat tail on that wake-up).

Reports go to one global stream for operators, ``ts:chat:reports``, as index calls. Like every stream
of the service it is never trimmed (an operator removes what they have handled); so that it cannot
grow without bound, a table's chat takes at most ``cap`` reports (counted in its state hash, which
retention deletes with the game), and reports are counted in the chat's rate limits too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.store.keys import PREFIX, check_game_id, game_keys
from services.store.requests import (
    Call,
    Operation,
    Pipelined,
    ScriptCall,
    index_call,
    int_or_zero,
    text,
    version_of,
)

GENESIS = "0" * 64
REPORTS = f"{PREFIX}:chat:reports"  # stream on the indexes' server: one entry per report
ATTEMPTS = 8  # compare-and-set rounds before giving up (a game moving very fast, or many writers)


class ChatKeys:
    def __init__(self, game_id: str) -> None:
        tag = f"{PREFIX}:{{{check_game_id(game_id)}}}"
        self.stream = tag + ":chat"
        self.state = tag + ":chat-state"


def chat_keys(game_id: str) -> tuple[str, str]:
    """The chat's keys of a game (deleted with the game by retention)."""
    keys = ChatKeys(game_id)
    return keys.stream, keys.state


def canonical(record: Mapping[str, Any]) -> bytes:
    """The bytes a chat record is stored and hashed as (the verifier encodes it the same way)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def chain(previous: str, data: bytes) -> str:
    return hashlib.sha256(previous.encode("ascii") + data).hexdigest()


@dataclass(frozen=True, slots=True)
class ChatRecord:
    n: int
    record: dict[str, Any]
    hash: str


@dataclass(frozen=True, slots=True)
class ChatState:
    n: int
    hash: str
    messages: int
    enabled: bool


class ChatRefused(Exception):
    """The script refused: ``no_game``, ``chat_off``, ``chat_full`` or ``busy`` (too many retries)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def state(game_id: str) -> Operation[ChatState]:
    keys = ChatKeys(game_id)
    n, head, messages, enabled = yield Call(("HMGET", keys.state, "n", "hash", "messages", "enabled"))
    return ChatState(int_or_zero(n), text(head) if head else GENESIS, int_or_zero(messages), enabled != b"0")


def append(game_id: str, kind: str, fields: Mapping[str, Any], at_ms: int, cap: int) -> Operation[ChatRecord]:
    """Append a ``message`` or ``settings`` record (``fields`` without n, at, version): numbered,
    stamped with the server's time and the game's head version, chained. ``ChatRefused`` if not."""
    keys = ChatKeys(game_id)
    live = game_keys(game_id).live
    events = game_keys(game_id).events
    for _ in range(ATTEMPTS):
        raw_state, top = yield Pipelined(
            (
                Call(("HMGET", keys.state, "n", "hash", "messages", "enabled")),
                Call(("XREVRANGE", events, "+", "-", "COUNT", 1)),
            )
        )
        if not top:
            raise ChatRefused("no_game")
        version = version_of(top[0][0])
        n = int_or_zero(raw_state[0])
        previous = text(raw_state[1]) if raw_state[1] else GENESIS
        record = {**fields, "at": at_ms, "kind": kind, "n": n + 1, "version": version}
        data = canonical(record)
        digest = chain(previous, data)
        enabled = "1" if fields.get("enabled", True) else "0"
        reply = yield ScriptCall(
            "chat_append",
            [keys.stream, keys.state, events],
            [live, n, raw_state[1] or b"", version, kind, cap, data, digest, enabled],
        )
        outcome = text(reply[0])
        if outcome == "ok":
            return ChatRecord(n + 1, record, digest)
        if outcome != "retry":
            raise ChatRefused(outcome)
    raise ChatRefused("busy")


def read(game_id: str, after: int = 0, limit: int | None = None) -> Operation[list[ChatRecord]]:
    """The records after ``after`` (n), oldest first."""
    args: tuple[Any, ...] = ("XRANGE", ChatKeys(game_id).stream, f"0-{after + 1}", "+")
    if limit is not None:
        args += ("COUNT", limit)
    reply = yield Call(args)
    return [_parsed(entry_id, entry) for entry_id, entry in reply]


def _parsed(entry_id: bytes | str, entry: Mapping[bytes, bytes]) -> ChatRecord:
    data = entry[b"d"]
    return ChatRecord(version_of(entry_id), json.loads(data), text(entry[b"h"]))


def stored_bytes(game_id: str) -> Operation[list[tuple[int, bytes, str]]]:
    """Every record exactly as stored (n, bytes, hash): what the export carries."""
    reply = yield Call(("XRANGE", ChatKeys(game_id).stream, "-", "+"))
    return [(version_of(entry_id), entry[b"d"], text(entry[b"h"])) for entry_id, entry in reply]


def report(game_id: str, fields: Mapping[str, str], cap: int) -> Operation[str | None]:
    """Record a report for operators; its stream id, or ``None`` when the table's chat was reported
    ``cap`` times already (nothing recorded then)."""
    state = ChatKeys(game_id).state
    count = yield Call(("HINCRBY", state, "reports", 1))
    if int(count) > cap:
        yield Call(("HINCRBY", state, "reports", -1))
        return None
    args: list[str | int] = ["XADD", REPORTS, "*"]
    for name, value in fields.items():
        args += [name, value]
    reply = yield index_call(*args)
    return text(reply)
