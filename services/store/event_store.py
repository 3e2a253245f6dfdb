"""The event store: the operations of ``services.store.operations`` (a game's own keys) and
``services.store.indexes`` (the global sets beside them), run on redis.asyncio (``EventStore``, the
HTTP command path) or on plain redis-py (``SyncEventStore``, RQ workers and the CLI). Each method is
one line over the shared operation; only ``run`` differs.

Longer than 500 lines because it is one set of operations behind two drivers: every operation of
``operations`` and ``indexes`` appears once on ``EventStore`` and once on ``SyncEventStore``, one line
each, with the routing both share; split, the two twins that must stay alike would drift apart.

Each request goes where its keys live (``services.store.connection``): a game's keys to the store
(one server, or the node of the game's slot on a cluster), the global indexes to ``index`` (the
queue's server when the store is a cluster, else the store). A pipeline or a script of the store
must stay in one slot (``CrossSlot`` otherwise, on a standalone server too, so that every test
checks it), unless it is marked as a batch across games (``Pipelined.across_games``: redis-py's
cluster pipeline sends it node by node). A script marked ``durable`` (create, append) waits, on
the connection that ran it, for the replicas ``acks`` asks for (``WAITAOF``/``WAIT``).

A finished game may have left Redis for the archive (``services.store.archive``). The reads of a
game's stream, secret, views' checkpoint and command records fall back to its archive file when
Redis has nothing of the game, so every reader of a finished game (replay, export, audit, views,
disputes, the ratings rebuild, the public log's appender) reads it from wherever it is, unchanged.
Redis is read first: a game archived but not yet removed (a pass that died in between) is read
there."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import redis
import redis.asyncio as aioredis
import structlog
from redis.crc import key_slot
from redis.exceptions import AskError, MovedError, NoScriptError

from services.history.folding import Folded, StateCache, advance, decode_events
from services.history.records import Entry
from services.store import archive as archived_games
from services.store import indexes
from services.store import operations as ops
from services.store.archive import Archive, ArchivedGame
from services.store.connection import UNAVAILABLE, Acks, NotReplicated
from services.store.lean import LeanPipelines, lean_pipelines, lean_scripts
from services.store.operations import AppendResult, ViewWrite
from services.store.packing import with_hiredis_packing
from services.store.requests import (
    SCRIPTS,
    Call,
    Operation,
    Pipelined,
    Request,
    ScriptCall,
    ScriptName,
    check_client,
    sent,
)
from services.telemetry import metrics

T = TypeVar("T")
_log = structlog.get_logger("tablestream.store")


DURABLE_ATTEMPTS = 4  # a durable script's tries across MOVED and failovers (it is idempotent)
REROUTED = (MovedError, AskError, *UNAVAILABLE)


class CrossSlot(RuntimeError):
    """A script or pipeline of the store would touch two Redis Cluster slots."""


def _encoded(key: str | bytes) -> bytes:
    return key.encode() if isinstance(key, str) else key


@functools.lru_cache(maxsize=65536)
def slot_of(key: str | bytes) -> int:
    """A key's cluster slot (CRC16 in Python: remembered, since a game's few keys recur on every
    request about it)."""
    return int(key_slot(_encoded(key)))


def check_one_slot(keys: Sequence[str | bytes], what: str) -> None:
    """Raise ``CrossSlot`` unless every key hashes to one slot."""
    slots = {slot_of(key) for key in keys}
    if len(slots) > 1:
        raise CrossSlot(f"{what} touches {len(slots)} slots: {[_encoded(k).decode() for k in keys]}")


def _split(request: Pipelined, separate_index: bool) -> tuple[list[int], list[int]]:
    """Positions of the store's calls and of the index's calls (all the store's when the indexes are
    in the store); the store's are checked to share one slot."""
    store = [i for i, call in enumerate(request.calls) if not (separate_index and call.index)]
    index = [i for i, call in enumerate(request.calls) if separate_index and call.index]
    if not request.across_games:
        keys = [k for i in store if (k := request.calls[i].key) is not None]
        check_one_slot(keys, "a pipeline")
    return store, index


def _send(target: Any, call: Call, indexes_here: bool = False) -> Any:
    """``target.execute_command(*call.args)`` on a client or a pipeline, sync or async (``Call.apart``:
    a read in its place where the indexes live on the store's server)."""
    execute: Callable[..., Any] = target.execute_command  # redis-py leaves some of these unannotated
    return execute(*sent(call, indexes_here))


