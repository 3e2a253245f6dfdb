"""Wake-ups for live streams: every game's shard channel (``SPUBLISH`` on every append and every
views write, ``services.store.operations``), read by ONE subscriber connection per API process and
Redis node.

A node's subscriber connects with the first stream of one of its games. A game's channel
``ts:{<game id>}:live`` is a shard channel in the game's own slot: on a Redis
Cluster its messages touch only the node that holds the game (plain pub/sub would broadcast every
message to every node). The hub subscribes (``SSUBSCRIBE``) to a game's channel while at least one
of its streams is open, on the connection of the node that holds the game (the one server when the
store is standalone), and fans each message out to that game's streams through small bounded
queues. A live stream therefore holds no pooled Redis connection: a thousand streams cost one
connection per node, not a thousand.

A wake-up only says "read the tail": streams also re-read every ``poll`` seconds, so a message lost
while a subscriber reconnects (Redis restarted, a primary failed over) delays a stream by at most
one poll; after a reconnection every stream of the node's games is woken to re-read at once.

The same subscriptions keep the process's view cache honest (``services.api.view_cache``): a game
can also be *watched*, and every message on its channel, and the loss of its node's subscriber,
calls ``on_change(game_id)``. ``fence(game_id)`` returns once every message published before it was
called has been dispatched: it sends a ``PING`` on the subscriber connection, whose reply comes in
order after those messages (one ``PING`` in flight per node serves every caller waiting meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import redis.asyncio as aioredis
import structlog
from redis.asyncio.client import PubSub
from redis.exceptions import ClusterDownError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError

from services.store.connection import UNAVAILABLE, AsyncStoreClient
from services.store.keys import game_id_of_live_channel, game_keys

log = structlog.get_logger("tablestream.live")

FENCE_SECONDS = 1.0  # a fence not passed within this: the caller reads Redis instead
RECONNECT_MIN = 0.1
RECONNECT_MAX = 2.0
CONFIRM_SECONDS = 1.0  # a subscription not confirmed within this: the stream relies on its polls
STANDALONE = "store"


class Wakeups:
    """The wake-ups of one stream (one game)."""

    def __init__(self, hub: LiveHub, size: int) -> None:
        self._hub = hub
        self._queue: asyncio.Queue[None] = asyncio.Queue(maxsize=size)

    def notify(self) -> None:
        with contextlib.suppress(asyncio.QueueFull):  # a full queue already holds a wake-up
            self._queue.put_nowait(None)

    async def wait(self, timeout: float) -> bool:
        """Return on the next wake-up (``True``) or after ``timeout`` seconds (``False``); at once
        when the hub is closing."""
        if self._hub.closing:
            return False
        try:
            async with asyncio.timeout(timeout):
                await self._queue.get()
        except TimeoutError:
            return False
        return True

    @property
    def closing(self) -> bool:
        return self._hub.closing


class ShardRoutes:
    """Which server holds a channel's slot: the store itself, or a cluster's primary (one plain
    client per node, made on first use)."""

    def __init__(self, client: AsyncStoreClient) -> None:
        self._client = client
        self._nodes: dict[str, aioredis.Redis] = {}

    async def node(self, channel: str) -> tuple[str, aioredis.Redis]:
        if not isinstance(self._client, aioredis.RedisCluster):
            return STANDALONE, self._client
        await self._client.initialize()  # the slot map (at once when known)
        node = self._client.get_node_from_key(channel)
        if node is None:
            raise ClusterDownError(f"no node holds the slot of {channel}")
        client = self._nodes.get(node.name)
        if client is None:
            kw = node.connection_kwargs
            client = aioredis.Redis(
                host=node.host,
                port=int(node.port),
                username=kw.get("username"),
                password=kw.get("password"),
                socket_connect_timeout=kw.get("socket_connect_timeout"),
            )
            self._nodes[node.name] = client
        return node.name, client

    async def refresh(self) -> None:
        """Ask the cluster for its slot map again (after a node was lost)."""
        if isinstance(self._client, aioredis.RedisCluster):
            await self._client.nodes_manager.initialize()

    async def aclose(self) -> None:
        for client in self._nodes.values():
            with contextlib.suppress(*UNAVAILABLE, OSError):
                await client.aclose()
        self._nodes.clear()


@dataclass(eq=False)
class _Reader:
    """One node's subscriber connection, its channels and its reading task."""

    name: str
    pubsub: PubSub
    games: set[str] = field(default_factory=set)
    confirmations: dict[str, asyncio.Event] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None
    lost: bool = False
    pings_sent: int = 0  # fences: PING <n> is answered in order after every message published before it
    pongs_read: int = 0
    ping_sent_at: float = 0.0
    ping_wanted: bool = False  # a fence waits for the PING after the one in flight
    # by PING: one future for every fence waiting on it
    fences: dict[int, asyncio.Future[bool]] = field(default_factory=dict)
    on_reconnect: Callable[[], None] | None = None
    hooked: bool = False

    async def send_ping(self) -> None:
        self.pings_sent += 1
        self.ping_sent_at = asyncio.get_running_loop().time()
        await self.pubsub.ping(str(self.pings_sent))

    def give_up_late_ping(self, now: float) -> None:
        """A PING unanswered for ``FENCE_SECONDS``: fail its fences (their callers read Redis) and
        forget it (its late answer passes nothing); the next fence sends a new one."""
        if self.pings_sent > self.pongs_read and now - self.ping_sent_at > FENCE_SECONDS:
            self.pongs_read = self.pings_sent
            self.ping_wanted = False
            self.pass_fences(self.pings_sent + 1, False)

    def reconnected(self, connection: object) -> None:
        """redis-py reconnects a subscriber connection by itself (and subscribes it again) within
        its retries: messages may have been missed meanwhile, so that counts as a loss."""
        if self.on_reconnect is not None:
            self.on_reconnect()

    def confirmed(self, game_id: str) -> bool:
        if self.lost or self.task is None or self.task.done():  # no task reads its answers
            return False
        return not self.confirmations or game_keys(game_id).live not in self.confirmations

    def pass_fences(self, upto: int, passed: bool) -> None:
        for target in [target for target in self.fences if target <= upto]:
            future = self.fences.pop(target)
            if not future.done():
                future.set_result(passed)


