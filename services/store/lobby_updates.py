"""Lobby changes for live lobby streams: ONE subscriber connection per API process to the
``LOBBY_CHANNEL`` of the indexes' server, fanned out to each open stream.

The projector announces a table's lobby summary when it changed besides its version (a table
created, a seat taken or freed, a start, an end: ``indexes.after_projection``), with a plain
``PUBLISH`` on the server that holds the lobby: the store's one server, or on a Redis Cluster
deployment the queue's standalone server, where the indexes live (``services.store.connection``).
So the lobby's channel is one channel on one server whatever the store is, beside the games'
shard channels (``services.store.live_updates``), and a move in a running game publishes nothing.

The hub subscribes while at least one stream is open. Each stream has a small bounded queue of
summaries; a stream that falls behind (its queue full) or a subscriber that was lost or reconnected
(a message may have been missed) marks the streams *stale*: each then sends the whole lobby again,
read after the loss, instead of the changes it may lack. Shutting down (``begin_close``) wakes
and ends every stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
import structlog
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from services.store.connection import UNAVAILABLE, AsyncClients
from services.store.keys import LOBBY_CHANNEL

log = structlog.get_logger("tablestream.live")

CONFIRM_SECONDS = 1.0  # a subscription not confirmed within this: the stream goes on (and is stale)
READ_SECONDS = 1.0
RECONNECT_MIN = 0.1
RECONNECT_MAX = 2.0


class LobbyFeed:
    """One stream's lobby changes: summaries in the order published, or ``stale`` (read it all)."""

    def __init__(self, hub: LobbyHub, size: int) -> None:
        self._hub = hub
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=size)
        self.stale = False
        self.waiting = False  # for the subscription's confirmation, before its first read

    def put(self, summary: bytes | None) -> None:
        """A summary, or ``None``: a wake-up (stale, or closing)."""
        try:
            self._queue.put_nowait(summary)
        except asyncio.QueueFull:  # fallen behind: the whole lobby again, once there is room
            self.stale = True

    def lose(self) -> None:
        self.stale = True
        self.put(None)

    async def next(self, timeout: float) -> list[bytes]:
        """The summaries published since the last call (waiting up to ``timeout`` for one); empty on
        a timeout, a stale mark or closing (look at ``stale`` and ``closing``)."""
        if self._hub.closing:
            return []
        try:
            async with asyncio.timeout(timeout):
                first = await self._queue.get()
        except TimeoutError:
            return []
        found = [first]
        while not self._queue.empty():
            found.append(self._queue.get_nowait())
        return [summary for summary in found if summary is not None]

    @property
    def closing(self) -> bool:
        return self._hub.closing


class LobbyHub:
    """The process's one subscription to the lobby's channel, while any stream is open."""

    def __init__(self, client: aioredis.Redis, queue_size: int = 64) -> None:
        self._client = client
        self._queue_size = queue_size
        self._feeds: set[LobbyFeed] = set()
        self._task: asyncio.Task[None] | None = None
        self._confirmed = asyncio.Event()
        self.closing = False

    @classmethod
    def of(cls, clients: AsyncClients) -> LobbyHub:
        """The hub on the indexes' server: the store's, or the queue's beside a cluster."""
        client = clients.index if clients.index is not None else clients.store
        if not isinstance(client, aioredis.Redis):
            raise ValueError("the indexes live on a standalone server, never on a cluster")
        return cls(client)

    @property
    def stream_count(self) -> int:
        return len(self._feeds)

    def begin_close(self) -> None:
        """Shutdown: every stream wakes and ends; no new one starts."""
        self.closing = True
        for feed in self._feeds:
            feed.put(None)

    async def close(self) -> None:
        self.begin_close()
        await self._stop()

    @asynccontextmanager
    async def subscribe(self) -> AsyncIterator[LobbyFeed]:
        """A feed, registered and (unless the server does not answer within ``CONFIRM_SECONDS``, when
        the feed starts stale) subscribed: enter before reading the lobby, so no change is lost."""
        feed = LobbyFeed(self, self._queue_size)
        self._feeds.add(feed)
        try:
            if self._task is None and not self.closing:
                self._task = asyncio.create_task(self._read(), name="tablestream-lobby-live")
            if not self._confirmed.is_set():
                feed.waiting = True
                try:
                    async with asyncio.timeout(CONFIRM_SECONDS):
                        await self._confirmed.wait()
                except TimeoutError:
                    pass  # its first read may miss a change: it reads again once subscribed
                finally:
                    feed.waiting = False
            yield feed
        finally:
            self._feeds.discard(feed)
            if not self._feeds:
                await self._stop()

    async def _stop(self) -> None:
        task, self._task = self._task, None
        self._confirmed.clear()
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RedisError):
                await task

    def _lose_all(self) -> None:
        self._confirmed.clear()
        for feed in self._feeds:
            feed.lose()

    async def _read(self) -> None:
        """Subscribe and read until no stream is left; a lost connection is made again with backoff,
        and every stream then reads the whole lobby (messages may have been missed)."""
        delay = RECONNECT_MIN
        while not self.closing and self._feeds:
            pubsub: PubSub = self._client.pubsub()
            try:
                await pubsub.subscribe(LOBBY_CHANNEL)
                connection = pubsub.connection
                if connection is not None:  # redis-py reconnects by itself: count that as a loss
                    connection.register_connect_callback(self._reconnected)
                while not self.closing:
                    message = await pubsub.get_message(timeout=READ_SECONDS)
                    if message is None:
                        continue
                    kind = message.get("type")
                    if kind in (b"message", "message"):
                        data = message["data"]
                        summary = data if isinstance(data, bytes) else str(data).encode()
                        for feed in self._feeds:
                            feed.put(summary)
                    elif kind in (b"subscribe", "subscribe") and not self._confirmed.is_set():
                        # Subscribed (again): a stream that read the lobby before this may lack a
                        # change published meanwhile, so it reads it again; one still waiting for
                        # this reads it once, now.
                        self._confirmed.set()
                        delay = RECONNECT_MIN
                        for feed in self._feeds:
                            if not feed.waiting:
                                feed.lose()
            except (*UNAVAILABLE, RedisError, OSError) as exc:
                log.warning("lobby_subscriber_lost", error=f"{type(exc).__name__}: {exc}", retry_in=delay)
                self._lose_all()
                await asyncio.sleep(delay)
                delay = min(RECONNECT_MAX, delay * 2)
            finally:
                await _close(pubsub, self._reconnected)

    def _reconnected(self, connection: object) -> None:
        """redis-py made the subscriber connection again (and subscribes it again): messages may
        have been missed meanwhile; the confirmation that follows has every stream read again."""
        self._lose_all()


async def _close(pubsub: PubSub, callback: Callable[[object], None]) -> None:
    if pubsub.connection is not None:
        pubsub.connection.deregister_connect_callback(callback)
    close: Callable[[], Awaitable[None]] = pubsub.aclose  # redis-py leaves aclose unannotated
    with contextlib.suppress(*UNAVAILABLE, RedisError, OSError):
        await close()
