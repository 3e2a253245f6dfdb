"""The RQ workers that take this service's jobs (``services.store.queue``): prompt to stop, one round
trip a heartbeat, leases for the lifecycle jobs, every job counted; and the burst runs the tools and
tests use.

The queues, job ids and leases they read are ``services.store.queue``'s: this module only runs them.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import redis
from rq import Queue, SimpleWorker, Worker
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.utils import now

from services.store.keys import HANDOVER
from services.store.queue import (
    HANDOVER_JOB,
    JOBS,
    LEASED_JOBS,
    QUEUE_NAME,
    enqueue_handovers,
    projection_queue,
)
from services.telemetry import metrics

WORKER_TTL = 45
"""A worker's registration lives this long past its last heartbeat, plus RQ's 60 s: RQ's default
(420 s) kept a frozen or killed worker counted as alive for eight minutes. An idle worker beats
every ``WORKER_TTL - 15`` seconds (its blocking dequeue's timeout), so a live one never lapses, and
a frozen one stops counting within ``WORKER_TTL + 60`` seconds (``queue_figures``;
docs/alerts.md, ``TablestreamNoLiveWorker``)."""
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})  # a worker's (and a pool's) stop
LISTENER_JOIN_SECONDS = 1.0
"""How long a stopping worker waits for its pub/sub listener to end before it goes on: the listener
wakes on UNSUBSCRIBE's reply at once on a quiet machine, and whenever it ends it closes the pub/sub
itself (``PromptWorker.unsubscribe``)."""


class PromptWorker(SimpleWorker):
    """RQ's ``SimpleWorker`` that stops promptly and quietly.

    It stops listening to its pub/sub channel without a wait. RQ sends UNSUBSCRIBE and then stops
    the listening thread, which redis-py (8.2) joins with no bound: when the thread read the
    UNSUBSCRIBE reply before the stop, it is waiting up to a minute for a new subscription, and the
    worker's shutdown (or a burst's end) waits with it. Here the thread is told to stop first, so
    the reply it wakes on is its last.

    And a stop asked while it starts is kept: RQ installs its SIGINT and SIGTERM handlers only after
    the worker registered itself (and started its scheduler), so a pool stopped in that window got
    a KeyboardInterrupt traceback from the worker, which stayed registered. Here the request is
    noted from the start of the bootstrap, and the work loop ends at its first turn, deregistered.

    And it starts no scheduler process: no job here is scheduled for later (a projection's retry is
    queued again at once), and RQ's pool asks every worker for one. The scheduler is forked with
    the worker's signal handlers and installs its own only once it runs: a stop sent to it before
    that was swallowed, and the worker's stop waited on it for ever (a pool stopped as it started
    never ended).
    """

    def _start_scheduler(self, *args: Any, **kwargs: Any) -> None:
        self.scheduler = None

    stop_asked: threading.Event | None = None
    """A stop its process noted before this worker existed (``workers.pool.run_simple_worker``)."""

    def bootstrap(self, *args: Any, **kwargs: Any) -> None:
        def stop_once_started(signum: int, frame: FrameType | None) -> None:
            self._stop_requested = True
            self._shutdown_requested_date = now()  # RQ's double-signal guard reads it

        signal.signal(signal.SIGINT, stop_once_started)
        signal.signal(signal.SIGTERM, stop_once_started)
        # RQ's bootstrap starts the pub/sub listener thread: it is started with the stop signals
        # blocked, so that the kernel gives them to this, the main thread. Given to the listener, a
        # stop only flagged Python's handler for the main thread, which went on waiting in its
        # dequeue (BLPOP) until the dequeue timed out: up to 20 s, each stop of a pool.
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            super().bootstrap(*args, **kwargs)
        finally:
            # A pool forks its workers with the stop signals blocked (``workers.pool.LayoutPool``):
            # one sent meanwhile waited, and comes now, to the handler above.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        if self.stop_asked is not None and self.stop_asked.is_set():
            stop_once_started(signal.SIGTERM, None)

    def unsubscribe(self) -> None:
        if not self.pubsub_thread:
            return
        pubsub, listener = self.pubsub, self.pubsub_thread
        # The listener closes the pub/sub as it ends, perhaps while UNSUBSCRIBE's call is still on
        # the connection here (fakeredis's connection is not for two threads): until that call is
        # done its close does nothing.
        pubsub.close = lambda: None
        listener.stop(timeout=0)  # the flag only: the thread ends on its next wake
        pubsub.unsubscribe()  # its reply is that wake
        listener.join(timeout=LISTENER_JOIN_SECONDS)
        # Then the pub/sub is closed once, by whichever thread comes last: here if the listener has
        # ended, else by the listener itself as it ends. Closed under a listener still reading it (a
        # loaded machine's scheduler may not have run it yet), its read failed and RQ logged "could
        # not connect to Redis" from a worker that was only stopping.
        lock, closed = threading.Lock(), []

        def close_once() -> None:
            with lock:
                if not closed:
                    closed.append(True)
                    type(pubsub).close(pubsub)

        pubsub.close = close_once
        if not listener.is_alive():
            close_once()


def run_burst(
    connection: redis.Redis,
    queues: Sequence[Queue],
    logging_level: str = "WARNING",
    max_jobs: int | None = None,
) -> None:
    """Run the jobs of ``queues``, and the jobs they queue, in this process until every queue is
    empty or ``max_jobs`` ran (a burst ``PromptWorker``: for tests, the bench's profiles and the
    tools). With the projection queue among them, the hand-overs are projected too, as a worker's
    consumer would (``HANDOVER_JOB``), after the jobs and again while the jobs hand more over."""
    names = {queue.name for queue in queues}
    seen = None
    while True:
        PromptWorker(list(queues), connection=connection, serializer=JSONSerializer).work(
            burst=True, logging_level=logging_level, max_jobs=max_jobs
        )
        if max_jobs is not None or QUEUE_NAME not in names:
            return
        newest = _newest_handover(connection)
        if newest is None or newest == seen:  # none, or none since the last pass
            return
        seen = newest
        enqueue_handovers(projection_queue(connection))


def _newest_handover(connection: redis.Redis) -> bytes | None:
    """The id of the hand-over stream's newest entry (``None``: the stream is empty; a consumer drops
    it once it has read all of it)."""
    newest = connection.xrevrange(HANDOVER, count=1)
    if not newest:
        return None
    value = newest[0][0]
    return value if isinstance(value, bytes) else str(value).encode()


class PipelinedWorker(PromptWorker):
    """RQ's ``SimpleWorker`` (jobs run in the worker's own process) with each heartbeat in one round
    trip. Unless handed a pipeline, RQ sends a heartbeat's three writes (the worker's last heartbeat
    and the time to live of its hash and of its executions set) one by one: with AOF ``appendfsync
    always`` each waits for the disk, and a worker sends such a heartbeat before every job (between
    the dequeue and the job: on the path of every projection's lag) and two after it. Its
    registration lapses ``WORKER_TTL`` (plus RQ's minute) after its last heartbeat."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("worker_ttl", WORKER_TTL)
        super().__init__(*args, **kwargs)

    def perform_job(self, job: Job, queue: Queue, execution: Any) -> bool:
        """RQ's, then the job counted (``services.telemetry.metrics``): its queue, its kind, whether it
        succeeded, and the time from its queueing to its end (a projection's lag)."""
        ok = bool(super().perform_job(job, queue, execution))
        enqueued = job.enqueued_at
        lag = None
        if enqueued is not None and job.func_name != HANDOVER_JOB:  # it counts its games' own
            lag = (datetime.now(UTC) - enqueued.replace(tzinfo=enqueued.tzinfo or UTC)).total_seconds()
        kind = job.func_name.rsplit(".", 1)[-1] if job.func_name in JOBS else "other"
        metrics.job_done(queue.name, kind, ok, lag)
        return ok

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        """A lifecycle job's lease is its own time bound (``LEASE_SECONDS``): RQ's SimpleWorker
        holds every job for its timeout plus a minute, and with the execution registry's grace a
        killed worker's bot move waited five minutes for the sweeper."""
        if job.func_name in LEASED_JOBS and job.timeout:
            return int(job.timeout)
        return int(super().get_heartbeat_ttl(job, working_time))

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        if pipeline is not None:
            super().heartbeat(timeout, pipeline)
            return
        with self.connection.pipeline() as pipe:
            super().heartbeat(timeout, pipe)
            pipe.execute()


def run_queued_projections(connection: redis.Redis) -> None:
    """Project the hand-overs and run the queued projection jobs in this process until none is left
    (a burst ``SimpleWorker``; for the bench's profiles and for tests)."""
    enqueue_handovers(projection_queue(connection))
    run_burst(connection, [projection_queue(connection)], logging_level="ERROR")


def jobs_done(connection: redis.Redis) -> int:
    """RQ jobs the registered workers have finished so far (successful and failed, every queue), from
    the counters RQ keeps in each worker's hash."""
    return sum(w.successful_job_count + w.failed_job_count for w in Worker.all(connection=connection))
