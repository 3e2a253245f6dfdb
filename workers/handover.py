"""The projection consumer: a thread of the worker process that blocks on the hand-over stream and
projects what it takes, in batches (issue 38: no RQ job and no polling per burst of commands).

The append script that sets a game's pending flag adds the game to the hand-over stream
(``services.store.indexes``), both in memory only (replication off: the append's own writes stay its
only durable ones, one ``fsync`` per command with AOF ``always``). The consumer waits on the stream
with ``XREAD BLOCK`` from the last entry it read: a read, so an idle consumer writes nothing and
sends one command per ``BLOCK_MS`` (the block's timeout is there only to notice a stop). Each batch
(up to ``BATCH`` entries, each game once) is projected by ``Projector.catch_up_all`` in two round
trips, claiming each game by clearing its pending flag in the first (``claim``: of consumers racing on
a game, only the one whose clear took the flag projects it); a consumer that read the whole stream
drops it in that same first round (``indexes.handovers_taken``), so the stream holds what is not yet
read.

Where it runs: one consumer per worker pool, a thread of the pool's own process (``workers.pool``),
whatever the pool's layout: with one worker (``serve``) beside the RQ worker, with several beside the
forked workers. One is enough for a pool (a batch of games costs two round trips, and a projection a
few hundred microseconds of CPU); several in one pool would each read every hand-over and race for
every claim. More pools (more machines) are more consumers, whose races the claims settle.

How it is watched: a consumer thread blocks on a connection of its own, named
``indexes.HANDOVER_CONSUMER`` (``CLIENT SETNAME`` as it connects). The API's ``/metrics`` reads the
``idle`` of such connections in ``CLIENT LIST`` (``tablestream_handover_consumer_idle_seconds``): a
live consumer sends its ``XREAD`` at least every ``BLOCK_MS``, a frozen or stuck one sends nothing and
its idle grows, and a stopped or killed one is not listed. So the watching writes nothing either.

What it survives: a Redis outage (connection errors are logged and retried with backoff, as the
pool's other loops do); a kill at any point: the games of a batch it claimed and did not project
keep their dirty marks (durable, written by the append), and the sweeper (``workers.sweeper``)
projects them after its grace, whatever their flags. A restart of Redis loses the flags and the
stream; each time the consumer starts or reconnects it projects the games in the dirty set first
(``recover``), and reads the stream from its start. The sweeper does the same for whatever is left.

``project_handovers`` is the same pass run once, without blocking, as an RQ job of the projection
queue (``services.store.queue.HANDOVER_JOB``): for tools and tests that project in process.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import TypeVar, cast

import redis
import structlog
from rq import get_current_job

from services.history.folding import StateCache
from services.store import indexes
from services.store.connection import UNAVAILABLE, named_client
from services.store.event_store import SyncEventStore
from services.store.queue import take_handovers
from services.table import tracing
from services.telemetry import metrics
from workers import projector
from workers.projector import Listed, Projector
from workers.stores import job_store

BATCH = 100  # hand-overs read per XREAD
BLOCK_MS = 500  # an idle consumer's XREAD BLOCK: how soon it notices a stop
RECOVERY_LIMIT = 10_000  # dirty games projected when it starts or reconnects (the sweeper does the rest)
BACKOFF = (0.1, 5.0)  # seconds between tries while Redis does not answer, doubling

log = structlog.get_logger("tablestream.handover")

T = TypeVar("T")


class Consumer:
    """Reads the hand-over stream after ``last_id`` and projects what it reads (``take``)."""

    def __init__(
        self,
        store: SyncEventStore,
        projector: Projector | None = None,
        batch: int = BATCH,
        reader: SyncEventStore | None = None,
    ) -> None:
        self.store = store
        self.reader = reader  # a store on a connection of its own for the XREAD (None: the store itself)
        if projector is None:  # a cache of its own: this process's RQ jobs use the module's (a thread apart)
            projector = Projector(store, StateCache(), listed=Listed())
        self.projector = projector
        self.batch = batch
        self.last_id = "0-0"

    def take(self, block_ms: int | None = None) -> int:
        """Read up to ``batch`` hand-overs (waiting ``block_ms`` for one; ``None``: not at all) and
        project the games this consumer claims; returns how many entries it read (0: none came)."""
        read = indexes.read_handovers(self.last_id, self.batch, block_ms)
        handed = (self.reader or self.store).run(read)
        if handed is None:
            return 0
        self.last_id = handed.last_id
        linked = take_handovers(cast(redis.Redis, self.store.index)) if tracing.ON else []
        with tracing.job_span("projection.batch", None, linked) as span:
            caught_up = handed.entries < self.batch  # it read the whole stream: drop it with the claims
            also = indexes.handovers_taken(handed.last_id) if caught_up else None
            failed = self.projector.catch_up_all(handed.games, claim=True, also=also)
            if span is not None:
                span.set_attribute("tablestream.batch.taken", len(handed.games))
                span.set_attribute("tablestream.batch.failed", len(failed))
                span.set_attribute("tablestream.batch.linked", len(linked))
        metrics.projection_lag(max(0.0, time.time() - handed.since_ms / 1000), len(handed.games))
        metrics.drained(len(handed.games))
        if failed:  # their dirty marks stay: the sweeper projects them again
            log.warning("projection_batch_failed", failed=len(failed), games=failed[:10])
        return handed.entries

    def take_all(self) -> int:
        """``take`` without blocking until the stream has nothing more; returns the entries read."""
        read = 0
        while taken := self.take():
            read += taken
        return read

    def recover(self, limit: int = RECOVERY_LIMIT) -> int:
        """Project the games marked dirty (whatever their flags: after a restart of Redis the flags
        and the stream are gone, the marks are not), ``batch`` at a time, and read the stream from its
        start again; returns how many games it projected."""
        self.last_id = "0-0"
        games = self.store.dirty_games(0, limit)
        for start in range(0, len(games), self.batch):
            self.projector.catch_up_all(games[start : start + self.batch])
        if games:
            log.info("handover_recovered", games=len(games))
        return len(games)


class HandoverConsumer(threading.Thread):
    """A ``Consumer`` running until ``stop()``: it recovers as it starts and after every outage of
    Redis, then blocks on the stream (``BLOCK_MS`` at a time) and projects what comes."""

    def __init__(self, store: SyncEventStore, block_ms: int = BLOCK_MS, batch: int = BATCH) -> None:
        super().__init__(name="tablestream-handover", daemon=True)
        # its reads on a named connection of its own: the API's scrape tells how long ago it read
        # (indexes.handover_consumer_idle), and a frozen consumer's idle grows while no read is written
        index = store.index  # a standalone server (beside a cluster, the queue's)
        self.reader: redis.Redis | None = None
        if isinstance(index, redis.Redis):
            self.reader = named_client(index, indexes.HANDOVER_CONSUMER)
        self.consumer = Consumer(
            store, batch=batch, reader=SyncEventStore(self.reader) if self.reader is not None else None
        )
        self.block_ms = block_ms
        self._stopped = threading.Event()

    def run(self) -> None:
        try:
            self._run()
        finally:  # a stopped consumer is no longer listed: the scrape says none reads
            if self.reader is not None:
                with contextlib.suppress(*UNAVAILABLE, OSError):
                    self.reader.connection_pool.disconnect()  # its own pool: close() would keep it

    def _run(self) -> None:
        recovered = False
        delay = BACKOFF[0]
        while not self._stopped.is_set():
            try:
                if not recovered:
                    self.consumer.recover()
                    recovered = True
                self.consumer.take(self.block_ms)
                delay = BACKOFF[0]
            except UNAVAILABLE as exc:
                log.warning("handover_lost_redis", error=f"{type(exc).__name__}: {exc}", retry_in=delay)
                recovered = False  # a restarted Redis lost the stream and the flags
                self._stopped.wait(delay)
                delay = min(BACKOFF[1], delay * 2)
            except Exception as exc:  # a bad batch must not end the consumer: its games stay dirty
                log.warning("handover_failed", error=f"{type(exc).__name__}: {exc}")
                self._stopped.wait(delay)
                delay = min(BACKOFF[1], delay * 2)

    def stop(self, timeout: float | None = None) -> None:
        """Ask it to stop (it does within ``block_ms``, or once its batch is projected); with
        ``timeout``, wait that long for it."""
        self._stopped.set()
        if timeout is not None:
            self.join(timeout)


def project_handovers() -> int:
    """RQ entry point (``services.store.queue.HANDOVER_JOB``): project every hand-over waiting, once,
    without blocking (a consumer's pass, for tools and tests), reading the stream from its start (what
    was taken before is no longer claimed). Returns how many entries it read."""
    job = get_current_job()
    assert job is not None, "project_handovers runs inside an RQ job"
    store = job_store(job)
    consumer = Consumer(store, Projector(store, projector._cache, listed=projector._listed))
    with structlog.contextvars.bound_contextvars(job_id=job.id):
        return consumer.take_all()
