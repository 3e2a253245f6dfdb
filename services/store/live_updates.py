"""Wake-ups for live streams: every game's pub/sub channel (published on every append and every
views write, ``services.store.operations``), read by ONE subscriber per API process.

The hub holds a single pub/sub connection with a pattern subscription to every game's channel and
fans each message out to the streams of that game through small bounded queues. A live stream
therefore holds no pooled Redis connection: a thousand streams cost one connection, not a thousand.

A wake-up only says "read the tail": streams also re-read every ``poll`` seconds, so a message lost
while the subscriber reconnects (Redis restarted) delays a stream by at most one poll.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
import structlog
from redis.asyncio.client import PubSub

from services.store.connection import UNAVAILABLE
from services.store.keys import LIVE_PATTERN, game_id_of_live_channel

log = structlog.get_logger("tablestream.live")

RECONNECT_MIN = 0.1
RECONNECT_MAX = 2.0


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


class LiveHub:
    """One pattern subscriber per process, fanning out to per-stream bounded queues."""

    def __init__(self, client: aioredis.Redis, queue_size: int = 16) -> None:
        self._client = client
        self._queue_size = queue_size
        self._streams: dict[str, set[Wakeups]] = {}
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self.closing = False

    @property
    def stream_count(self) -> int:
        return sum(len(streams) for streams in self._streams.values())

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="tablestream-live-hub")

    async def wait_subscribed(self, timeout: float) -> bool:
        """Until the subscriber listens (``False`` after ``timeout``): tests and start-up."""
        try:
            async with asyncio.timeout(timeout):
                await self._subscribed.wait()
        except TimeoutError:
            return False
        return True

    def begin_close(self) -> None:
        """Shutdown: every stream wakes and ends; no new one starts."""
        self.closing = True
        for streams in self._streams.values():
            for wakeups in streams:
                wakeups.notify()

    async def close(self) -> None:
        self.begin_close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @asynccontextmanager
    async def subscribe(self, game_id: str) -> AsyncIterator[Wakeups]:
        """Registered on entry: register before reading a game's tail, so no wake-up is lost."""
        wakeups = Wakeups(self, self._queue_size)
        self._streams.setdefault(game_id, set()).add(wakeups)
        try:
            yield wakeups
        finally:
            streams = self._streams.get(game_id)
            if streams is not None:
                streams.discard(wakeups)
                if not streams:
                    del self._streams[game_id]

    def _dispatch(self, message: dict[str, Any]) -> None:
        game_id = game_id_of_live_channel(message["channel"])
        for wakeups in self._streams.get(game_id or "", ()):
            wakeups.notify()

    def _wake_all(self) -> None:
        for streams in self._streams.values():
            for wakeups in streams:
                wakeups.notify()

    async def _run(self) -> None:
        delay = RECONNECT_MIN
        while not self.closing:
            pubsub: PubSub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(LIVE_PATTERN)
                if not self._subscribed.is_set():
                    self._subscribed.set()
                else:
                    log.info("live_subscriber_reconnected")
                self._wake_all()  # messages may have been missed while reconnecting: re-read
                delay = RECONNECT_MIN
                while not self.closing:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is not None and message.get("type") == "pmessage":
                        self._dispatch(message)
            except UNAVAILABLE as exc:
                log.warning("live_subscriber_lost", error=f"{type(exc).__name__}: {exc}", retry_in=delay)
                await asyncio.sleep(delay)
                delay = min(RECONNECT_MAX, delay * 2)
            finally:
                close: Callable[[], Awaitable[None]] = pubsub.aclose  # redis-py leaves aclose unannotated
                with contextlib.suppress(*UNAVAILABLE, OSError):
                    await close()
