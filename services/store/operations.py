"""Every event-store operation, written once and run by either driver (``services.store.event_store``).

An operation is a generator: it yields requests (``Call``, ``ScriptCall``, ``Pipelined``), is sent
each reply, and returns its parsed result. It does no I/O itself, so the async ``EventStore`` (the
HTTP command path) and the ``SyncEventStore`` (RQ workers, the CLI) share the same calls, checks
and parsers; only the loop that executes requests differs.

The stream: one never-trimmed stream per game, appended only through one Lua script. Versions are
stream ids ``0-<version>``: the head is read from the last id, never from XLEN, and an append lands
only on the exact expected head, so a stream is always contiguous from 1.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal, TypeVar

import msgspec

from services.history.folding import Folded, StateCache, advance
from services.history.records import Entry, decode_stored
from services.store.keys import (
    CHECKPOINT_FIELD,
    DIRTY,
    EVENTS_PATTERN,
    LOBBY,
    LOBBY_ORDER,
    LOBBY_SEQ,
    TIMERS,
    WAITING,
    check_game_id,
    dedup_field,
    game_id_of_events_key,
    game_keys,
)

PAGE = 500  # entries per XRANGE round trip
SCAN_COUNT = 500

ViewWrite = Literal["written", "stale", "mismatch"]
VIEW_WRITES: tuple[ViewWrite, ...] = ("written", "stale", "mismatch")
ScriptName = Literal[
    "create", "append", "write_views", "arm_timer", "account_append", "release_name", "record_finish"
]


def _lua(name: str) -> str:
    # Anchored on "services.store.lua" (a namespace package of data files), not on "services": a
    # stale editable install can make "services" a namespace whose path files() cannot read.
    return resources.files("services.store.lua").joinpath(f"{name}.lua").read_text(encoding="utf-8")


SCRIPT_NAMES: tuple[ScriptName, ...] = (
    "create",
    "append",
    "write_views",
    "arm_timer",
    "account_append",
    "release_name",
    "record_finish",
)
SCRIPTS: dict[ScriptName, str] = {name: _lua(name) for name in SCRIPT_NAMES}


# -- requests -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One Redis command, as ``execute_command(*args)`` sends it (redis-py parses the reply)."""

    args: tuple[str | bytes | int | float, ...]


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One run of a Lua script of ``SCRIPTS`` (EVALSHA, loading the script when the server lacks it)."""

    script: ScriptName
    keys: list[str]
    args: list[Any]


@dataclass(frozen=True, slots=True)
class Pipelined:
    """Commands sent in one round trip (no transaction); the reply is the list of their replies."""

    calls: tuple[Call, ...]


Request = Call | ScriptCall | Pipelined
T = TypeVar("T")
Operation = Generator[Request, Any, T]
"""A store operation: yields requests, is sent their replies, returns its result."""


# -- replies --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What the append script did: ``ok`` (first..last appended, head = last), ``dup`` (the command
    id was seen before: its original range and fingerprint) or ``conflict`` (head is the true head)."""

    status: Literal["ok", "dup", "conflict"]
    first: int = 0
    last: int = 0
    head: int = 0
    fingerprint: str | None = None


class BrokenStream(RuntimeError):
    """A stored stream is not contiguous: something bypassed the append script."""


def check_client(client: Any) -> None:
    """Stored event bytes must come back as bytes: refuse a client that decodes replies."""
    if client.get_connection_kwargs().get("decode_responses"):
        raise ValueError("the event store needs a Redis client with decode_responses=False")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def version_of(stream_id: bytes | str) -> int:
    """The version in a stream id ``0-<version>``."""
    ms, _, seq = _text(stream_id).partition("-")
    if ms != "0" or not seq.isdigit():
        raise BrokenStream(f"stream id {stream_id!r} is not a version id")
    return int(seq)


def int_or_zero(value: bytes | str | None) -> int:
    return 0 if value is None else int(value)


