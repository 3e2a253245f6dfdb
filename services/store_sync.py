"""The event store for synchronous code (RQ workers, the CLI): the same operations as
``services.store.EventStore``, built from the same calls and parsers, without ``await``."""

from __future__ import annotations

from collections.abc import Iterator

import redis

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
from services.store import (
    APPEND_LUA,
    CREATE_LUA,
    SCAN_COUNT,
    WRITE_VIEWS_LUA,
    AppendResult,
    RangeReader,
    ViewWrite,
    append_call,
    check_client,
    create_call,
    int_or_zero,
    lobby_ids,
    parse_append,
    parse_command,
    parse_head,
    parse_secret,
    parse_views,
    views_call,
)


class SyncEventStore:
    """The event store for synchronous code; see ``EventStore`` for what each operation means."""

    def __init__(self, client: redis.Redis) -> None:
        check_client(client)
        self.redis = client
        self._create = client.register_script(CREATE_LUA)
        self._append = client.register_script(APPEND_LUA)
        self._write_views = client.register_script(WRITE_VIEWS_LUA)

    def create(self, game_id: str, secret: dict[str, str], entry: Entry) -> bool:
        keys, args = create_call(game_id, secret, entry)
        return bool(self._create(keys=keys, args=args))

    def append(
        self,
        game_id: str,
        expected: int,
        command_id: str,
        fingerprint: str,
        seat: int | None,
        entries: list[Entry],
    ) -> AppendResult:
        keys, args = append_call(game_id, expected, command_id, fingerprint, seat, entries)
        return parse_append(self._append(keys=keys, args=args))

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        return self._range(RangeReader(game_id, after, limit))

    def read_range(self, game_id: str, first: int, last: int) -> list[Entry]:
        return self._range(RangeReader(game_id, first - 1, None, last))

    def _range(self, reader: RangeReader) -> list[Entry]:
        while (request := reader.request()) is not None:
            key, low, high, count = request
            reader.feed(self.redis.xrange(key, low, high, count))
        return reader.entries

    def head(self, game_id: str) -> int:
        return parse_head(self.redis.xrevrange(game_keys(game_id).events, "+", "-", 1))

    def exists(self, game_id: str) -> bool:
        return bool(self.redis.exists(game_keys(game_id).events))

    def command_entry(self, game_id: str, command_id: str) -> tuple[str, int, int] | None:
        return parse_command(self.redis.hget(game_keys(game_id).commands, command_id))

    def seat_version(self, game_id: str, seat: int) -> int:
        return int_or_zero(self.redis.hget(game_keys(game_id).seats, str(seat)))

    def secret(self, game_id: str) -> dict[str, str] | None:
        return parse_secret(self.redis.hgetall(game_keys(game_id).secret))

    def write_views(
        self, game_id: str, expected_checkpoint: int, new_checkpoint: int, fields: dict[str, bytes]
    ) -> ViewWrite:
        keys, args = views_call(game_id, expected_checkpoint, new_checkpoint, fields)
        return parse_views(self._write_views(keys=keys, args=args))

    def read_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        checkpoint, value = self.redis.hmget(game_keys(game_id).views, [CHECKPOINT_FIELD, field])
        return int_or_zero(checkpoint), value

    def checkpoint(self, game_id: str) -> int:
        return int_or_zero(self.redis.hget(game_keys(game_id).views, CHECKPOINT_FIELD))

    def put_lobby(self, game_id: str, summary: bytes) -> None:
        check_game_id(game_id)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(LOBBY, game_id, summary)
            pipe.zscore(LOBBY_ORDER, game_id)
            _, ordinal = pipe.execute()
        if ordinal is None:
            self.redis.zadd(LOBBY_ORDER, {game_id: self.redis.incr(LOBBY_SEQ)}, nx=True)

    def lobby(self, limit: int) -> list[bytes]:
        if limit < 1:
            return []
        ids = lobby_ids(self.redis.zrange(LOBBY_ORDER, 0, limit - 1, desc=True))
        if not ids:
            return []
        return [summary for summary in self.redis.hmget(LOBBY, ids) if summary is not None]

    def scan_games(self) -> Iterator[str]:
        seen: set[str] = set()
        for key in self.redis.scan_iter(match=EVENTS_PATTERN, count=SCAN_COUNT):
            game_id = game_id_of_events_key(key)
            if game_id is not None and game_id not in seen:
                seen.add(game_id)
                yield game_id
