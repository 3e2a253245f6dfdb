"""Wake-ups for live streams: the game's pub/sub channel, published on every append and every
views write (``services.store.operations``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub

from services.store.keys import game_keys


class Wakeups:
    """A subscription to one game's channel."""

    def __init__(self, pubsub: PubSub) -> None:
        self._pubsub = pubsub

    async def wait(self, timeout: float) -> None:
        """Return on the next message on the channel, or after ``timeout`` seconds."""
        await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=timeout)


class LiveUpdates:
    def __init__(self, client: aioredis.Redis) -> None:
        self._client = client

    @asynccontextmanager
    async def subscribe(self, game_id: str) -> AsyncIterator[Wakeups]:
        """Subscribed on entry: subscribe before reading a game's tail, so no wake-up is lost."""
        pubsub = self._client.pubsub()
        await pubsub.subscribe(game_keys(game_id).live)
        try:
            yield Wakeups(pubsub)
        finally:
            await pubsub.unsubscribe()
            close: Callable[[], Awaitable[None]] = pubsub.aclose  # redis-py leaves aclose unannotated
            await close()