class _Batch:
    """The requests of one round of ``SyncEventStore.run_all``, laid out in two pipelines (the
    store's and the indexes'): where each request's commands went, and its reply assembled back."""

    def __init__(self) -> None:
        self.store: list[tuple[Any, ...]] = []
        self.index: list[tuple[Any, ...]] = []
        self.requests: dict[int, tuple[Request, list[tuple[bool, int]]]] = {}

    def add(
        self,
        position: int,
        request: Request,
        separate_index: bool,
        indexes_here: bool,
        scripts: Mapping[ScriptName, Any],
    ) -> None:
        """Lay out ``request``'s commands; raises ``CrossSlot`` for keys of several slots."""
        commands: list[tuple[bool, tuple[Any, ...]]]
        if isinstance(request, ScriptCall):
            if not request.index:  # the indexes' server is one standalone Redis
                check_one_slot(request.keys, f"script {request.script}")
            sha = scripts[request.script].sha
            keys = request.all_keys(indexes_here)
            commands = [(separate_index and request.index, ("EVALSHA", sha, len(keys), *keys, *request.args))]
        elif isinstance(request, Call):
            commands = [(separate_index and request.index, sent(request, indexes_here))]
        else:
            indexed = set(_split(request, separate_index)[1])  # and the slot check
            commands = [(i in indexed, sent(call, indexes_here)) for i, call in enumerate(request.calls)]
        places = []
        for on_index, args in commands:
            target = self.index if on_index else self.store
            places.append((on_index, len(target)))
            target.append(args)
        self.requests[position] = (request, places)

    def reply(self, position: int, store: list[Any], index: list[Any]) -> Any:
        """The reply ``run`` would have given the request at ``position``, or the first exception
        among its commands' replies."""
        request, places = self.requests[position]
        values = [(index if on_index else store)[at] for on_index, at in places]
        failed = next((value for value in values if isinstance(value, Exception)), None)
        if failed is not None:
            return failed
        return values if isinstance(request, Pipelined) else values[0]


def _executed(client: Any, commands: list[tuple[Any, ...]], lean: LeanPipelines | None = None) -> list[Any]:
    """``commands`` in one pipeline, each reply or error in its place (an error of the whole
    pipeline, such as a lost connection, in every place). On ``lean`` when every command is a
    script's (whose replies redis-py gives as they come: no response callback to apply)."""
    if not commands:
        return []
    if lean is not None and all(args[0] == "EVALSHA" for args in commands):
        try:
            return lean.execute(commands)
        except Exception as error:
            return [error] * len(commands)
    try:
        with client.pipeline(transaction=False) as pipe:
            for args in commands:
                pipe.execute_command(*args)
            return cast(list[Any], pipe.execute(raise_on_error=False))
    except Exception as error:
        return [error] * len(commands)


def _merge(size: int, parts: Sequence[tuple[list[int], list[Any]]]) -> list[Any]:
    replies: list[Any] = [None] * size
    for positions, values in parts:
        for position, value in zip(positions, values, strict=True):
            replies[position] = value
    return replies


def _archived_fold(game: ArchivedGame, cache: StateCache) -> Folded:
    """The archived game folded to its head (the cached fold when it is there), and cached; a fold
    cut short before it (``_settled``) is replaced."""
    cached = cache.get(game.game_id)
    if cached is not None and cached.version == game.head:
        return cached
    folded = advance(game.game_id, None, game.entries)
    cache.put(folded)
    return folded


def _settled(folded: Folded | None) -> bool:
    """Whether a fold read from Redis is surely the game's newest: it found the game, and its read
    cannot have been cut short by the game's archiving (a finished game, or one page read at most:
    a read cut between two pages has a page's worth of versions and is not finished yet)."""
    return folded is not None and (folded.version < ops.PAGE or folded.state.status == "finished")


def _whole(read: list[Entry], limit: int | None) -> bool:
    """Whether a read from Redis is surely all there is to read: it found entries, in one page."""
    return limit == 0 or 0 < len(read) < ops.PAGE


def _archived_entries(game: ArchivedGame, read: list[Entry], after: int, limit: int | None) -> list[Entry]:
    """The entries a read asked for, from the archive when Redis gave fewer: none (the game left
    Redis), or a read of several pages cut short because the game left Redis between two of them."""
    archived = archived_games.entries_after(game, after, limit)
    return archived if len(archived) > len(read) else read


