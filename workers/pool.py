"""The worker process: the projection consumer (``workers.handover``: a thread blocked on the
hand-over stream, projecting what the appends hand over), a pool of RQ ``SimpleWorker``s
(``PipelinedWorker``) on the projection (the sweeper's repairs), lifecycle, bots and review queues,
the lag sweeper, the timer loop and the bots' pacing loop (``workers.lifecycle``).

Longer than 500 lines because it is one process's life: the queue layout, the pool of workers,
one worker run and started again after an outage, the loops beside them and the signals that stop
them all share the same stop events and restart rules.

    python -m workers.pool --redis-url URL [--queue-url URL] [--redis-cluster auto|yes|no]
                           [--workers 2] [--sweep-seconds 5] [--bots auto|all|none|only]

Which queues each worker takes (``--bots``, ``layout``): a strong bot's move holds its worker for up
to its CPU cap (``bots.search``) and a review for seconds, and a job that a worker would take next
waits for them. ``auto`` (the default): with two workers or more, the first takes no bot work
(projections and timers only), the others take projections, timers and bot moves, and one more
worker takes the reviews alone at the lowest CPU priority (anyone may ask for a finished game's
review: a queue of them never holds up a bot's move); a single worker takes every queue. ``all``:
every worker takes every queue; ``none``: no worker takes bot moves or reviews (run another process
with ``only`` beside it); ``only``: bot moves, plus the review lane. A worker takes its queues in
the order projections, lifecycle, bots, review. The lifecycle queue held bot moves before
they had a queue of their own: a worker that takes it still runs such a job (the same function).

``tablestream worker`` hands over to this (it replaces its own process with it), so the CLI never
imports the workers.

It survives Redis outages: RQ retries its dequeue itself, but a connection error anywhere else
(heartbeat, maintenance, the end of a job) makes a worker quit. With one worker (``serve``'s) the
worker runs in this process and is started again, after Redis answers PING, with backoff; with more,
RQ's ``WorkerPool`` respawns a dead worker process within a second. The projection consumer is one
thread of this process whatever the layout (one per pool: ``workers.handover`` says why); it logs a
lost connection, waits for Redis with backoff and projects the dirty games again before it blocks on
the stream anew. The sweeper is a thread that
logs a failed pass and tries again, re-pokes any game whose job was lost and has the timer of a
game armed when the process that appended its last batch died before arming it.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

import redis
import structlog
from rq import Queue
from rq.serializers import JSONSerializer
from rq.worker_pool import ForkProcess, WorkerPool, run_worker

from bots import bot_for
from domain.games import game_names
from projections.registry import narration_for, views_for
from services.operating.config import Settings, settings_or_exit
from services.store.connection import (
    CLUSTER_MODES,
    UNAVAILABLE,
    ClusterMode,
    connect_sync,
    redacted,
    topology,
)
from services.store.embedded import die_with_parent
from services.store.event_store import SyncEventStore
from services.store.queue import (
    BOT_QUEUE,
    LIFECYCLE_QUEUE,
    QUEUE_NAME,
    QUEUES,
    REVIEW_QUEUE,
    bot_queue,
    lifecycle_queue,
    projection_queue,
)
from services.store.rq_workers import STOP_SIGNALS, PipelinedWorker
from services.table.tracing import configure_tracing
from services.telemetry import metrics
from services.telemetry.structured_logging import configure_logging
from workers.handover import HandoverConsumer
from workers.lifecycle import PaceLoop, TimerLoop
from workers.quickplay import QuickplayLoop
from workers.stores import WORKER_LIMITS, configure, settings_archive
from workers.sweeper import Sweeper
from workers.transparency import TransparencyLoop

log = structlog.get_logger("tablestream.worker")

BOT_LAYOUTS = ("auto", "all", "none", "only")
EVERY_QUEUE = QUEUES  # projections, lifecycle, bots, review: in this order of priority
NO_BOTS = (QUEUE_NAME, LIFECYCLE_QUEUE)  # projections and timers: never behind a bot's search
WITH_BOTS = (QUEUE_NAME, LIFECYCLE_QUEUE, BOT_QUEUE)  # a bot move never waits behind a review
BOTS_ONLY = (BOT_QUEUE,)
REVIEWS_ONLY = (REVIEW_QUEUE,)  # a lane of its own: anyone may ask for reviews, seconds of search each
REVIEW_NICENESS = 19  # the lowest CPU priority: a review uses only what nothing else wants

BOT_NICENESS = Settings.bot_niceness  # added to the niceness of a bot worker beside a faster lane

STOP_POLL_SECONDS = 0.1  # how often a stopping pool looks at its workers between their ends
CONSUMER_STOP_SECONDS = 2.0  # how long a stopping pool waits for the consumer's batch to end
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


def layout(workers: int, bots: str = "auto") -> list[tuple[str, ...]]:
    """The queues of each of the pool's ``workers`` (at least one) for a ``--bots`` choice."""
    count = max(1, workers)
    if bots not in BOT_LAYOUTS:
        raise ValueError(f"--bots must be one of {', '.join(BOT_LAYOUTS)}, not {bots!r}")
    if bots == "none":
        return [NO_BOTS] * count
    if bots == "only":
        return [BOTS_ONLY] * count + [REVIEWS_ONLY]
    if bots == "all" or count == 1:
        return [EVERY_QUEUE] * count
    return [NO_BOTS] + [WITH_BOTS] * (count - 1) + [REVIEWS_ONLY]


