"""Connecting to Redis: the event store (a standalone server or a Redis Cluster) and the queue.

Two URLs: the store's (``redis_url``: games, tokens, views, accounts, ratings) and the queue's
(``queue_url``: RQ, which does not run on a cluster). When the store is standalone the queue
defaults to the same server, and the global indexes (dirty set, hand-over set, lobby, timers,
waiting tables: ``services.store.indexes``) live in the store. When the store is a cluster the
queue must be a standalone server of its own, and the indexes live there beside RQ: the cluster
then holds only keys of one game (hash tag ``{<game id>}``), of one account, or of the players'
ratings, so that no script or pipeline of a game's path spans two slots and no key of the cluster
is written by every command.

Standalone clients use a *blocking* pool: when every connection is busy a request waits (up to
``pool_timeout``) for one to come back instead of failing at once, as redis-py's default pool does.
Live streams do not take pooled connections (``services.store.live_updates`` shares one subscriber
per process and node).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ClusterError, ReadOnlyError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from services.store.packing import cluster_with_hiredis_packing, with_hiredis_packing

DEFAULT_URL = "redis://127.0.0.1:6379"

UNAVAILABLE = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterError,  # ClusterDownError, MasterDownError, and a cluster client's exhausted redirections
    TryAgainError,
    SlotNotCoveredError,  # a slot map taken while a primary was dying
    ReadOnlyError,  # a write that reached a primary just demoted to replica
    ConnectionError,  # the socket's own (reset, refused, broken pipe), when redis-py lets one through
    TimeoutError,  # asyncio's and the socket's
)
"""What a Redis that is down, restarting, paused or failing over raises (the pool's wait timeout
included)."""

_CLOSED_TRANSPORT = ("handler is closed", "transport is closed", "unable to perform operation on")


def is_unavailable(error: BaseException) -> bool:
    """Whether ``error`` is a store that went away: one of ``UNAVAILABLE``, the event loop's own
    error for a write on a connection a dying node closed (uvloop: ``RuntimeError("handler is
    closed")``, asyncio: "unable to perform operation on <TCPTransport closed=True ...>"), or a group
    of such errors only (from concurrent reads)."""
    if isinstance(error, UNAVAILABLE):
        return True
    if isinstance(error, RuntimeError):
        message = str(error)
        return any(closed in message for closed in _CLOSED_TRANSPORT)
    if isinstance(error, BaseExceptionGroup):
        return all(is_unavailable(inner) for inner in error.exceptions)
    return False


ClusterMode = Literal["auto", "yes", "no"]
CLUSTER_MODES: tuple[ClusterMode, ...] = ("auto", "yes", "no")

AsyncStoreClient = aioredis.Redis | aioredis.RedisCluster
SyncStoreClient = redis.Redis | redis.RedisCluster


@dataclass(frozen=True)
class PoolLimits:
    max_connections: int = 50
    pool_timeout: float = 5.0  # seconds to wait for a free connection
    socket_timeout: float = 5.0  # seconds to wait for a reply
    retries: int = 2  # reconnect attempts of one command (writes are idempotent by command id)


@dataclass(frozen=True)
class Acks:
    """What an append waits for before it is acknowledged (``TABLESTREAM_APPEND_*``).

    ``replicas`` 0: the primary's reply (durable as its ``appendfsync`` says). ``replicas`` N with
    ``command`` ``waitaof``: ``WAITAOF 1 N`` on the connection that appended, so the events are
    fsynced in the primary's AOF and in N replicas' AOFs; ``wait``: ``WAIT N``, N replicas received
    them (in memory). Fewer acks within ``timeout_ms``: ``NotReplicated`` (the events may be stored:
    the client retries with the same command id and gets its receipt once they are replicated)."""

    replicas: int = 0
    command: Literal["waitaof", "wait"] = "waitaof"
    timeout_ms: int = 1000

    def __post_init__(self) -> None:
        if self.replicas < 0 or self.timeout_ms < 1:
            raise ValueError("append acks need replicas >= 0 and a timeout of at least 1 ms")
        if self.command not in ("waitaof", "wait"):
            raise ValueError(f"append_ack must be 'waitaof' or 'wait', not {self.command!r}")

    def request(self) -> tuple[str | int, ...]:
        """The command whose reply ``enough`` judges (the last of ``requests()``)."""
        return self.requests()[-1]

    def requests(self) -> list[tuple[str | int, ...]]:
        """The commands sent after the write, in its pipeline. For ``waitaof``: ``WAIT N t1`` then
        ``WAITAOF 1 N t2`` with t1 + t2 = ``timeout_ms`` (the documented bound). A replica answers
        WAITAOF's ack request before its fsync and then reports only on its once-a-second cycle;
        WAIT's ack request, sent first, makes it report again after the write, so WAITAOF is answered
        in milliseconds, not in up to a second. Never ``WAIT N 0`` (0 blocks for ever): with a 1 ms
        budget WAITAOF goes alone."""
        if self.command == "wait":
            return [("WAIT", self.replicas, self.timeout_ms)]
        waitaof: tuple[str | int, ...] = ("WAITAOF", 1, self.replicas, self.timeout_ms)
        if self.replicas == 0 or self.timeout_ms < 2:
            return [waitaof]
        first = self.timeout_ms // 2
        return [("WAIT", self.replicas, first), ("WAITAOF", 1, self.replicas, self.timeout_ms - first)]

    def enough(self, reply: object) -> bool:
        """Whether a ``request()`` reply counts ``replicas`` acks (and, for WAITAOF, the local fsync)."""
        if isinstance(reply, list | tuple):
            return int(reply[0]) >= 1 and int(reply[1]) >= self.replicas
        return isinstance(reply, int | str | bytes) and int(reply) >= self.replicas


class NotReplicated(RuntimeError):
    """An append reached the primary but not enough replicas within the acks' timeout."""


@dataclass(frozen=True)
class Topology:
    """Where things live: the store (cluster or not) and the queue (always standalone)."""

    store_url: str
    queue_url: str
    cluster: bool


def is_cluster(url: str) -> bool:
    """Whether the server at ``url`` runs in cluster mode (``INFO cluster``). A server that does not
    answer counts as standalone (the API starts and says it is not ready; set ``redis_cluster``
    explicitly in a cluster deployment)."""
    client = redis.Redis.from_url(url, socket_connect_timeout=5, socket_timeout=5)
    try:
        return bool(client.info("cluster").get("cluster_enabled"))
    except UNAVAILABLE:
        return False
    finally:
        client.close()


def topology(store_url: str | None, queue_url: str | None = None, cluster: ClusterMode = "auto") -> Topology:
    """The topology for these settings; ``auto`` asks the store whether it is a cluster. A cluster
    store needs a queue URL of its own (RQ does not run on a cluster)."""
    if cluster not in CLUSTER_MODES:
        raise ValueError(f"redis_cluster must be one of {', '.join(CLUSTER_MODES)}, not {cluster!r}")
    store = store_url or DEFAULT_URL
    clustered = is_cluster(store) if cluster == "auto" else cluster == "yes"
    if clustered and not queue_url:
        raise ValueError(
            "the store is a Redis Cluster: give the queue its own standalone Redis with --queue-url "
            "(TABLESTREAM_QUEUE_URL); RQ does not run on a cluster"
        )
    return Topology(store, queue_url or store, clustered)


def redacted(url: str) -> str:
    """A Redis URL fit for a log: its password replaced (it would land in every pod's log)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = f"{parts.username}:" if parts.username else ":"
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}***@{host}{port}"))


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
    return with_hiredis_packing(aioredis.Redis(connection_pool=pool))


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


def named_client(client: redis.Redis, name: str) -> redis.Redis:
    """A client of its own on ``client``'s server (its address, credentials, timeouts, retries), with
    one connection that introduces itself as ``name`` (redis-py's ``client_name``: ``CLIENT SETNAME``
    each time it connects), so ``CLIENT LIST`` tells it apart from the pooled connections; for one
    thread's use (``workers.handover``)."""
    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, "client_name": name}
    own = redis.ConnectionPool(connection_class=pool.connection_class, max_connections=1, **kwargs)
    return redis.Redis(connection_pool=own)


def async_cluster_client(url: str, limits: PoolLimits) -> aioredis.RedisCluster:
    """redis-py's cluster client: commands go to their key's slot, MOVED and failovers refresh the
    slot map and retry."""
    return cluster_with_hiredis_packing(
        aioredis.RedisCluster.from_url(
            url,
            max_connections=limits.max_connections,
            socket_timeout=limits.socket_timeout,
            socket_connect_timeout=limits.socket_timeout,
            retry=AsyncRetry(_backoff(), max(limits.retries, 3)),
        )
    )


def sync_cluster_client(url: str, limits: PoolLimits) -> redis.RedisCluster:
    return redis.RedisCluster.from_url(
        url,
        max_connections=limits.max_connections,
        socket_timeout=limits.socket_timeout,
        socket_connect_timeout=limits.socket_timeout,
        retry=Retry(_backoff(), max(limits.retries, 3)),
    )


@dataclass
class AsyncClients:
    """The API's clients: the store and the indexes (async), the queue (sync, for RQ)."""

    store: AsyncStoreClient
    queue: redis.Redis
    index: aioredis.Redis | None = None  # None: the indexes are in the store

    @property
    def cluster(self) -> bool:
        return isinstance(self.store, aioredis.RedisCluster)

    async def aclose(self) -> None:
        for client in {id(c): c for c in (self.store, self.index) if c is not None}.values():
            with contextlib.suppress(*UNAVAILABLE, OSError):
                await client.aclose()
        self.queue.close()


@dataclass
class SyncClients:
    """A worker's clients: the store and the indexes, and the queue (RQ's connection)."""

    store: SyncStoreClient
    queue: redis.Redis
    index: redis.Redis | None = None

    @property
    def cluster(self) -> bool:
        return isinstance(self.store, redis.RedisCluster)


Connect = Callable[[], "AsyncClients | tuple[aioredis.Redis, redis.Redis]"]
"""Makes the API's clients; called inside the app's own event loop. A pair (async, sync) is one
standalone server for everything (tests hand in fakeredis this way)."""


def connect_async(place: Topology, limits: PoolLimits) -> AsyncClients:
    queue = sync_client(place.queue_url, limits)
    if place.cluster:
        return AsyncClients(
            async_cluster_client(place.store_url, limits), queue, async_client(place.queue_url, limits)
        )
    return AsyncClients(async_client(place.store_url, limits), queue)


def connect_sync(place: Topology, limits: PoolLimits, queue: redis.Redis | None = None) -> SyncClients:
    """A worker's clients; ``queue`` is RQ's connection when the caller has it already."""
    queue = queue if queue is not None else sync_client(place.queue_url, limits)
    if place.cluster:
        return SyncClients(sync_cluster_client(place.store_url, limits), queue, queue)
    if place.store_url == place.queue_url:
        return SyncClients(queue, queue)
    return SyncClients(sync_client(place.store_url, limits), queue)


def connect_to(
    url: str | None,
    limits: PoolLimits | None = None,
    *,
    queue_url: str | None = None,
    cluster: ClusterMode = "auto",
) -> Connect:
    def connect() -> AsyncClients:
        return connect_async(topology(url, queue_url, cluster), limits or PoolLimits())

    return connect
