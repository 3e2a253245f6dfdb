"""The worker process: a pool of RQ ``SimpleWorker``s on the projection and lifecycle queues, the
lag sweeper and the timer loop (``workers.lifecycle``).

    python -m workers.pool --redis-url URL [--workers 2] [--sweep-seconds 5]

``tablestream worker`` hands over to this (it replaces its own process with it), so the CLI never
imports the workers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import redis
from rq import SimpleWorker
from rq.serializers import JSONSerializer
from rq.worker_pool import WorkerPool

from services.store.event_store import SyncEventStore
from services.store.queue import LIFECYCLE_QUEUE, QUEUE_NAME, lifecycle_queue, projection_queue
from services.structured_logging import configure_logging
from workers.lifecycle import TimerLoop
from workers.sweeper import Sweeper


def run_pool(redis_url: str, workers: int, sweep_seconds: float) -> int:
    configure_logging()
    connection = redis.Redis.from_url(redis_url)
    queue = projection_queue(connection)
    sweeper = Sweeper(SyncEventStore(connection), queue, sweep_seconds)
    sweeper.start()
    timers = TimerLoop(SyncEventStore(connection), lifecycle_queue(connection))
    timers.start()
    try:
        if workers <= 1:
            SimpleWorker(
                [queue, lifecycle_queue(connection)], connection=connection, serializer=JSONSerializer
            ).work(logging_level="WARNING")
        else:
            pool = WorkerPool(
                [QUEUE_NAME, LIFECYCLE_QUEUE],
                connection=connection,
                num_workers=workers,
                worker_class=SimpleWorker,
                serializer=JSONSerializer,
            )
            pool.start(logging_level="WARNING")
    finally:
        timers.stop()
        sweeper.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workers.pool", description=__doc__)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep-seconds", type=float, default=5.0)
    args = parser.parse_args(argv)
    return run_pool(args.redis_url, args.workers, args.sweep_seconds)


if __name__ == "__main__":
    sys.exit(main())