def niceness(queues: Sequence[str], pool: Sequence[Sequence[str]], lower: int = BOT_NICENESS) -> int:
    """How much lower the CPU priority of a worker taking ``queues`` in a ``pool`` layout is.

    A pool's forked worker that takes bot moves while another lane keeps projections without them
    (``auto`` with two workers or more, or ``--bots only`` with two or more: the projections are in
    another process) runs ``lower`` lower (``TABLESTREAM_BOT_NICENESS``, 10), so its searches never
    take a core from the API or the projection worker when they need it, and use whatever is left.
    A lone worker runs in the pool's own process, beside its timer loop and sweeper, and keeps its
    priority. The review lane runs at the lowest priority there is (``REVIEW_NICENESS``), whatever
    ``lower`` is."""
    if tuple(queues) == REVIEWS_ONLY:
        return REVIEW_NICENESS
    if BOT_QUEUE not in queues:
        return 0
    elsewhere = QUEUE_NAME not in queues or any(BOT_QUEUE not in other for other in pool)
    return lower if elsewhere else 0


class LayoutPool(WorkerPool):
    """RQ's ``WorkerPool`` (a forked process per worker, a dead one started again within a second)
    whose workers take different queues: worker ``i`` takes ``queues[i]``, and the worker started
    in place of a dead one takes the queues of the one it replaces."""

    def __init__(
        self,
        queues: Sequence[Sequence[str]],
        connection: redis.Redis,
        bot_niceness: int = BOT_NICENESS,
        stop_asked: threading.Event | None = None,
        **kwargs: Any,
    ) -> None:
        self.bot_niceness = bot_niceness
        every = [name for name in EVERY_QUEUE if any(name in names for names in queues)]
        super().__init__(every, connection=connection, num_workers=len(queues), **kwargs)
        self.layout = [list(names) for names in queues]
        self.slots: dict[str, int] = {}  # a live worker's name -> its index in ``layout``
        self.stop_asked = stop_asked or threading.Event()  # a stop noted before RQ's handlers were in
        self.signalled: set[int] = set()  # the workers sent their stop (each once: a second is a kill)

    def start(self, burst: bool = False, logging_level: str = "INFO") -> None:
        """RQ's loop (workers checked, a dead one started again; on SIGTERM or SIGINT each worker is
        sent SIGINT and the pool ends once they all have), but it wakes as soon as a worker ends
        instead of after a whole second's sleep, so that a stop ends the pool when its last worker
        ends (RQ's sleeps added one to two seconds to every ``serve`` stop).

        A stop asked while the workers were being forked (``stop_asked``: RQ's handlers are not in
        yet) is carried out once they are; and a stop reaches every worker, one forked as it came
        too (RQ sends it to the workers it knows of at that moment only)."""
        self._burst = burst
        self.status = self.Status.STARTED
        self.start_workers(burst=burst, logging_level=logging_level)
        self._install_signal_handlers()  # type: ignore[no-untyped-call]
        if self.stop_asked.is_set():
            self.request_stop()  # type: ignore[no-untyped-call]
        while True:
            if self.status == self.Status.STOPPED:
                self.stop_workers()  # those not sent it yet
                if self.all_workers_have_stopped():
                    break
            else:
                self.check_workers(respawn=not burst)
                if burst and self.number_of_active_workers == 0:
                    break
            sentinels = [data.process.sentinel for data in self.worker_dict.values()]
            wait(sentinels, timeout=STOP_POLL_SECONDS if self.status == self.Status.STOPPED else 1)

    def start_worker(self, *args: Any, **kwargs: Any) -> None:
        """RQ's, the worker forked with the stop signals blocked: it takes one only once its own
        handler is in (``PromptWorker.bootstrap`` unblocks them), however early it comes. Before,
        the pool's handler, inherited, ran in the worker (and RQ's pool handler, in a worker forked
        in place of a dead one, signalled the worker's siblings and went on)."""
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            super().start_worker(*args, **kwargs)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def stop_workers(self) -> None:
        """SIGINT to each worker not sent it yet: a second one would be RQ's cold shutdown (a job
        cut short)."""
        for data in list(self.worker_dict.values()):
            if data.pid not in self.signalled:
                self.signalled.add(data.pid)
                self.stop_worker(data)

    def get_worker_process(
        self, name: str, burst: bool, _sleep: float = 0, logging_level: str = "INFO"
    ) -> BaseProcess:
        """RQ's, with the queues of the first slot no live worker holds."""
        self.slots = {other: slot for other, slot in self.slots.items() if other in self.worker_dict}
        held = set(self.slots.values())
        slot = next(i for i in range(len(self.layout)) if i not in held)
        self.slots[name] = slot
        return ForkProcess(
            target=_pool_worker,
            args=(
                os.getpid(),
                niceness(self.layout[slot], self.layout, self.bot_niceness),
                name,
                self.layout[slot],
                self._connection_class,
                self._pool_class,
                self._pool_kwargs,
            ),
            kwargs={
                "_sleep": _sleep,
                "burst": burst,
                "logging_level": logging_level,
                "worker_class": self.worker_class,
                "job_class": self.job_class,
                "queue_class": self.queue_class,
                "serializer": self.serializer,
                "exception_handlers": self.exception_handlers,
            },
            name=f"Worker {name} (WorkerPool {self.name}, queues {','.join(self.layout[slot])})",
        )