def _archived_view_reads(
    game: ArchivedGame, reads: ops.ViewReads, seat: int | None, cache: StateCache
) -> ops.ViewReads:
    """``ViewReads`` of an archived game: no projected view (a finished game's views are rendered
    from its events), checkpoint at the head, no timer; the token's role as Redis answered it (the
    tokens stay there)."""
    version = 0 if seat is None else archived_games.seat_version(game, seat)
    return ops.ViewReads(game.head, None, version, {}, _archived_fold(game, cache), reads.token_role)


def _archived_command_load(
    game: ArchivedGame,
    load: ops.CommandLoad,
    seat: int | None,
    command_id: str,
    token_digest: str | None,
    cache: StateCache,
    secret: bool,
) -> ops.CommandLoad:
    """``CommandLoad`` of an archived game, as ``operations.command_load`` answers it: nothing but the
    table for a token that holds no role (the tokens stay in Redis, whose answer ``load`` holds)."""
    folded = _archived_fold(game, cache)
    if token_digest is not None and load.token_role is None:
        return ops.CommandLoad(folded, None, {}, None)
    record = archived_games.command_entry(game, command_id, seat)
    return ops.CommandLoad(
        folded, record, {}, load.token_role, (dict(game.secret) or None) if secret else None
    )


class EventStore:
    """The event store for asyncio code."""

    def __init__(
        self,
        client: aioredis.Redis | aioredis.RedisCluster,
        index: aioredis.Redis | None = None,
        acks: Acks | None = None,
        archive: Archive | None = None,
    ) -> None:
        check_client(client)
        self.archive = archive  # None: this store reads Redis only
        self.redis = client
        self.index = index if index is not None else client
        self.acks = acks or Acks()
        self.cluster = isinstance(client, aioredis.RedisCluster)
        self._separate_index = self.index is not client
        self._indexes_here = not self._separate_index and not self.cluster  # scripts may write them
        self._scripts = {name: client.register_script(source) for name, source in SCRIPTS.items()}
        self._index_scripts = {name: self.index.register_script(source) for name, source in SCRIPTS.items()}
        self._nodes: dict[str, aioredis.Redis] = {}
        self._ready = False
        self._lean = lean_scripts(client)  # the hot script calls' own connection (services.store.lean)

    async def run(self, operation: Operation[T]) -> T:
        """Drive one operation to its result, executing each request it yields."""
        if self.cluster and not self._ready:
            await cast(aioredis.RedisCluster, self.redis).initialize()  # the slot map, once
            self._ready = True
        try:
            request = next(operation)
            while True:
                try:
                    reply = await self._execute(request)
                except (redis.RedisError, OSError):
                    metrics.round_trip(failed=True)
                    raise
                metrics.round_trip()
                request = operation.send(reply)
        except StopIteration as done:
            return cast(T, done.value)

    async def run_best_effort(self, operation: Operation[None], what: str) -> None:
        """Run an index write that follows a committed write (``what`` names it in the log): a
        store error is logged as a warning and swallowed, so the committed write still answers as
        a success; the index is repaired by its backfill, or by the next write of the same kind."""
        try:
            await self.run(operation)
        except (redis.RedisError, OSError, NotReplicated) as error:
            _log.warning("index_write_skipped", what=what, error=type(error).__name__)

    async def _execute(self, request: Request) -> Any:
        if isinstance(request, Call):
            return await _send(self.index if request.index else self.redis, request, self._indexes_here)
        if isinstance(request, ScriptCall):
            if not request.index:  # the indexes' server is one standalone Redis
                check_one_slot(request.keys, f"script {request.script}")
            if request.durable and self.acks.replicas:
                return await self._durable(request)
            keys = request.all_keys(self._indexes_here)
            scripts = self._index_scripts if request.index else self._scripts
            script = scripts[request.script]
            if self._lean is not None and (self._indexes_here or not request.index):
                return await self._lean.evalsha(script.sha, script.script, keys, request.args)
            return await script(keys=keys, args=request.args)
        store, index = _split(request, self._separate_index)
        if not index:  # one server (the usual case): no task for the other
            return await self._pipeline(request, store, self.redis)
        if not store:
            return await self._pipeline(request, index, self.index)
        parts = [(store, self.redis), (index, self.index)]
        replies = await asyncio.gather(
            *(self._pipeline(request, positions, client) for positions, client in parts)
        )
        return _merge(
            len(request.calls),
            [(positions, values) for (positions, _), values in zip(parts, replies, strict=True)],
        )

    async def _pipeline(self, request: Pipelined, positions: list[int], client: Any) -> list[Any]:
        if not positions:
            return []
        async with client.pipeline(transaction=False) as pipe:
            for position in positions:
                _send(pipe, request.calls[position], self._indexes_here)
            return cast(list[Any], await pipe.execute())

    async def _durable(self, request: ScriptCall) -> Any:
        """The script, then the acks' wait, in one pipeline on one connection to the key's primary
        (WAIT/WAITAOF count the writes of their own connection)."""
        script = self._scripts[request.script]
        for attempt in range(DURABLE_ATTEMPTS):
            client = self._node(request.keys[0])
            try:
                started = time.perf_counter()
                async with client.pipeline(transaction=False) as pipe:
                    keys = request.all_keys(self._indexes_here)
                    pipe.evalsha(script.sha, len(keys), *keys, *request.args)
                    for ack in self.acks.requests():
                        pipe.execute_command(*ack)
                    reply, *_, acked = await pipe.execute()
                metrics.ack_wait(time.perf_counter() - started, failed=not self.acks.enough(acked))
            except NoScriptError:
                await client.script_load(script.script)
                continue
            except REROUTED:
                if not self.cluster or attempt == DURABLE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.1 * (attempt + 1))
                await cast(aioredis.RedisCluster, self.redis).nodes_manager.initialize()
                continue
            if not self.acks.enough(acked):
                raise NotReplicated(f"{request.script} reached {acked!r} of {self.acks.request()!r}")
            return reply
        raise NotReplicated(f"{request.script} found no primary to wait on")

    def _node(self, key: str) -> aioredis.Redis:
        if not isinstance(self.redis, aioredis.RedisCluster):
            return self.redis
        return self._node_client(self.redis.get_node_from_key(key))

    def _node_client(self, node: Any) -> aioredis.Redis:
        """A plain client of one cluster node (made on first use, closed by ``aclose_nodes``)."""
        client = self._nodes.get(node.name)
        if client is None:
            kw = node.connection_kwargs
            client = with_hiredis_packing(
                aioredis.Redis(
                    host=node.host,
                    port=node.port,
                    username=kw.get("username"),
                    password=kw.get("password"),
                    socket_timeout=kw.get("socket_timeout"),
                    socket_connect_timeout=kw.get("socket_connect_timeout"),
                )
            )
            self._nodes[node.name] = client
        return client

    async def aclose_nodes(self) -> None:
        for client in self._nodes.values():
            await client.aclose()
        self._nodes.clear()

    async def aclose(self) -> None:
        """Close what this store opened beside its clients: the nodes' clients of durable appends and
        the lean connection of its client (``services.store.lean``, shared by every store of it)."""
        await self.aclose_nodes()
        if self._lean is not None:
            await self._lean.aclose()

    async def create(
        self, game_id: str, secret: Mapping[str, str], entry: Entry, more: Sequence[Entry] = ()
    ) -> bool:
        """``False`` if the game exists, in Redis or in the archive (an id is never used twice)."""
        if self.archive is not None and self.archive.has(game_id):
            return False
        return await self.run(ops.create(game_id, secret, entry, more))

    async def append(
        self,
        game_id: str,
        expected: int,
        command_id: str,
        fingerprint: str,
        seat: int | None,
        entries: Sequence[Entry],
        marked: bool = False,
        timer: ops.TimerPlan | None = None,
        system: bool = False,
        token: tuple[str, str] | None = None,
    ) -> AppendResult:
        operation = ops.append(
            game_id, expected, command_id, fingerprint, seat, entries, marked, timer, system, token
        )
        return await self.run(operation)

    @property
    def append_marks(self) -> bool:
        """Whether the append script itself marks the game dirty (the indexes live on the store's one
        server): an append then needs no mark of its own before it (``ops.append``'s ``marked``)."""
        return self._indexes_here

    async def command_load(
        self,
        game_id: str,
        seat: int | None,
        command_id: str,
        cache: StateCache,
        token_digest: str | None = None,
        secret: bool = False,
    ) -> ops.CommandLoad:
        load = await self.run(ops.command_load(game_id, seat, command_id, cache, token_digest, secret))
        if load.folded is not None or (game := await self.archived(game_id)) is None:
            return load
        return _archived_command_load(game, load, seat, command_id, token_digest, cache, secret)

    async def recorded(
        self,
        game_id: str,
        entry: tuple[str, int, int],
        cache: StateCache,
        confirm: tuple[int | None, str, bool] | None = None,
    ) -> ops.Recorded | None:
        """A recorded command's batch (``entry``: its record) with the table folded to the head, as a
        duplicate of it is answered (``None``: no such game). ``confirm`` (seat, command id, system):
        with replica acks, first wait until the replicas have the record (``confirm_record``)."""
        if confirm is not None:
            seat, command_id, system = confirm
            await self.confirm_record(game_id, command_id, seat=seat, system=system)
        _, first, last = entry
        folded, entries = await self.run(ops.recorded(game_id, first, last, cache))
        if not (_settled(folded) and _whole(entries, last - first + 1)):
            game = await self.archived(game_id)
            if game is not None:
                folded = folded if _settled(folded) else _archived_fold(game, cache)
                entries = (
                    entries
                    if _whole(entries, last - first + 1)
                    else _archived_entries(game, entries, first - 1, last - first + 1)
                )
        if folded is None:
            return None
        return ops.Recorded(folded, decode_events(folded.table, entries), entries[-1].hash)

    async def archived(self, game_id: str) -> ArchivedGame | None:
        """The game's archive, for a read that found nothing of it in Redis (``None``: not
        archived): from memory, else one ``stat``, and the file read in a worker thread."""
        if self.archive is None:
            return None
        game = self.archive.remembered(game_id)
        if game is not None or not self.archive.has(game_id):
            return game
        return await asyncio.to_thread(self.archive.read, game_id)

    async def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        entries = await self.run(ops.read(game_id, after, limit))
        if _whole(entries, limit) or (game := await self.archived(game_id)) is None:
            return entries
        return _archived_entries(game, entries, after, limit)

    async def load(self, game_id: str, cache: StateCache) -> Folded | None:
        folded = await self.run(ops.load(game_id, cache))
        if _settled(folded) or (game := await self.archived(game_id)) is None:
            return folded
        return _archived_fold(game, cache)

    async def head(self, game_id: str) -> int:
        version = await self.run(ops.head(game_id))
        if version or (game := await self.archived(game_id)) is None:
            return version
        return game.head

    async def view_reads(
        self, game_id: str, field: str, seat: int | None, cache: StateCache, token_digest: str | None = None
    ) -> ops.ViewReads:
        reads = await self.run(ops.view_reads(game_id, field, seat, cache, token_digest))
        if _settled(reads.folded) or (game := await self.archived(game_id)) is None:
            return reads
        return _archived_view_reads(game, reads, seat, cache)

    async def command_entry(
        self, game_id: str, command_id: str, *, seat: int | None, system: bool = False
    ) -> tuple[str, int, int] | None:
        record = await self.run(ops.command_entry(game_id, command_id, seat=seat, system=system))
        if record is not None or (game := await self.archived(game_id)) is None:
            return record
        return archived_games.command_entry(game, command_id, seat, system)

    async def seat_version(self, game_id: str, seat: int) -> int:
        version = await self.run(ops.seat_version(game_id, seat))
        if version or (game := await self.archived(game_id)) is None:
            return version
        return archived_games.seat_version(game, seat)

    async def confirm_record(
        self, game_id: str, command_id: str, *, seat: int | None, system: bool = False
    ) -> None:
        """With replica acks: wait until the replicas have a recorded command (``NotReplicated``
        if they do not within the timeout); without: nothing to wait for, no round trip."""
        if self.acks.replicas:
            await self.run(ops.confirm_record(game_id, command_id, seat=seat, system=system))

    async def confirm_table(self, game_id: str) -> None:
        """As ``confirm_record``, for a table's creation."""
        if self.acks.replicas:
            await self.run(ops.confirm_table(game_id))

    async def secret(self, game_id: str) -> dict[str, str] | None:
        secret = await self.run(ops.secret(game_id))
        if secret is not None or (game := await self.archived(game_id)) is None:
            return secret
        return dict(game.secret) or None

    async def write_views(
        self, game_id: str, expected_checkpoint: int, new_checkpoint: int, fields: Mapping[str, bytes]
    ) -> ViewWrite:
        return await self.run(ops.write_views(game_id, expected_checkpoint, new_checkpoint, fields))

    async def read_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        return await self._archived_view(game_id, await self.run(ops.read_view(game_id, field)))

    async def read_seat_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        return await self._archived_view(game_id, await self.run(ops.read_seat_view(game_id, field)))

    async def _archived_view(self, game_id: str, read: tuple[int, bytes | None]) -> tuple[int, bytes | None]:
        """A view read, or for an archived game its head and no stored view (rendered on demand)."""
        if read[0] or (game := await self.archived(game_id)) is None:
            return read
        return game.head, None

    async def checkpoint(self, game_id: str) -> int:
        version = await self.run(ops.checkpoint(game_id))
        if version or (game := await self.archived(game_id)) is None:
            return version
        return game.head

    async def publish_appended(self, game_id: str, poke: bool = False, deadline: int | None = None) -> None:
        await self.run(ops.publish_appended(game_id, poke, deadline))

    async def put_lobby(self, game_id: str, summary: bytes) -> None:
        await self.run(indexes.put_lobby(game_id, summary))

    async def lobby(self, limit: int) -> list[bytes]:
        return await self.run(indexes.lobby(limit))

    async def scan_games(self) -> list[str]:
        """Every game id, from every primary of a cluster."""
        if not isinstance(self.redis, aioredis.RedisCluster):
            return await self.run(indexes.scan_games())
        await self.redis.initialize()
        found: list[str] = []
        for node in self.redis.get_primaries():
            found += await EventStore(self._node_client(node)).run(indexes.scan_games())
        return found

    async def dirty_games(self, older_than_ms: int, limit: int) -> list[str]:
        return await self.run(indexes.dirty_games(older_than_ms, limit))

    async def clear_dirty(self, game_id: str, projected: int) -> bool:
        return await self.run(indexes.clear_dirty(game_id, projected))

    async def oldest_dirty_age_ms(self) -> int:
        return await self.run(indexes.oldest_dirty_age_ms())

    async def table_counts(self) -> dict[str, int]:
        return await self.run(indexes.table_counts())

    async def handed_over(self) -> int:
        return await self.run(indexes.handed_over())

    async def handover_consumer_idle(self) -> float | None:
        return await self.run(indexes.handover_consumer_idle())

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

    async def drop_timer(self, game_id: str, version: int) -> bool:
        return await self.run(indexes.drop_timer(game_id, version))