def parse_command(value: bytes | str | None) -> tuple[str, int, int] | None:
    """A dedup record ``"<fingerprint> <first> <last>"`` (the fingerprint may hold spaces)."""
    if value is None:
        return None
    fingerprint, first, last = _text(value).rsplit(" ", 2)
    return fingerprint, int(first), int(last)


def parse_append(reply: Sequence[Any]) -> AppendResult:
    status = _text(reply[0])
    if status == "legacy":
        status = "dup"
    if status == "ok":
        first, last = int(reply[1]), int(reply[2])
        return AppendResult("ok", first=first, last=last, head=last)
    if status == "conflict":
        return AppendResult("conflict", head=int(reply[1]))
    if status == "dup":
        record = parse_command(reply[1])
        assert record is not None
        fingerprint, first, last = record
        return AppendResult("dup", first=first, last=last, fingerprint=fingerprint)
    raise RuntimeError(f"unexpected append reply {reply!r}")


def parse_views(reply: bytes | str) -> ViewWrite:
    outcome = _text(reply)
    for known in VIEW_WRITES:
        if outcome == known:
            return known
    raise RuntimeError(f"unexpected write_views reply {reply!r}")


# -- create / append ------------------------------------------------------------------------------


def create(
    game_id: str, secret: Mapping[str, str], entry: Entry, more: Sequence[Entry] = ()
) -> Operation[bool]:
    """Store the secret and the create batch (``entry``, then ``more``) together; ``False`` if the
    game exists."""
    entries = [entry, *more]
    if [e.version for e in entries] != list(range(1, len(entries) + 1)):
        raise ValueError(f"a game starts at version 1, not {entry.version}")
    k = game_keys(game_id)
    args: list[Any] = [len(entries)]
    for each in entries:
        args += [each.data, each.hash]
    for field, value in secret.items():
        args += [field, value]
    now = _now_ms()
    yield Pipelined((Call(("ZADD", DIRTY, "NX", now, game_id)), Call(("ZADD", WAITING, "NX", now, game_id))))
    return bool((yield ScriptCall("create", [k.events, k.secret], args)))


def append(
    game_id: str,
    expected: int,
    command_id: str,
    fingerprint: str,
    seat: int | None,
    entries: Sequence[Entry],
) -> Operation[AppendResult]:
    """One command's entries at exactly ``expected`` + 1, once per command id."""
    if expected < 1:
        raise ValueError("a stream begins with create(); appends need expected >= 1")
    if not entries:
        raise ValueError("an append needs at least one entry")
    versions = [entry.version for entry in entries]
    if versions != list(range(expected + 1, expected + 1 + len(entries))):
        raise ValueError(f"entries {versions} do not follow version {expected}")
    if not command_id or not fingerprint:
        raise ValueError("an append needs a command id and a fingerprint")
    k = game_keys(game_id)
    pairs: list[Any] = []
    for entry in entries:
        pairs += [entry.data, entry.hash]
    legacy = command_id
    yield from mark_dirty(game_id)  # before the append: a crash right after it still leaves a mark
    while True:
        args: list[Any] = [
            expected,
            dedup_field(seat, command_id),
            fingerprint,
            _seat_arg(seat),
            legacy,
            *pairs,
        ]
        reply = yield ScriptCall("append", [k.events, k.commands, k.seats, k.seat_commands], args)
        if _text(reply[0]) == "legacy" and not (yield from _legacy_owned(game_id, reply[1], seat)):
            legacy = ""  # another seat's id from before ids were scoped: free for this seat
            continue
        return parse_append(reply)


def _seat_arg(seat: int | None) -> str | int:
    return "" if seat is None else seat


def _legacy_owned(game_id: str, value: bytes | str | None, seat: int | None) -> Operation[bool]:
    """Whether a legacy (unscoped) dedup record was written by ``seat``: the first entry of the batch
    it names holds the command record with its acting seat. Such records never change, so the
    answer never goes stale."""
    record = parse_command(value)
    if record is None:
        return False
    _, first, _ = record
    reply = yield Call(("XRANGE", game_keys(game_id).events, f"0-{first}", f"0-{first}"))
    if not reply:
        return False
    try:
        stored = decode_stored(reply[0][1][b"d"])
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return stored.command is not None and stored.command.seat == seat


