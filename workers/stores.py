"""Which Redis a job reads and writes games through: the store's, never the queue's.

RQ hands a job the queue's connection (``job.connection``). When the store is that same standalone
server (``serve``, one Redis), a job uses it for everything. Otherwise the worker process is told
where the store is (``configure``, by ``workers.pool``; the settings travel in the environment, so
the pool's worker processes see them too) and each process keeps its own store clients: the store
(a standalone server or a Redis Cluster), and the indexes, which live beside the queue when the
store is a cluster (``services.store.connection``).
"""

from __future__ import annotations

import os
from pathlib import Path

import redis
import redis.asyncio as aioredis
from rq.job import Job

from services.operating.config import ENV_PREFIX, Settings
from services.store.archive import Archive
from services.store.connection import (
    Acks,
    AsyncStoreClient,
    PoolLimits,
    Topology,
    async_client,
    async_cluster_client,
    connect_sync,
)
from services.store.event_store import SyncEventStore

STORE_URL = ENV_PREFIX + "REDIS_URL"
QUEUE_URL = ENV_PREFIX + "QUEUE_URL"
CLUSTER = ENV_PREFIX + "REDIS_CLUSTER"
WORKER_LIMITS = PoolLimits(max_connections=20)

_stores: dict[tuple[int, Topology], SyncEventStore] = {}


def configure(place: Topology) -> None:
    """Tell this process and the worker processes it starts where the store is."""
    os.environ[STORE_URL] = place.store_url
    os.environ[QUEUE_URL] = place.queue_url
    os.environ[CLUSTER] = "yes" if place.cluster else "no"


def configured() -> Topology | None:
    """The store ``configure`` named (``None``: not configured, the job's connection is the store)."""
    store, queue, cluster = os.environ.get(STORE_URL), os.environ.get(QUEUE_URL), os.environ.get(CLUSTER)
    if not store or not queue or cluster not in ("yes", "no"):
        return None
    place = Topology(store, queue, cluster == "yes")
    if not place.cluster and place.store_url == place.queue_url:
        return None
    return place


def _acks() -> Acks:
    return Settings.from_env().acks


_archives: dict[Path, Archive] = {}


def settings_archive(settings: Settings | None = None) -> Archive:
    """The archive of finished games the settings name (one per directory and process, so that its
    memory of the files read is shared by the process's stores)."""
    directory = (settings or Settings.from_env()).archive_directory
    archive = _archives.get(directory)
    if archive is None:
        archive = _archives[directory] = Archive(directory)
    return archive


def job_store(job: Job) -> SyncEventStore:
    """The store for a job's work (one per process and topology, made on first use)."""
    place = configured()
    if place is None:
        return SyncEventStore(job.connection, acks=_acks(), archive=settings_archive())
    key = (os.getpid(), place)
    store = _stores.get(key)
    if store is None:
        clients = connect_sync(place, WORKER_LIMITS, queue=job.connection)
        store = SyncEventStore(clients.store, clients.index, _acks(), settings_archive())
        _stores[key] = store
    return store


def async_store_clients(sync: redis.Redis) -> tuple[AsyncStoreClient, aioredis.Redis | None] | None:
    """An async job's own store and index clients (closed by the job), or ``None`` when the job's
    connection is the store."""
    place = configured()
    if place is None:
        return None
    if place.cluster:
        return async_cluster_client(place.store_url, WORKER_LIMITS), async_client(
            place.queue_url, WORKER_LIMITS
        )
    return async_client(place.store_url, WORKER_LIMITS), None
