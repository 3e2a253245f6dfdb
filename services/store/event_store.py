"""The event store: the operations of ``services.store.operations`` (a game's own keys) and
``services.store.indexes`` (the global sets beside them), run on redis.asyncio (``EventStore``, the
HTTP command path) or on plain redis-py (``SyncEventStore``, RQ workers and the CLI). Each method is
one line over the shared operation; only ``run`` differs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import redis
import redis.asyncio as aioredis

from services.history.folding import Folded, StateCache
from services.history.records import Entry
from services.store import indexes
from services.store import operations as ops
from services.store.operations import AppendResult, ViewWrite
from services.store.requests import SCRIPTS, Call, Operation, Request, ScriptCall, check_client

T = TypeVar("T")


def _send(target: Any, call: Call) -> Any:
    """``target.execute_command(*call.args)`` on a client or a pipeline, sync or async."""
    execute: Callable[..., Any] = target.execute_command  # redis-py leaves some of these unannotated
    return execute(*call.args)


class EventStore:
    """The event store for asyncio code."""

    def __init__(self, client: aioredis.Redis) -> None:
        check_client(client)
        self.redis = client
        self._scripts = {name: client.register_script(source) for name, source in SCRIPTS.items()}

    async def run(self, operation: Operation[T]) -> T:
        """Drive one operation to its result, executing each request it yields."""
        try:
            request = next(operation)
            while True:
                request = operation.send(await self._execute(request))
        except StopIteration as done:
            return cast(T, done.value)

    async def _execute(self, request: Request) -> Any:
        if isinstance(request, Call):
            return await _send(self.redis, request)
        if isinstance(request, ScriptCall):
            return await self._scripts[request.script](keys=request.keys, args=request.args)
        async with self.redis.pipeline(transaction=False) as pipe:
            for call in request.calls:
                _send(pipe, call)
            return await pipe.execute()

    async def create(
        self, game_id: str, secret: Mapping[str, str], entry: Entry, more: Sequence[Entry] = ()
    ) -> bool:
        return await self.run(ops.create(game_id, secret, entry, more))

    async def append(
        self,
        game_id: str,
        expected: int,
        command_id: str,
        fingerprint: str,
        seat: int | None,
        entries: Sequence[Entry],
    ) -> AppendResult:
        return await self.run(ops.append(game_id, expected, command_id, fingerprint, seat, entries))

    async def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        return await self.run(ops.read(game_id, after, limit))

    async def load(self, game_id: str, cache: StateCache) -> Folded | None:
        return await self.run(ops.load(game_id, cache))

    async def head(self, game_id: str) -> int:
        return await self.run(ops.head(game_id))

    async def command_entry(
        self, game_id: str, command_id: str, *, seat: int | None
    ) -> tuple[str, int, int] | None:
        return await self.run(ops.command_entry(game_id, command_id, seat=seat))

    async def seat_version(self, game_id: str, seat: int) -> int:
        return await self.run(ops.seat_version(game_id, seat))

    async def secret(self, game_id: str) -> dict[str, str] | None:
        return await self.run(ops.secret(game_id))

    async def write_views(
        self, game_id: str, expected_checkpoint: int, new_checkpoint: int, fields: Mapping[str, bytes]
    ) -> ViewWrite:
        return await self.run(ops.write_views(game_id, expected_checkpoint, new_checkpoint, fields))

    async def read_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        return await self.run(ops.read_view(game_id, field))

    async def checkpoint(self, game_id: str) -> int:
        return await self.run(ops.checkpoint(game_id))

    async def publish_appended(self, game_id: str, poke: bool = False) -> bool:
        return await self.run(ops.publish_appended(game_id, poke))

    async def put_lobby(self, game_id: str, summary: bytes) -> None:
        await self.run(indexes.put_lobby(game_id, summary))

    async def lobby(self, limit: int) -> list[bytes]:
        return await self.run(indexes.lobby(limit))

    async def scan_games(self) -> list[str]:
        return await self.run(indexes.scan_games())

    async def dirty_games(self, older_than_ms: int, limit: int) -> list[str]:
        return await self.run(indexes.dirty_games(older_than_ms, limit))

    async def clear_dirty(self, game_id: str, projected: int) -> bool:
        return await self.run(indexes.clear_dirty(game_id, projected))

    async def oldest_dirty_age_ms(self) -> int:
        return await self.run(indexes.oldest_dirty_age_ms())

    async def waiting_tables(self) -> int:
        return await self.run(indexes.waiting_tables())

    async def not_waiting(self, game_id: str) -> None:
        await self.run(indexes.not_waiting(game_id))

    async def ping(self) -> None:
        await self.run(ops.ping())

    async def arm_timer(
        self, game_id: str, version: int, deadline_ms: int | None, fields: Mapping[str, str | int]
    ) -> bool:
        return await self.run(indexes.arm_timer(game_id, version, deadline_ms, fields))

    async def read_timer(self, game_id: str) -> dict[str, str]:
        return await self.run(indexes.read_timer(game_id))


class SyncEventStore:
    """The event store for synchronous code; the same operations as ``EventStore``."""

    def __init__(self, client: redis.Redis) -> None:
        check_client(client)
        self.redis = client
        self._scripts = {name: client.register_script(source) for name, source in SCRIPTS.items()}

    def run(self, operation: Operation[T]) -> T:
        """Drive one operation to its result, executing each request it yields."""
        try:
            request = next(operation)
            while True:
                request = operation.send(self._execute(request))
        except StopIteration as done:
            return cast(T, done.value)

    def _execute(self, request: Request) -> Any:
        if isinstance(request, Call):
            return _send(self.redis, request)
        if isinstance(request, ScriptCall):
            return self._scripts[request.script](keys=request.keys, args=request.args)
        with self.redis.pipeline(transaction=False) as pipe:
            for call in request.calls:
                _send(pipe, call)
            return pipe.execute()

    def create(
        self, game_id: str, secret: Mapping[str, str], entry: Entry, more: Sequence[Entry] = ()
    ) -> bool:
        return self.run(ops.create(game_id, secret, entry, more))

    def append(
        self,
        game_id: str,
        expected: int,
        command_id: str,
        fingerprint: str,
        seat: int | None,
        entries: Sequence[Entry],
    ) -> AppendResult:
        return self.run(ops.append(game_id, expected, command_id, fingerprint, seat, entries))

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        return self.run(ops.read(game_id, after, limit))

    def load(self, game_id: str, cache: StateCache) -> Folded | None:
        return self.run(ops.load(game_id, cache))

    def head(self, game_id: str) -> int:
        return self.run(ops.head(game_id))

    def command_entry(
        self, game_id: str, command_id: str, *, seat: int | None
    ) -> tuple[str, int, int] | None:
        return self.run(ops.command_entry(game_id, command_id, seat=seat))

    def seat_version(self, game_id: str, seat: int) -> int:
        return self.run(ops.seat_version(game_id, seat))

    def secret(self, game_id: str) -> dict[str, str] | None:
        return self.run(ops.secret(game_id))

    def write_views(
        self, game_id: str, expected_checkpoint: int, new_checkpoint: int, fields: Mapping[str, bytes]
    ) -> ViewWrite:
        return self.run(ops.write_views(game_id, expected_checkpoint, new_checkpoint, fields))

    def read_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        return self.run(ops.read_view(game_id, field))

    def checkpoint(self, game_id: str) -> int:
        return self.run(ops.checkpoint(game_id))

    def publish_appended(self, game_id: str, poke: bool = False) -> bool:
        return self.run(ops.publish_appended(game_id, poke))

    def take_pending(self, game_id: str) -> int:
        return self.run(ops.take_pending(game_id))

    def begin_drain(self) -> None:
        self.run(indexes.begin_drain())

    def claim_drain(self) -> bool:
        return self.run(indexes.claim_drain())

    def take_poked(self, limit: int) -> list[str]:
        return self.run(indexes.take_poked(limit))

    def poked_count(self) -> int:
        return self.run(indexes.poked_count())

    def put_lobby(self, game_id: str, summary: bytes) -> None:
        self.run(indexes.put_lobby(game_id, summary))

    def lobby(self, limit: int) -> list[bytes]:
        return self.run(indexes.lobby(limit))

    def scan_games(self) -> list[str]:
        return self.run(indexes.scan_games())

    def dirty_games(self, older_than_ms: int, limit: int) -> list[str]:
        return self.run(indexes.dirty_games(older_than_ms, limit))

    def clear_dirty(self, game_id: str, projected: int) -> bool:
        return self.run(indexes.clear_dirty(game_id, projected))

    def touch_dirty(self, game_id: str) -> None:
        self.run(indexes.touch_dirty(game_id))

    def oldest_dirty_age_ms(self) -> int:
        return self.run(indexes.oldest_dirty_age_ms())

    def waiting_tables(self) -> int:
        return self.run(indexes.waiting_tables())

    def not_waiting(self, game_id: str) -> None:
        self.run(indexes.not_waiting(game_id))

    def ping(self) -> None:
        self.run(ops.ping())

    def arm_timer(
        self, game_id: str, version: int, deadline_ms: int | None, fields: Mapping[str, str | int]
    ) -> bool:
        return self.run(indexes.arm_timer(game_id, version, deadline_ms, fields))

    def read_timer(self, game_id: str) -> dict[str, str]:
        return self.run(indexes.read_timer(game_id))

    def due_timers(self, now_ms: int, limit: int = 100) -> list[str]:
        return self.run(indexes.due_timers(now_ms, limit))

    def settle_timer(self, game_id: str, now_ms: int) -> dict[str, str] | None:
        return self.run(indexes.settle_timer(game_id, now_ms))