# -- reads ----------------------------------------------------------------------------------------


class RangeReader:
    """Pages through ``XRANGE`` (exclusive start) after version ``after``, checking contiguity:
    ``request()`` gives the next call (``None`` when done), ``feed`` takes its reply."""

    def __init__(self, game_id: str, after: int, limit: int | None) -> None:
        if after < 0 or (limit is not None and limit < 0):
            raise ValueError("after and limit must not be negative")
        self.key = game_keys(game_id).events
        self.entries: list[Entry] = []
        self._after = after
        self._remaining = limit
        self._asked = 0
        self._done = limit == 0

    def request(self) -> Call | None:
        if self._done:
            return None
        self._asked = PAGE if self._remaining is None else min(PAGE, self._remaining)
        return Call(("XRANGE", self.key, f"(0-{self._after}", "+", "COUNT", self._asked))

    def feed(self, reply: Sequence[tuple[bytes, Mapping[bytes, bytes]]]) -> None:
        for stream_id, fields in reply:
            version = version_of(stream_id)
            if version != self._after + 1:
                raise BrokenStream(f"{self.key}: expected version {self._after + 1}, found {version}")
            self.entries.append(Entry(version, fields[b"d"], _text(fields[b"h"])))
            self._after = version
        if self._remaining is not None:
            self._remaining -= len(reply)
        self._done = len(reply) < self._asked or self._remaining == 0


def read(game_id: str, after: int = 0, limit: int | None = None) -> Operation[list[Entry]]:
    """Entries after version ``after`` (at most ``limit``), contiguous, oldest first."""
    reader = RangeReader(game_id, after, limit)
    while (call := reader.request()) is not None:
        reader.feed((yield call))
    return reader.entries


def load(game_id: str, cache: StateCache) -> Operation[Folded | None]:
    """The table folded to the newest stored version, from the cached fold plus
    the events after it (``None``: no such game). The one loading path of commands, reads and
    projections."""
    cached = cache.get(game_id)
    entries: list[Entry] = yield from read(game_id, after=cached.version if cached else 0)
    if cached is None and not entries:
        return None
    folded: Folded = advance(game_id, cached, entries)
    cache.put(folded)
    return folded


def head(game_id: str) -> Operation[int]:
    """The newest version, 0 when the game does not exist."""
    reply = yield Call(("XREVRANGE", game_keys(game_id).events, "+", "-", "COUNT", 1))
    return version_of(reply[0][0]) if reply else 0


def command_entry(
    game_id: str, command_id: str, *, seat: int | None
) -> Operation[tuple[str, int, int] | None]:
    """The record of a command id ``seat`` appended, ``None`` if that seat never used it (another
    seat's use of the same id is invisible). A legacy unscoped record counts only if ``seat`` wrote it."""
    k = game_keys(game_id)
    scoped = yield Call(("HGET", k.seat_commands, dedup_field(seat, command_id)))
    if scoped is not None:
        return parse_command(scoped)
    legacy = yield Call(("HGET", k.commands, command_id))
    if legacy is not None and (yield from _legacy_owned(game_id, legacy, seat)):
        return parse_command(legacy)
    return None


def seat_version(game_id: str, seat: int) -> Operation[int]:
    """The last version appended by ``seat``'s commands (0 if none): read-your-writes."""
    return int_or_zero((yield Call(("HGET", game_keys(game_id).seats, str(seat)))))


def secret(game_id: str) -> Operation[dict[str, str] | None]:
    """The game's seed material (never in the stream)."""
    reply: Mapping[bytes, bytes] = yield Call(("HGETALL", game_keys(game_id).secret))
    return {_text(k): _text(v) for k, v in reply.items()} or None


# -- views, live channel and lobby ----------------------------------------------------------------


