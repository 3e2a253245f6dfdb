"""The event store on Redis: one never-trimmed stream per game, appended only through one Lua script.

``EventStore`` (redis.asyncio) serves the HTTP command path; ``services.store_sync.SyncEventStore``
offers the same operations to RQ workers and the CLI. Both build their calls and read their
replies with the helpers here, so keys, scripts and parsing exist once.

Versions are stream ids ``0-<version>``: the head is read from the last id, never from XLEN, and
an append lands only on the exact expected head, so a stream is always contiguous from 1.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal

import redis.asyncio as aioredis

from services.keys import (
    CHECKPOINT_FIELD,
    EVENTS_PATTERN,
    LOBBY,
    LOBBY_ORDER,
    LOBBY_SEQ,
    check_game_id,
    game_id_of_events_key,
    game_keys,
)
from services.records import Entry

PAGE = 500  # entries per XRANGE round trip
SCAN_COUNT = 500

ViewWrite = Literal["written", "stale", "mismatch"]


def _lua(name: str) -> str:
    # Anchored on "services.lua" (a namespace package of data files), not on "services": a stale
    # editable install can make "services" a namespace whose path files() cannot read.
    return resources.files("services.lua").joinpath(f"{name}.lua").read_text(encoding="utf-8")


CREATE_LUA = _lua("create")
APPEND_LUA = _lua("append")
WRITE_VIEWS_LUA = _lua("write_views")


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


# -- create / append ------------------------------------------------------------------------------


def create_call(game_id: str, secret: Mapping[str, str], entry: Entry) -> tuple[list[str], list[Any]]:
    if entry.version != 1:
        raise ValueError(f"a game starts at version 1, not {entry.version}")
    k = game_keys(game_id)
    args: list[Any] = [entry.data, entry.hash]
    for field, value in secret.items():
        args += [field, value]
    return [k.events, k.secret], args


def append_call(
    game_id: str,
    expected: int,
    command_id: str,
    fingerprint: str,
    seat: int | None,
    entries: Sequence[Entry],
) -> tuple[list[str], list[Any]]:
    """Keys and argv of the append script, after the checks Lua should not have to make."""
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
    args: list[Any] = [expected, command_id, fingerprint, "" if seat is None else seat]
    for entry in entries:
        args += [entry.data, entry.hash]
    return [k.events, k.commands, k.seats], args


def parse_command(value: bytes | str | None) -> tuple[str, int, int] | None:
    """A dedup record ``"<fingerprint> <first> <last>"`` (the fingerprint may hold spaces)."""
    if value is None:
        return None
    fingerprint, first, last = _text(value).rsplit(" ", 2)
    return fingerprint, int(first), int(last)


def parse_append(reply: Sequence[Any]) -> AppendResult:
    status = _text(reply[0])
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


# -- reads ----------------------------------------------------------------------------------------


class RangeReader:
    """Pages through ``XRANGE`` (exclusive start) after version ``after``, checking contiguity.

    Sans-I/O: the caller runs each ``request()`` (XRANGE key min max count) and ``feed``s the reply
    until ``request()`` returns ``None``; ``entries`` then holds the result.
    """

    def __init__(self, game_id: str, after: int, limit: int | None, last: int | None = None) -> None:
        if after < 0 or (limit is not None and limit < 0):
            raise ValueError("after and limit must not be negative")
        self.key = game_keys(game_id).events
        self.entries: list[Entry] = []
        self._after = after
        self._last = last
        self._remaining = limit
        self._asked = 0
        self._done = limit == 0 or (last is not None and last <= after)

    def request(self) -> tuple[str, str, str, int] | None:
        if self._done:
            return None
        self._asked = PAGE if self._remaining is None else min(PAGE, self._remaining)
        high = "+" if self._last is None else f"0-{self._last}"
        return self.key, f"(0-{self._after}", high, self._asked

    def feed(self, reply: Sequence[tuple[bytes, Mapping[bytes, bytes]]]) -> None:
        for stream_id, fields in reply:
            version = version_of(stream_id)
            if version != self._after + 1:
                raise BrokenStream(f"{self.key}: expected version {self._after + 1}, found {version}")
            self.entries.append(Entry(version, fields[b"d"], _text(fields[b"h"])))
            self._after = version
        if self._remaining is not None:
            self._remaining -= len(reply)
        self._done = (
            len(reply) < self._asked
            or self._remaining == 0
            or (self._last is not None and self._after >= self._last)
        )


def parse_head(reply: Sequence[tuple[bytes, Any]]) -> int:
    return version_of(reply[0][0]) if reply else 0


def parse_secret(reply: Mapping[bytes, bytes]) -> dict[str, str] | None:
    return {_text(k): _text(v) for k, v in reply.items()} or None


# -- views and lobby ------------------------------------------------------------------------------


def views_call(
    game_id: str, expected: int, new: int, fields: Mapping[str, bytes]
) -> tuple[list[str], list[Any]]:
    if new <= expected:
        raise ValueError(f"new checkpoint {new} must be past the expected {expected}")
    if CHECKPOINT_FIELD in fields:
        raise ValueError(f"{CHECKPOINT_FIELD!r} is set by the store, not a view field")
    k = game_keys(game_id)
    args: list[Any] = [expected, new, k.live]
    for field, value in fields.items():
        args += [field, value]
    return [k.views], args


def parse_views(reply: bytes | str) -> ViewWrite:
    outcome = _text(reply)
    if outcome not in ("written", "stale", "mismatch"):
        raise RuntimeError(f"unexpected write_views reply {reply!r}")
    return outcome  # type: ignore[return-value]


def lobby_ids(reply: Sequence[bytes]) -> list[str]:
    return [_text(game_id) for game_id in reply]


# -- the async store ------------------------------------------------------------------------------


class EventStore:
    """The event store for asyncio code (the HTTP command path)."""

    def __init__(self, client: aioredis.Redis) -> None:
        check_client(client)
        self.redis = client
        self._create = client.register_script(CREATE_LUA)
        self._append = client.register_script(APPEND_LUA)
        self._write_views = client.register_script(WRITE_VIEWS_LUA)

    async def create(self, game_id: str, secret: dict[str, str], entry: Entry) -> bool:
        """Store the secret and the first event together; ``False`` if the game already exists."""
        keys, args = create_call(game_id, secret, entry)
        return bool(await self._create(keys=keys, args=args))

    async def append(
        self,
        game_id: str,
        expected: int,
        command_id: str,
        fingerprint: str,
        seat: int | None,
        entries: list[Entry],
    ) -> AppendResult:
        """Append one command's entries at exactly ``expected`` + 1, at most once per command id."""
        keys, args = append_call(game_id, expected, command_id, fingerprint, seat, entries)
        return parse_append(await self._append(keys=keys, args=args))

    async def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        """Entries after version ``after`` (at most ``limit``), contiguous, oldest first."""
        return await self._range(RangeReader(game_id, after, limit))

    async def read_range(self, game_id: str, first: int, last: int) -> list[Entry]:
        """Entries ``first``..``last`` inclusive (fewer if the stream ends before ``last``)."""
        return await self._range(RangeReader(game_id, first - 1, None, last))

    async def _range(self, reader: RangeReader) -> list[Entry]:
        while (request := reader.request()) is not None:
            key, low, high, count = request
            reader.feed(await self.redis.xrange(key, low, high, count))
        return reader.entries

    async def head(self, game_id: str) -> int:
        """The newest version, 0 when the game does not exist."""
        return parse_head(await self.redis.xrevrange(game_keys(game_id).events, "+", "-", 1))

    async def exists(self, game_id: str) -> bool:
        return bool(await self.redis.exists(game_keys(game_id).events))

    async def command_entry(self, game_id: str, command_id: str) -> tuple[str, int, int] | None:
        """``(fingerprint, first, last)`` of an appended command id, ``None`` if never seen."""
        return parse_command(await self.redis.hget(game_keys(game_id).commands, command_id))

    async def seat_version(self, game_id: str, seat: int) -> int:
        """The last version appended by ``seat``'s commands (0 if none): read-your-writes."""
        return int_or_zero(await self.redis.hget(game_keys(game_id).seats, str(seat)))

    async def secret(self, game_id: str) -> dict[str, str] | None:
        return parse_secret(await self.redis.hgetall(game_keys(game_id).secret))

    async def write_views(
        self, game_id: str, expected_checkpoint: int, new_checkpoint: int, fields: dict[str, bytes]
    ) -> ViewWrite:
        """Compare-and-set the views on their checkpoint; on success publish the new version."""
        keys, args = views_call(game_id, expected_checkpoint, new_checkpoint, fields)
        return parse_views(await self._write_views(keys=keys, args=args))

    async def read_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        """``(checkpoint, bytes)`` of one view field, read together."""
        checkpoint, value = await self.redis.hmget(game_keys(game_id).views, [CHECKPOINT_FIELD, field])
        return int_or_zero(checkpoint), value

    async def checkpoint(self, game_id: str) -> int:
        return int_or_zero(await self.redis.hget(game_keys(game_id).views, CHECKPOINT_FIELD))

    async def put_lobby(self, game_id: str, summary: bytes) -> None:
        """Set a game's lobby summary; its first put fixes its place in the lobby order."""
        check_game_id(game_id)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(LOBBY, game_id, summary)
            pipe.zscore(LOBBY_ORDER, game_id)
            _, ordinal = await pipe.execute()
        if ordinal is None:
            await self.redis.zadd(LOBBY_ORDER, {game_id: await self.redis.incr(LOBBY_SEQ)}, nx=True)

    async def lobby(self, limit: int) -> list[bytes]:
        """Up to ``limit`` lobby summaries, newest game first."""
        if limit < 1:
            return []
        ids = lobby_ids(await self.redis.zrange(LOBBY_ORDER, 0, limit - 1, desc=True))
        if not ids:
            return []
        return [summary for summary in await self.redis.hmget(LOBBY, ids) if summary is not None]

    async def scan_games(self) -> AsyncIterator[str]:
        """Every game id, once each (for the sweeper that pokes lagging projections)."""
        seen: set[str] = set()
        async for key in self.redis.scan_iter(match=EVENTS_PATTERN, count=SCAN_COUNT):
            game_id = game_id_of_events_key(key)
            if game_id is not None and game_id not in seen:
                seen.add(game_id)
                yield game_id
