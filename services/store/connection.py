"""Connecting to Redis: an async client for the API and a sync one for the queue.

Both use a *blocking* pool: when every connection is busy a request waits (up to ``pool_timeout``)
for one to come back instead of failing at once, as redis-py's default pool does. Live streams do
not take pooled connections (``services.store.live_updates`` shares one subscriber per process).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

DEFAULT_URL = "redis://127.0.0.1:6379"

Connect = Callable[[], tuple[aioredis.Redis, redis.Redis]]
"""Makes the (async, sync) clients; called inside the app's own event loop."""

UNAVAILABLE = (RedisConnectionError, RedisTimeoutError)
"""What a Redis that is down, restarting or paused raises (the pool's wait timeout included)."""


@dataclass(frozen=True)
class PoolLimits:
    max_connections: int = 50
    pool_timeout: float = 5.0  # seconds to wait for a free connection
    socket_timeout: float = 5.0  # seconds to wait for a reply
    retries: int = 2  # reconnect attempts of one command (writes are idempotent by command id)


def _backoff() -> ExponentialBackoff:
    return ExponentialBackoff(cap=0.5, base=0.05)


def async_client(url: str, limits: PoolLimits) -> aioredis.Redis:
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=limits.max_connections,
        timeout=limits.pool_timeout,
        socket_timeout=limits.socket_timeout,
        socket_connect_timeout=limits.socket_timeout,
        health_check_interval=30,
        retry=AsyncRetry(_backoff(), limits.retries),  # a given pool's retry is the one used
    )
    return aioredis.Redis(connection_pool=pool)


def sync_client(url: str, limits: PoolLimits) -> redis.Redis:
    pool = redis.BlockingConnectionPool.from_url(
        url,
        max_connections=limits.max_connections,
        timeout=limits.pool_timeout,
        socket_timeout=limits.socket_timeout,
        socket_connect_timeout=limits.socket_timeout,
        health_check_interval=30,
        retry=Retry(_backoff(), limits.retries),
    )
    return redis.Redis(connection_pool=pool)


def connect_to(url: str | None, limits: PoolLimits | None = None) -> Connect:
    def connect() -> tuple[aioredis.Redis, redis.Redis]:
        target = url or DEFAULT_URL
        chosen = limits or PoolLimits()
        return async_client(target, chosen), sync_client(target, chosen)

    return connect