def write_views(game_id: str, expected: int, new: int, fields: Mapping[str, bytes]) -> Operation[ViewWrite]:
    """Compare-and-set the views on their checkpoint; on success publish ``new``."""
    if new <= expected:
        raise ValueError(f"new checkpoint {new} must be past the expected {expected}")
    if CHECKPOINT_FIELD in fields:
        raise ValueError(f"{CHECKPOINT_FIELD!r} is set by the store, not a view field")
    k = game_keys(game_id)
    args: list[Any] = [expected, new, k.live]
    for field, value in fields.items():
        args += [field, value]
    return parse_views((yield ScriptCall("write_views", [k.views], args)))


def read_view(game_id: str, field: str) -> Operation[tuple[int, bytes | None]]:
    """One view field and the checkpoint, read together."""
    checkpoint, value = yield Call(("HMGET", game_keys(game_id).views, CHECKPOINT_FIELD, field))
    return int_or_zero(checkpoint), value


def checkpoint(game_id: str) -> Operation[int]:
    """The version the views were projected at (0: never)."""
    return int_or_zero((yield Call(("HGET", game_keys(game_id).views, CHECKPOINT_FIELD))))


def publish_appended(game_id: str) -> Operation[None]:
    """After an append: mark the game dirty again (a projector may have cleared the mark between
    our first mark and the append) and wake its live streams, in one round trip."""
    check_game_id(game_id)
    yield Pipelined(
        (
            Call(("ZADD", DIRTY, "NX", _now_ms(), game_id)),
            Call(("PUBLISH", game_keys(game_id).live, b"appended")),
        )
    )


# -- the dirty set: games whose projection may lag -------------------------------------------------
#
# Every write marks its game in one global sorted set (score: when it was first marked, in ms)
# before appending and again after; the projector clears the mark once the game's checkpoint is at
# its head and re-marks it if the head moved meanwhile. The sweeper reads only this set, so its
# cost follows the games that lag, not every game ever stored. The set is global on purpose: the
# Lua scripts stay within one game's slot, and a mark is a plain idempotent command.


def _now_ms() -> int:
    return int(time.time() * 1000)


def mark_dirty(game_id: str) -> Operation[None]:
    """Mark a game as maybe lagging (keeps the time of the first mark)."""
    check_game_id(game_id)
    yield Call(("ZADD", DIRTY, "NX", _now_ms(), game_id))


def dirty_games(older_than_ms: int, limit: int) -> Operation[list[str]]:
    """Up to ``limit`` marked games, oldest mark first, marked at least ``older_than_ms`` ago."""
    ids: list[bytes] = yield Call(
        ("ZRANGEBYSCORE", DIRTY, "-inf", _now_ms() - older_than_ms, "LIMIT", 0, limit)
    )
    return [_text(game_id) for game_id in ids]


def clear_dirty(game_id: str, projected: int) -> Operation[bool]:
    """After projecting ``game_id`` to ``projected``: clear its mark, unless its head has moved
    on (then it stays marked for the next job). ``True`` if the game is now clean."""
    check_game_id(game_id)
    yield Call(("ZREM", DIRTY, game_id))
    now = yield from head(game_id)  # after the ZREM: an append racing it is seen here or re-marks
    if now > projected:
        yield from mark_dirty(game_id)
        return False
    return True


def oldest_dirty_age_ms() -> Operation[int]:
    """How long the longest-marked game has been marked (0: none)."""
    reply: list[Any] = yield Call(("ZRANGE", DIRTY, 0, 0, "WITHSCORES"))
    if not reply:
        return 0
    score = reply[0][1] if isinstance(reply[0], list | tuple) else reply[1]  # pairs, or flat (RESP2)
    return max(0, _now_ms() - int(float(score)))


def waiting_tables() -> Operation[int]:
    """How many tables wait for players (the cap on open tables)."""
    return int((yield Call(("ZCARD", WAITING))))


