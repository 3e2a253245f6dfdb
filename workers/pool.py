"""The worker process: a pool of RQ ``SimpleWorker``s (``PipelinedWorker``) on the projection and
lifecycle queues, the lag sweeper, the timer loop and the bots' pacing loop (``workers.lifecycle``).

    python -m workers.pool --redis-url URL [--queue-url URL] [--redis-cluster auto|yes|no]
                           [--workers 2] [--sweep-seconds 5]

``tablestream worker`` hands over to this (it replaces its own process with it), so the CLI never
imports the workers.

It survives Redis outages: RQ retries its dequeue itself, but a connection error anywhere else
(heartbeat, maintenance, the end of a job) makes a worker quit. With one worker (``serve``'s) the
worker runs in this process and is started again, after Redis answers PING, with backoff; with more,
RQ's ``WorkerPool`` respawns a dead worker process within a second. The sweeper is a thread that
logs a failed pass and tries again, re-pokes any game whose job was lost and has the timer of a
game armed when the process that appended its last batch died before arming it.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence

import redis
import structlog
from rq.serializers import JSONSerializer
from rq.worker_pool import WorkerPool

from services import metrics
from services.config import Settings
from services.store.connection import (
    CLUSTER_MODES,
    UNAVAILABLE,
    ClusterMode,
    connect_sync,
    redacted,
    topology,
)
from services.store.event_store import SyncEventStore
from services.store.queue import (
    LIFECYCLE_QUEUE,
    QUEUE_NAME,
    REVIEW_QUEUE,
    PipelinedWorker,
    lifecycle_queue,
    projection_queue,
    review_queue,
)
from services.structured_logging import configure_logging
from services.tracing import configure_tracing
from workers.lifecycle import PaceLoop, TimerLoop
from workers.quickplay import QuickplayLoop
from workers.stores import WORKER_LIMITS, configure
from workers.sweeper import Sweeper
from workers.transparency import TransparencyLoop

log = structlog.get_logger("tablestream.worker")

BACKOFF_MIN = 0.1
BACKOFF_MAX = 5.0


def wait_for_redis(connection: redis.Redis, stopped: threading.Event) -> bool:
    """Until Redis answers PING, with exponential backoff; ``False`` if asked to stop meanwhile."""
    delay = BACKOFF_MIN
    while not stopped.is_set():
        try:
            connection.ping()
            return True
        except UNAVAILABLE as exc:
            log.warning("redis_unreachable", error=f"{type(exc).__name__}: {exc}", retry_in=delay)
        stopped.wait(delay)
        delay = min(BACKOFF_MAX, delay * 2)
    return False


def run_simple_worker(connection: redis.Redis) -> None:
    """One SimpleWorker in this process, started again whenever it quits on a Redis failure; returns
    when it was asked to stop (SIGTERM or Ctrl-C)."""
    never = threading.Event()
    while True:
        worker: PipelinedWorker | None = None
        try:  # a new worker registers itself in Redis: that may fail too, and is retried the same way
            worker = PipelinedWorker(
                [projection_queue(connection), lifecycle_queue(connection), review_queue(connection)],
                connection=connection,
                serializer=JSONSerializer,
            )
            worker.work(logging_level="WARNING")
        except UNAVAILABLE as exc:
            log.warning("worker_lost_redis", error=f"{type(exc).__name__}: {exc}")
        if worker is not None and (
            getattr(worker, "_shutdown_requested_date", None) is not None or worker._stop_requested
        ):
            return
        log.warning("worker_restarting")
        wait_for_redis(connection, never)


def run_pool(
    redis_url: str,
    workers: int,
    sweep_seconds: float,
    queue_url: str | None = None,
    cluster: ClusterMode = "auto",
    metrics_port: int | None = None,
) -> int:
    configure_logging()
    # before any metric: a worker serving its own metrics owns its directory (``services.metrics``)
    metrics.prepare_directory(owner=metrics_port is not None, role="worker")
    metrics.metrics()
    if metrics_port is not None:
        metrics.serve_worker_metrics(metrics_port)
    configure_tracing()  # off unless OTEL_* asks for it; a pool's processes: configure_once in the job
    place = topology(redis_url, queue_url, cluster)
    configure(place)  # the jobs of this process and of the pool's processes find the store
    connection = redis.Redis.from_url(place.queue_url, health_check_interval=10)
    clients = connect_sync(place, WORKER_LIMITS, queue=connection)
    settings = Settings.from_env()
    acks = settings.acks
    queue = projection_queue(connection)
    sweeper = Sweeper(
        SyncEventStore(clients.store, clients.index, acks),
        queue,
        lifecycle_queue(connection),
        sweep_seconds,
        retention=settings.retention,
        retention_seconds=settings.retention_interval_seconds,
    )
    sweeper.start()
    timers = TimerLoop(SyncEventStore(clients.store, clients.index, acks), lifecycle_queue(connection))
    timers.start()
    paced = PaceLoop(SyncEventStore(clients.store, clients.index, acks), lifecycle_queue(connection))
    paced.start()
    transparency = TransparencyLoop(
        SyncEventStore(clients.store, clients.index, acks),
        settings.signing_key_name,
        settings.log_append_seconds,
        settings.log_checkpoint_seconds,
    )
    transparency.start()  # the public log of game heads: appends and signs checkpoints
    matcher = QuickplayLoop(connection)  # quick play's matcher (its lease: one pass at a time)
    matcher.start()
    log.info(
        "worker_started",
        store=redacted(place.store_url),
        queue=redacted(place.queue_url),
        cluster=place.cluster,
    )
    try:
        if workers <= 1:
            run_simple_worker(connection)
        else:
            pool = WorkerPool(
                [QUEUE_NAME, LIFECYCLE_QUEUE, REVIEW_QUEUE],  # in this order: reviews last
                connection=connection,
                num_workers=workers,
                worker_class=PipelinedWorker,
                serializer=JSONSerializer,
            )
            pool.start(logging_level="WARNING")
    finally:
        matcher.stop()
        transparency.stop()
        paced.stop()
        timers.stop()
        sweeper.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.pool", description=__doc__)
    parser.add_argument("--redis-url", required=True, help="the event store (standalone or a cluster node)")
    parser.add_argument("--queue-url", default=None, help="RQ's standalone Redis; default: the store's")
    parser.add_argument("--redis-cluster", choices=CLUSTER_MODES, default="auto")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep-seconds", type=float, default=5.0)
    parser.add_argument(
        "--metrics-port", type=int, default=None, help="serve this pool's Prometheus metrics on this port"
    )
    args = parser.parse_args(argv)
    return run_pool(
        args.redis_url,
        args.workers,
        args.sweep_seconds,
        args.queue_url,
        args.redis_cluster,
        args.metrics_port,
    )


if __name__ == "__main__":
    sys.exit(main())