class SyncEventStore:
    """The event store for synchronous code; the same operations as ``EventStore``."""

    def __init__(
        self,
        client: redis.Redis | redis.RedisCluster,
        index: redis.Redis | None = None,
        acks: Acks | None = None,
        archive: Archive | None = None,
    ) -> None:
        check_client(client)
        self.archive = archive  # None: this store reads Redis only
        self.redis = client
        self.index = index if index is not None else client
        self.acks = acks or Acks()
        self.cluster = isinstance(client, redis.RedisCluster)
        self._separate_index = self.index is not client
        self._indexes_here = not self._separate_index and not self.cluster  # scripts may write them
        self._scripts = {name: client.register_script(source) for name, source in SCRIPTS.items()}
        self._index_scripts = {name: self.index.register_script(source) for name, source in SCRIPTS.items()}
        self._lean = lean_pipelines(client)  # a batch's rounds on a lean connection (services.store.lean)
        self._lean_index = self._lean if self.index is client else lean_pipelines(self.index)

    @property
    def scripts_write_indexes(self) -> bool:
        """Whether a game's scripts also write the global indexes (they live on the store's one
        server): a projection then brings them up to date in its views write
        (``services.store.projection``)."""
        return self._indexes_here

    def run(self, operation: Operation[T]) -> T:
        """Drive one operation to its result, executing each request it yields."""
        try:
            request = next(operation)
            while True:
                try:
                    reply = self._execute(request)
                except (redis.RedisError, OSError):
                    metrics.round_trip(failed=True)
                    raise
                metrics.round_trip()
                request = operation.send(reply)
        except StopIteration as done:
            return cast(T, done.value)

    def run_all(self, operations: Sequence[Operation[T]]) -> list[T | Exception]:
        """Drive many operations in lockstep: each round sends what every unfinished operation asks
        for next in one pipeline per server, so operations of ``k`` steps cost ``k`` round trips
        however many there are (a worker projecting a batch of games). Each operation still sees
        its own requests in order; operations share no order among themselves. One that raises
        ends with its exception in its place, and the others go on."""
        results: list[Any] = [None] * len(operations)
        waiting: dict[int, Request] = {}

        def step(position: int, advance: Callable[[], Request]) -> None:
            try:
                waiting[position] = advance()
            except StopIteration as done:
                results[position] = done.value
            except Exception as error:  # this operation's end; BaseException (a kill) ends them all
                results[position] = error

        for position, operation in enumerate(operations):
            step(position, operation.__next__)
        while waiting:
            asked, waiting = waiting, {}
            try:
                round_replies = self._execute_round(asked)
            except (redis.RedisError, OSError):
                metrics.round_trip(failed=True)
                raise
            metrics.round_trip()
            for position, reply in round_replies.items():
                operation = operations[position]
                if isinstance(reply, Exception):
                    step(position, functools.partial(operation.throw, reply))
                else:
                    step(position, functools.partial(operation.send, reply))
        return results

    def _execute_round(self, asked: Mapping[int, Request]) -> dict[int, Any]:
        """Every request of one round, each reply (or the exception it met) in its place: one
        pipeline for the store and one for the indexes (when they live apart). A request that
        cannot share a pipeline (a durable script, which waits on its own connection) or meets a
        script the server lacks runs alone."""
        replies: dict[int, Any] = {}
        batch = _Batch()
        alone: list[int] = []
        for position, request in asked.items():
            try:
                if isinstance(request, ScriptCall) and request.durable and self.acks.replicas:
                    alone.append(position)
                else:
                    batch.add(position, request, self._separate_index, self._indexes_here, self._scripts)
            except CrossSlot as error:
                replies[position] = error
        store = _executed(self.redis, batch.store, self._lean)
        index = _executed(self.index, batch.index, self._lean_index)
        for position in batch.requests:
            reply = batch.reply(position, store, index)
            if isinstance(reply, NoScriptError):
                alone.append(position)
            else:
                replies[position] = reply
        for position in alone:
            try:
                replies[position] = self._execute(asked[position])
            except Exception as error:
                replies[position] = error
        return replies

    def _execute(self, request: Request) -> Any:
        if isinstance(request, Call):
            return _send(self.index if request.index else self.redis, request, self._indexes_here)
        if isinstance(request, ScriptCall):
            if not request.index:  # the indexes' server is one standalone Redis
                check_one_slot(request.keys, f"script {request.script}")
            if request.durable and self.acks.replicas:
                return self._durable(request)
            scripts = self._index_scripts if request.index else self._scripts
            return scripts[request.script](keys=request.all_keys(self._indexes_here), args=request.args)
        store, index = _split(request, self._separate_index)
        parts = [
            (store, self._pipeline(request, store, self.redis)),
            (index, self._pipeline(request, index, self.index)),
        ]
        return _merge(len(request.calls), parts)

    def _pipeline(self, request: Pipelined, positions: list[int], client: Any) -> list[Any]:
        if not positions:
            return []
        with client.pipeline(transaction=False) as pipe:
            for position in positions:
                _send(pipe, request.calls[position], self._indexes_here)
            return cast(list[Any], pipe.execute())

    def _durable(self, request: ScriptCall) -> Any:
        """As ``EventStore._durable``."""
        script = self._scripts[request.script]
        for attempt in range(DURABLE_ATTEMPTS):
            client = self._node(request.keys[0])
            try:
                started = time.perf_counter()
                with client.pipeline(transaction=False) as pipe:
                    keys = request.all_keys(self._indexes_here)
                    pipe.evalsha(script.sha, len(keys), *keys, *request.args)
                    for ack in self.acks.requests():
                        pipe.execute_command(*ack)  # type: ignore[no-untyped-call]
                    reply, *_, acked = pipe.execute()
                metrics.ack_wait(time.perf_counter() - started, failed=not self.acks.enough(acked))
            except NoScriptError:
                client.script_load(script.script)
                continue
            except REROUTED:
                if not self.cluster or attempt == DURABLE_ATTEMPTS - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))
                cast(redis.RedisCluster, self.redis).nodes_manager.initialize()
                continue
            if not self.acks.enough(acked):
                raise NotReplicated(f"{request.script} reached {acked!r} of {self.acks.request()!r}")
            return reply
        raise NotReplicated(f"{request.script} found no primary to wait on")

    def _node(self, key: str) -> redis.Redis:
        if not isinstance(self.redis, redis.RedisCluster):
            return self.redis
        node = self.redis.get_node_from_key(key)  # type: ignore[no-untyped-call]
        return self.redis.get_redis_connection(node)

    def create(
        self, game_id: str, secret: Mapping[str, str], entry: Entry, more: Sequence[Entry] = ()
    ) -> bool:
        if self.archive is not None and self.archive.has(game_id):
            return False
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

    def archived(self, game_id: str) -> ArchivedGame | None:
        """As ``EventStore.archived``, read in this thread."""
        return None if self.archive is None else self.archive.read(game_id)

    def read(self, game_id: str, after: int = 0, limit: int | None = None) -> list[Entry]:
        entries = self.run(ops.read(game_id, after, limit))
        if _whole(entries, limit) or (game := self.archived(game_id)) is None:
            return entries
        return _archived_entries(game, entries, after, limit)

    def load(self, game_id: str, cache: StateCache) -> Folded | None:
        folded = self.run(ops.load(game_id, cache))
        if _settled(folded) or (game := self.archived(game_id)) is None:
            return folded
        return _archived_fold(game, cache)

    def head(self, game_id: str) -> int:
        version = self.run(ops.head(game_id))
        if version or (game := self.archived(game_id)) is None:
            return version
        return game.head

    def command_entry(
        self, game_id: str, command_id: str, *, seat: int | None, system: bool = False
    ) -> tuple[str, int, int] | None:
        record = self.run(ops.command_entry(game_id, command_id, seat=seat, system=system))
        if record is not None or (game := self.archived(game_id)) is None:
            return record
        return archived_games.command_entry(game, command_id, seat, system)

    def seat_version(self, game_id: str, seat: int) -> int:
        version = self.run(ops.seat_version(game_id, seat))
        if version or (game := self.archived(game_id)) is None:
            return version
        return archived_games.seat_version(game, seat)

    def secret(self, game_id: str) -> dict[str, str] | None:
        secret = self.run(ops.secret(game_id))
        if secret is not None or (game := self.archived(game_id)) is None:
            return secret
        return dict(game.secret) or None

    def write_views(
        self, game_id: str, expected_checkpoint: int, new_checkpoint: int, fields: Mapping[str, bytes]
    ) -> ViewWrite:
        return self.run(ops.write_views(game_id, expected_checkpoint, new_checkpoint, fields))

    def read_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        return self._archived_view(game_id, self.run(ops.read_view(game_id, field)))

    def read_seat_view(self, game_id: str, field: str) -> tuple[int, bytes | None]:
        return self._archived_view(game_id, self.run(ops.read_seat_view(game_id, field)))

    def _archived_view(self, game_id: str, read: tuple[int, bytes | None]) -> tuple[int, bytes | None]:
        if read[0] or (game := self.archived(game_id)) is None:
            return read
        return game.head, None

    def checkpoint(self, game_id: str) -> int:
        version = self.run(ops.checkpoint(game_id))
        if version or (game := self.archived(game_id)) is None:
            return version
        return game.head

    def handovers_taken(self, last_id: str) -> bool:
        return self.run(indexes.handovers_taken(last_id))

    def handed_over(self) -> int:
        return self.run(indexes.handed_over())

    def handover_consumer_idle(self) -> float | None:
        return self.run(indexes.handover_consumer_idle())

    def put_lobby(self, game_id: str, summary: bytes) -> None:
        self.run(indexes.put_lobby(game_id, summary))

    def lobby(self, limit: int) -> list[bytes]:
        return self.run(indexes.lobby(limit))

    def scan_games(self) -> list[str]:
        """Every game id, from every primary of a cluster."""
        if not isinstance(self.redis, redis.RedisCluster):
            return self.run(indexes.scan_games())
        found: list[str] = []
        for node in self.redis.get_primaries():  # type: ignore[no-untyped-call]
            found += SyncEventStore(self.redis.get_redis_connection(node)).run(indexes.scan_games())
        return found

    def mark_dirty(self, game_id: str) -> None:
        self.run(ops.mark_dirty(game_id))

    def index_timer(self, game_id: str, deadline_ms: int) -> None:
        self.run(indexes.index_timer(game_id, deadline_ms))

    def indexes_known(self) -> bool:
        return self.run(indexes.indexes_known())

    def know_indexes(self) -> None:
        self.run(indexes.know_indexes())

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