ORPHAN_GRACE_SECONDS = 30.0
"""How long a worker whose pool died may go on finishing its job before it ends all the same."""


def end_when_orphaned(
    parent: int, grace: float = ORPHAN_GRACE_SECONDS, poll: float = 1.0
) -> threading.Thread:
    """Watch, from a daemon thread, for this process's parent (``parent``) to die; then give the
    process ``grace`` seconds to end by itself and end it (exit status 1).

    A pool's worker is sent SIGTERM when its pool dies (``die_with_parent``), and RQ then ends it
    after its job. But a ``serve`` killed while its Redis restarted
    (tests/services/hardening/test_faults.py) left one behind that the stop had not ended: it was
    found in RQ's dequeue loop half an hour later, sleeping between retries of a Redis that was
    gone, as it would have for the rest of the machine's life."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll)
        time.sleep(grace)
        os._exit(1)

    watcher = threading.Thread(target=watch, name="end-when-orphaned", daemon=True)
    watcher.start()
    return watcher


def _pool_worker(parent: int, nice: int, *args: Any, **kwargs: Any) -> None:
    """A pool's forked worker: RQ's ``run_worker`` at ``nice`` lower a CPU priority, ended (SIGTERM:
    after its job) when the pool's process dies, so that a killed ``serve`` leaves no worker behind;
    ended all the same a grace period later if it has not ended by then (``end_when_orphaned``).
    It is born with the stop signals blocked (``LayoutPool.start_worker``): a stop, or its pool's
    death, reaches it once its worker's handler is in, and ends it at its loop's first turn."""
    die_with_parent()
    if os.getppid() != parent:  # the pool died before the line above
        return
    end_when_orphaned(parent)
    if nice:
        os.nice(nice)
    run_worker(*args, **kwargs)


def run_simple_worker(
    connection: redis.Redis, queues: Sequence[str] = EVERY_QUEUE, stop_asked: threading.Event | None = None
) -> None:
    """One SimpleWorker on ``queues`` in this process, started again whenever it quits on a Redis
    failure; returns when it was asked to stop (SIGTERM or Ctrl-C), before its worker existed too
    (``stop_asked``, noted by the process's own handler: ``run_pool``)."""
    stop_asked = stop_asked or threading.Event()
    while True:
        # between two workers the signals are this process's again: a stop is noted, never lost
        # on the handler of a worker that has ended
        signal.signal(signal.SIGTERM, _noting(stop_asked))
        signal.signal(signal.SIGINT, _noting(stop_asked))
        if stop_asked.is_set():
            return
        worker: PipelinedWorker | None = None
        try:  # a new worker registers itself in Redis: that may fail too, and is retried the same way
            worker = PipelinedWorker(
                [Queue(name, connection=connection, serializer=JSONSerializer) for name in queues],
                connection=connection,
                serializer=JSONSerializer,
            )
            worker.stop_asked = stop_asked
            worker.work(logging_level="WARNING")
        except UNAVAILABLE as exc:
            log.warning("worker_lost_redis", error=f"{type(exc).__name__}: {exc}")
        if worker is not None and (
            getattr(worker, "_shutdown_requested_date", None) is not None or worker._stop_requested
        ):
            return
        log.warning("worker_restarting")
        wait_for_redis(connection, stop_asked)


def _noting(stop_asked: threading.Event) -> Any:
    """A SIGTERM and SIGINT handler that notes the stop for the pool's loops to see: it never raises.
    An exception raised from a handler comes out wherever the main thread is, and there it may be
    lost: one that came during a fork, in the hook that releases logging's lock after it, was
    printed and dropped, and the pool, told to stop, ran on for ever (CI's stopped CLI worker)."""

    def note(signum: int, frame: FrameType | None) -> None:
        stop_asked.set()

    return note


def run_pool(
    redis_url: str,
    workers: int,
    sweep_seconds: float,
    queue_url: str | None = None,
    cluster: ClusterMode = "auto",
    metrics_port: int | None = None,
    bots: str = "auto",
) -> int:
    # a stop asked before RQ takes the signals over (it does as its worker or pool starts) ends the
    # pool as cleanly as one asked later: the consumer projects from its first second, so a caller
    # that saw a projection may well stop the pool before RQ is up
    stop_asked = threading.Event()
    signal.signal(signal.SIGTERM, _noting(stop_asked))
    signal.signal(signal.SIGINT, _noting(stop_asked))
    _run_pool(redis_url, workers, sweep_seconds, queue_url, cluster, metrics_port, bots, stop_asked)
    return 0


def import_every_game() -> None:
    """Import each registered game's views, narration and bot now, in the pool's process before it
    starts a thread or forks a worker. They are imported on first use (``projections.registry``,
    ``bots``), and a fork copies a module's import lock as it is: forked while the consumer thread
    was importing a game's views (the first hand-over of a new table, as the pool started), a worker
    inherited that lock held by a thread it does not have, and each of its bot moves and timers
    waited on it until RQ killed the job (30 s), so no table moved again."""
    for game in game_names():
        views_for(game)
        narration_for(game)
        bot_for(game)


def _run_pool(
    redis_url: str,
    workers: int,
    sweep_seconds: float,
    queue_url: str | None,
    cluster: ClusterMode,
    metrics_port: int | None,
    bots: str,
    stop_asked: threading.Event,
) -> None:
    queues = layout(workers, bots)
    import_every_game()  # before any thread or fork: see its docstring
    # Every thread this process starts (the consumer, the loops, the metrics server) is started with
    # the stop signals blocked, so that the kernel gives a stop to the main thread: given to another
    # thread, it only flagged Python's handler for the main thread, which went on waiting in its
    # worker's dequeue (BLPOP) until it timed out. ``_run_loops`` lets them in once they all run.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    configure_logging()
    # before any metric: a worker serving its own metrics owns its directory (``services.telemetry.metrics``)
    metrics.prepare_directory(owner=metrics_port is not None, role="worker")
    metrics.metrics()
    if metrics_port is not None:
        metrics.serve_worker_metrics(metrics_port)
    configure_tracing()  # off unless OTEL_* asks for it; a pool's processes: configure_once in the job
    place = topology(redis_url, queue_url, cluster)
    configure(place)  # the jobs of this process and of the pool's processes find the store
    connection = redis.Redis.from_url(place.queue_url, health_check_interval=10)
    clients = connect_sync(place, WORKER_LIMITS, queue=connection)
    settings = settings_or_exit("tablestream worker")
    acks = settings.acks
    queue = projection_queue(connection)
    archive = settings_archive(settings)
    consumer = HandoverConsumer(SyncEventStore(clients.store, clients.index, acks, archive))
    started: list[Any] = []
    try:
        consumer.start()  # the projections: blocks on the hand-over stream (no job per burst of commands)
        started.append(consumer)
        _run_loops(
            place, clients, connection, queue, queues, settings, archive, sweep_seconds, started, stop_asked
        )
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        for loop in reversed(started):  # the consumer last: within its block's timeout, or its batch done
            if loop is consumer:
                consumer.stop(timeout=CONSUMER_STOP_SECONDS)
            else:
                loop.stop()
        gc.freeze()  # ending: the interpreter's last collections skip the heap (``services.cli.serve``)


def _run_loops(
    place: Any,
    clients: Any,
    connection: redis.Redis,
    queue: Queue,
    queues: list[tuple[str, ...]],
    settings: Settings,
    archive: Any,
    sweep_seconds: float,
    started: list[Any],
    stop_asked: threading.Event,
) -> None:
    """The pool's loops (each noted in ``started`` as it starts), then its RQ worker or pool, until it
    is asked to stop (``stop_asked``: a stop noted before RQ's handlers were in)."""
    acks = settings.acks
    sweeper = Sweeper(
        SyncEventStore(clients.store, clients.index, acks, archive),
        queue,
        lifecycle_queue(connection),
        sweep_seconds,
        retention=settings.retention,
        retention_seconds=settings.retention_interval_seconds,
        archive=archive,
        archive_policy=settings.archive,
        archive_seconds=settings.archive_interval_seconds,
    )
    sweeper.start()
    started.append(sweeper)
    timers = TimerLoop(SyncEventStore(clients.store, clients.index, acks), lifecycle_queue(connection))
    timers.start()
    started.append(timers)
    paced = PaceLoop(SyncEventStore(clients.store, clients.index, acks), bot_queue(connection))
    paced.start()
    started.append(paced)
    transparency = TransparencyLoop(
        SyncEventStore(clients.store, clients.index, acks, archive),
        settings.key_name,
        settings.log_append_seconds,
        settings.log_checkpoint_seconds,
        kept_in=settings.log_published_directory,
    )
    transparency.start()  # the public log of game heads: appends and signs checkpoints
    started.append(transparency)
    matcher = QuickplayLoop(connection)  # quick play's matcher (its lease: one pass at a time)
    matcher.start()
    started.append(matcher)
    log.info(
        "worker_started",
        store=redacted(place.store_url),
        queue=redacted(place.queue_url),
        cluster=place.cluster,
        queues=[",".join(names) for names in queues],
    )
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)  # a stop sent meanwhile comes now
    if stop_asked.is_set():
        return
    if len(queues) == 1:
        run_simple_worker(connection, queues[0], stop_asked)
    else:
        pool = LayoutPool(
            queues,
            connection=connection,
            bot_niceness=settings.bot_niceness,
            stop_asked=stop_asked,
            worker_class=PipelinedWorker,
            serializer=JSONSerializer,
        )
        pool.start(logging_level="WARNING")


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
    parser.add_argument(
        "--bots",
        choices=BOT_LAYOUTS,
        default="auto",
        help="which queues each worker takes: auto (with 2+ workers, one takes no bot moves nor reviews, "
        "and one more takes the reviews alone), "
        "all, none (projections and timers only), only (bot moves, and a worker for reviews)",
    )
    args = parser.parse_args(argv)
    return run_pool(
        args.redis_url,
        args.workers,
        args.sweep_seconds,
        args.queue_url,
        args.redis_cluster,
        args.metrics_port,
        args.bots,
    )


if __name__ == "__main__":
    sys.exit(main())
