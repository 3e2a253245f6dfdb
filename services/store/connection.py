"""Connecting to Redis: an async client for the API and a sync one for the queue."""

from __future__ import annotations

from collections.abc import Callable

import redis
import redis.asyncio as aioredis

DEFAULT_URL = "redis://127.0.0.1:6379"

Connect = Callable[[], tuple[aioredis.Redis, redis.Redis]]
"""Makes the (async, sync) clients; called inside the app's own event loop."""


def connect_to(url: str | None) -> Connect:
    def connect() -> tuple[aioredis.Redis, redis.Redis]:
        target = url or DEFAULT_URL
        return aioredis.Redis.from_url(target), redis.Redis.from_url(target)

    return connect