class LiveHub:
    """One subscriber connection per process and node, fanning out to per-stream bounded queues."""

    def __init__(self, client: AsyncStoreClient, queue_size: int = 16) -> None:
        self._routes = ShardRoutes(client)
        self._queue_size = queue_size
        self._streams: dict[str, set[Wakeups]] = {}
        self._readers: dict[str, _Reader] = {}
        self._lock = asyncio.Lock()  # subscriptions change one at a time
        self._recovering: set[asyncio.Task[None]] = set()
        self._watched: set[str] = set()
        self._background: set[asyncio.Task[None]] = set()
        self.on_change: Callable[[str], None] | None = None
        """Called with a watched game's id on every message of its channel and when its subscriber
        is lost (the view cache drops what it holds of the game)."""
        self.closing = False

    @property
    def stream_count(self) -> int:
        return sum(len(streams) for streams in self._streams.values())

    @property
    def channel_count(self) -> int:
        """Games subscribed to right now (one channel each)."""
        return sum(len(reader.games) for reader in self._readers.values())

    def begin_close(self) -> None:
        """Shutdown: every stream wakes and ends, no new one starts, and no fence passes (those
        waiting return ``False`` at once: their requests read Redis or are drained)."""
        self.closing = True
        self._wake_all()
        for reader in self._readers.values():
            reader.pass_fences(reader.pings_sent + 1, False)

    async def close(self) -> None:
        self.begin_close()
        for task in [*self._recovering, *self._background]:
            task.cancel()
        for reader in list(self._readers.values()):
            await self._drop(reader)
        await self._routes.aclose()

    @asynccontextmanager
    async def subscribe(self, game_id: str) -> AsyncIterator[Wakeups]:
        """Registered on entry, and subscribed (confirmed, or given up after ``CONFIRM_SECONDS``):
        enter before reading a game's tail, so no wake-up is lost."""
        wakeups = Wakeups(self, self._queue_size)
        streams = self._streams.setdefault(game_id, set())
        first = not streams
        streams.add(wakeups)
        try:
            if first and not self.closing:
                await self._listen(game_id)
            yield wakeups
        finally:
            current = self._streams.get(game_id)
            if current is not None:
                current.discard(wakeups)
                if not current:
                    del self._streams[game_id]
                    await self._unlisten(game_id)

    def watch(self, game_id: str) -> None:
        """Keep the game's channel subscribed (from the background) for ``on_change`` until
        ``unwatch``; whether it is yet: ``confirmed``."""
        if game_id in self._watched or self.closing:
            return
        self._watched.add(game_id)
        if game_id not in self._streams:  # else its streams subscribed it
            self._spawn(self._listen(game_id, wait=False))

    def unwatch(self, game_id: str) -> None:
        if game_id not in self._watched:
            return
        self._watched.discard(game_id)
        if game_id not in self._streams and not self.closing:
            self._spawn(self._unlisten(game_id))

    def confirmed(self, game_id: str) -> bool:
        """Whether the game's channel is subscribed now, confirmed by its server: from here on, every
        message published on it reaches ``on_change`` (or the subscriber is lost, which does too)."""
        reader = self._reader_of(game_id)
        return reader is not None and reader.confirmed(game_id)

    async def fence(self, game_id: str) -> bool:
        """``True`` once every message published on the game's channel before this call has been
        dispatched; ``False`` when that cannot be known (not subscribed, subscriber lost, no answer
        within ``FENCE_SECONDS``): the caller must not trust what it holds of the game."""
        reader = self._reader_of(game_id)
        if self.closing or reader is None or not reader.confirmed(game_id):
            return False
        target = reader.pings_sent + 1
        future = reader.fences.get(target)
        if future is None:  # registered before the PING is sent: its answer may be read at once
            future = reader.fences[target] = asyncio.get_running_loop().create_future()
        if reader.pings_sent == reader.pongs_read:
            try:
                async with asyncio.timeout(FENCE_SECONDS):  # one per PING, shared by its fences
                    await reader.send_ping()
            except (TimeoutError, *UNAVAILABLE):
                return False  # a broken connection: the reading task finds it lost and fails every fence
        else:
            reader.ping_wanted = True  # sent by the reading task when the one in flight is answered
        # passed or failed by the reading task, which gives up on a PING after FENCE_SECONDS
        return await future

    def _wanted(self, game_id: str) -> bool:
        return game_id in self._streams or game_id in self._watched

    def _spawn(self, work: Awaitable[None]) -> None:
        async def run() -> None:
            await work

        task = asyncio.create_task(run(), name="tablestream-live-watch")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _listen(self, game_id: str, wait: bool = True) -> None:
        """Subscribe to the game's channel on its node; a node that does not answer is retried by
        the streams' polls and by the next stream (logged, not raised)."""
        channel = game_keys(game_id).live
        confirmed = asyncio.Event()
        name = STANDALONE
        try:
            async with self._lock:
                if not self._wanted(game_id) or self._reader_of(game_id) is not None:
                    return
                name, client = await self._routes.node(channel)
                reader = self._readers.get(name)
                if reader is None:
                    reader = _Reader(name, client.pubsub())
                    self._readers[name] = reader
                reader.games.add(game_id)
                reader.confirmations[channel] = confirmed
                await reader.pubsub.ssubscribe(channel)
                connection = reader.pubsub.connection
                if not reader.hooked and connection is not None:
                    reader.on_reconnect = functools.partial(self._lose, reader)
                    connection.register_connect_callback(reader.reconnected)
                    reader.hooked = True
                if reader.task is None:
                    reader.task = asyncio.create_task(self._read(reader), name=f"tablestream-live-{name}")
        except UNAVAILABLE as exc:
            log.warning("live_subscribe_failed", game_id=game_id, error=f"{type(exc).__name__}: {exc}")
            async with self._lock:
                reader = self._readers.get(name)
                if reader is not None:
                    reader.games.discard(game_id)
                    reader.confirmations.pop(channel, None)
                    if reader.task is None and not reader.games:  # never connected: forget it
                        await self._drop(reader)
            return
        if not wait:
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CONFIRM_SECONDS):
                await confirmed.wait()

    async def _unlisten(self, game_id: str) -> None:
        async with self._lock:
            reader = self._reader_of(game_id)
            if reader is None or self._wanted(game_id):
                return
            reader.games.discard(game_id)
            with contextlib.suppress(*UNAVAILABLE, OSError):
                await reader.pubsub.sunsubscribe(game_keys(game_id).live)

    def _reader_of(self, game_id: str) -> _Reader | None:
        for reader in self._readers.values():
            if game_id in reader.games:
                return reader
        return None

    def _dispatch(self, game_id: str | None) -> None:
        for wakeups in self._streams.get(game_id or "", ()):
            wakeups.notify()
        if game_id in self._watched and self.on_change is not None:
            self.on_change(game_id)

    async def _answered(self, reader: _Reader, data: bytes | str) -> None:
        """A fence's ``PING`` answered: pass the fences it covers, and send the next one if wanted."""
        try:
            answered = int(data)
        except ValueError:
            return  # not one of ours
        if answered <= reader.pongs_read:
            return  # a PING given up on (``give_up_late_ping``)
        reader.pongs_read = answered
        reader.pass_fences(answered, True)
        if reader.ping_wanted:
            reader.ping_wanted = False
            await reader.send_ping()

    def _lose(self, reader: _Reader) -> None:
        """The reader's connection broke: messages may be lost from here on, so no fence passes and
        every watched game of the node counts as changed."""
        if reader.lost:
            return
        reader.lost = True
        reader.pass_fences(reader.pings_sent + 1, False)
        if self.on_change is not None:
            for game_id in list(reader.games):
                if game_id in self._watched:
                    self.on_change(game_id)

    def _wake_all(self, games: set[str] | None = None) -> None:
        for game_id, streams in self._streams.items():
            if games is None or game_id in games:
                for wakeups in streams:
                    wakeups.notify()

    async def _read(self, reader: _Reader) -> None:
        """Read one node's messages until closing; a lost connection hands the node's games over to
        ``_recover``."""
        try:
            while not self.closing:
                message = await reader.pubsub.get_message(timeout=FENCE_SECONDS)
                if reader.lost:
                    raise RedisConnectionError("the subscriber connection was made again")
                reader.give_up_late_ping(asyncio.get_running_loop().time())
                if message is None:
                    continue
                kind = message.get("type")
                if kind in (b"smessage", "smessage"):
                    self._dispatch(game_id_of_live_channel(message["channel"]))
                elif kind in (b"pong", "pong"):
                    await self._answered(reader, message["data"])
                elif kind in (b"ssubscribe", "ssubscribe"):
                    channel = message["channel"]
                    event = reader.confirmations.pop(
                        channel.decode() if isinstance(channel, bytes) else channel, None
                    )
                    if event is not None:
                        event.set()
        except RedisError as exc:  # unreachable, or an answer the connection cannot go on from
            self._lose(reader)
            if not self.closing:
                log.warning("live_subscriber_lost", node=reader.name, error=f"{type(exc).__name__}: {exc}")
                task = asyncio.create_task(self._recover(reader), name="tablestream-live-recover")
                self._recovering.add(task)
                task.add_done_callback(self._recovering.discard)
        finally:  # nothing reads this connection's answers any more
            reader.pass_fences(reader.pings_sent + 1, False)

    async def _recover(self, lost: _Reader) -> None:
        """Subscribe the lost node's games again (on whichever node holds them now, after a
        failover), with backoff, then wake their streams: messages may have been missed."""
        async with self._lock:
            if self._readers.get(lost.name) is lost:
                del self._readers[lost.name]
        wanted = {*self._streams, *self._watched}
        games = set(lost.games) | {g for g in wanted if self._reader_of(g) is None}
        await self._drop(lost, cancel=False)
        delay = RECONNECT_MIN
        while not self.closing:
            try:
                await self._routes.refresh()
                for game_id in games:
                    if self._wanted(game_id):  # streams wait for their confirmation (woken after)
                        await self._listen(game_id, wait=game_id in self._streams)
                if all(self._reader_of(g) is not None for g in games if self._wanted(g)):
                    log.info("live_subscriber_reconnected", node=lost.name, games=len(games))
                    break
            except UNAVAILABLE as exc:
                log.warning("live_subscriber_retry", error=f"{type(exc).__name__}: {exc}", retry_in=delay)
            await asyncio.sleep(delay)
            delay = min(RECONNECT_MAX, delay * 2)
        self._wake_all(games)

    async def _drop(self, reader: _Reader, cancel: bool = True) -> None:
        self._lose(reader)
        if reader.pubsub.connection is not None:
            reader.pubsub.connection.deregister_connect_callback(reader.reconnected)
        if cancel and reader.task is not None and reader.task is not asyncio.current_task():
            reader.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await reader.task
        close: Callable[[], Awaitable[None]] = reader.pubsub.aclose  # redis-py leaves aclose unannotated
        with contextlib.suppress(*UNAVAILABLE, OSError):
            await close()
        if self._readers.get(reader.name) is reader:
            del self._readers[reader.name]