def not_waiting(game_id: str) -> Operation[None]:
    """The table started, ended or expired: it no longer counts against the cap."""
    check_game_id(game_id)
    yield Call(("ZREM", WAITING, game_id))


def put_lobby(game_id: str, summary: bytes) -> Operation[None]:
    """Set a game's lobby summary; its first put fixes its place in the lobby order."""
    check_game_id(game_id)
    _, ordinal = yield Pipelined(
        (Call(("HSET", LOBBY, game_id, summary)), Call(("ZSCORE", LOBBY_ORDER, game_id)))
    )
    if ordinal is None:
        sequence = yield Call(("INCR", LOBBY_SEQ))
        yield Call(("ZADD", LOBBY_ORDER, "NX", sequence, game_id))


def lobby(limit: int) -> Operation[list[bytes]]:
    """Up to ``limit`` lobby summaries, newest game first."""
    if limit < 1:
        return []
    ids: list[bytes] = yield Call(("ZREVRANGE", LOBBY_ORDER, 0, limit - 1))
    if not ids:
        return []
    summaries: list[bytes | None] = yield Call(("HMGET", LOBBY, *ids))
    return [summary for summary in summaries if summary is not None]


def scan_games() -> Operation[list[str]]:
    """Every game id, once each (for the sweeper that pokes lagging projections)."""
    found: dict[str, None] = {}
    cursor = 0
    while True:
        cursor, keys = yield Call(("SCAN", cursor, "MATCH", EVENTS_PATTERN, "COUNT", SCAN_COUNT))
        for key in keys:
            game_id = game_id_of_events_key(key)
            if game_id is not None:
                found.setdefault(game_id)
        if int(cursor) == 0:
            return list(found)


def ping() -> Operation[None]:
    """Raises when Redis does not answer."""
    yield Call(("PING",))


# -- timers ---------------------------------------------------------------------------------------


def arm_timer(
    game_id: str, version: int, deadline_ms: int | None, fields: Mapping[str, str | int]
) -> Operation[bool]:
    """Set the game's timer for ``version`` (``deadline_ms`` ``None`` clears it) unless it already
    holds a newer one; an armed timer is then put in the global deadline index. ``True`` if set."""
    args: list[Any] = [version, "" if deadline_ms is None else deadline_ms]
    for field, value in fields.items():
        args += [field, value]
    outcome = _text((yield ScriptCall("arm_timer", [game_keys(game_id).timer], args)))
    if outcome == "armed":
        yield Call(("ZADD", TIMERS, deadline_ms or 0, game_id))
    return outcome != "stale"


def read_timer(game_id: str) -> Operation[dict[str, str]]:
    """The game's timer hash (empty when none was ever armed)."""
    reply: Mapping[bytes, bytes] = yield Call(("HGETALL", game_keys(game_id).timer))
    return {_text(k): _text(v) for k, v in reply.items()}


def due_timers(now_ms: int, limit: int = 100) -> Operation[list[str]]:
    """Game ids whose indexed deadline is at or before ``now_ms``, earliest first."""
    ids: list[bytes] = yield Call(("ZRANGEBYSCORE", TIMERS, "-inf", now_ms, "LIMIT", 0, limit))
    return [_text(game_id) for game_id in ids]


def settle_timer(game_id: str, now_ms: int) -> Operation[dict[str, str] | None]:
    """The game's timer if it is due; otherwise fix its index entry: moved to the timer's newer
    deadline, or dropped when the timer is cleared (then re-read, so that a timer armed meanwhile is
    indexed again: the index may lag the hash, never lose it)."""
    timer: dict[str, str] = yield from read_timer(game_id)
    if "deadline" in timer:
        deadline = int(timer["deadline"])
        if deadline <= now_ms:
            return timer
        yield Call(("ZADD", TIMERS, deadline, game_id))
        return None
    yield Call(("ZREM", TIMERS, game_id))
    again: dict[str, str] = yield from read_timer(game_id)
    if "deadline" in again:
        yield Call(("ZADD", TIMERS, int(again["deadline"]), game_id))
    return None
