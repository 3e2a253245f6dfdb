"""The projection jobs: bring games' read models up to their newest events.

Pokes are coalesced (``services.store.indexes``): the append that sets a game's pending flag hands
the game over, and at most one drain job (``project_poked``) is queued at a time; it projects the
handed-over games in batches while they keep coming (``Projector.drain``). The sweeper queues
``project_games`` with the lagging games it finds; ``project`` (one game) stays for jobs queued
before. Each projection of a game first clears its pending flag, then reads its head: an append
after the clear hands the game over again.

A job carries only game ids. Each projection folds from what it already holds (a per-process cache
of folded tables, else the stream from the start), materialises the views at the head once (their
public part, each seat's and the spectator's own part, the scoreboard: ``projections.views``), and
writes them with compare-and-set on the checkpoint; the views live in memory only
(``project_views.lua``), and an ended game's are dropped (its readers render them from its events).
A duplicate or late poke finds the checkpoint already at the head and changes nothing; two workers
racing on one game cannot move it backwards. Once the views are at the head, the game's mark in
the dirty set is cleared (kept while the stream has moved past the views, while the game's timer is
behind its head or a bot is to act, for the sweeper to repair if that lasts), and a table that no
longer waits for players stops counting against the cap on waiting tables.

A batch of games costs two round trips (``catch_up_all``): the start (pending flags cleared, then
every game's checkpoint, timer and new events read) and the write (``services.store.projection``:
each game's views, and, where the indexes live on the store's one server, the public log's note, the
lobby, the waiting tables, the timer and retention indexes and the dirty mark, in the same script).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime

import msgspec
import redis
import structlog
from rq import Queue, get_current_job
from rq.job import Job

from domain.table import is_private
from projections.views import lobby_entry, materialise
from services import metrics, tracing
from services.history.folding import Folded, StateCache
from services.lifecycle import lifecycle_behind
from services.store import archive, indexes
from services.store import operations as ops
from services.store.event_store import SyncEventStore
from services.store.operations import ProjectionStart
from services.store.projection import Projected, ProjectionWrite, project_views
from services.store.queue import take_handovers
from services.store.requests import Operation, clock_ms
from services.transparency import log as transparency
from workers.ratings import RatingsRecorder
from workers.stores import job_store

MAX_CAS_ROUNDS = 20
DRAIN_BATCH = 100  # games taken per SPOP
DRAIN_SECONDS = 2.0  # a drain job drains at most this long (well within DRAIN_TTL_MS), then ends
IDLE_SECONDS = 0.05  # and ends once nothing was handed over for this long
POLL_SECONDS = (0.002, 0.016)  # meanwhile it looks again after 2 ms, then twice as long each time
ENDED = frozenset({"finished", "expired", "closed"})  # a game whose views are not kept

log = structlog.get_logger("tablestream.projector")


class Listed:
    """The lobby entries this process last wrote, their ``version`` left out: an entry that says
    nothing new but its version (a move in a running game) is not written again, so a move costs
    the lobby no write (and no append-only file bytes). The lobby then shows the version of the
    entry's last change, which its readers only compare (``lobby_live.js``), and changes are
    announced as before. Bounded; a game it forgot (or another process wrote) is written."""

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._written: OrderedDict[str, bytes] = OrderedDict()

    def changed(self, game_id: str, entry: dict[str, object]) -> bytes | None:
        """The entry's encoding to write, or ``None`` when this process last wrote it the same."""
        if self._written.get(game_id) == _said(entry):
            self._written.move_to_end(game_id)
            return None
        return msgspec.json.encode(entry)

    def written(self, game_id: str, summary: bytes) -> None:
        """``summary`` (``changed``'s) is in the lobby now."""
        entry = msgspec.json.decode(summary)
        self._written[game_id] = _said(entry)
        self._written.move_to_end(game_id)
        while len(self._written) > self.capacity:
            self._written.popitem(last=False)


def _said(entry: dict[str, object]) -> bytes:
    return msgspec.json.encode({key: value for key, value in entry.items() if key != "version"})


_cache = StateCache()
_listed = Listed()


class Projector:
    def __init__(
        self,
        store: SyncEventStore,
        cache: StateCache | None = None,
        ratings: RatingsRecorder | None = None,
        listed: Listed | None = None,
    ) -> None:
        self.store = store
        self.cache = cache if cache is not None else StateCache()
        self.ratings = ratings if ratings is not None else RatingsRecorder(store)
        self._listed = listed if listed is not None else Listed()

    def catch_up(self, game_id: str) -> int:
        """Project ``game_id`` to its head; returns the checkpoint it leaves behind. A finished game
        is also recorded in its players' histories and ratings (once, however often it is poked).
        The game stays marked dirty while its lifecycle is pending at the head (its timer is behind,
        the appending process died before arming it, or a bot is to act): the sweeper then has it
        settled if that lasts (``workers.sweeper``). Clears the game's pending flag before it reads
        the head (``ops.begin_projection``). Two round trips: the start, then the views written
        with the indexes that follow them (``services.store.projection``). On a cluster, whose
        indexes live beside the queue, the indexes follow in round trips of their own
        (``indexes.after_projection``: two, up to two more when the lobby's order or announcement
        changes),
        after the public log's note (a head worth publishing: a table created, a round or the game
        over, queued for the log's appender, ``services.transparency.log``) in one before the views."""
        return self.store.run(self._catch_up(game_id))

    def catch_up_all(self, game_ids: list[str]) -> list[str]:
        """``catch_up`` each game, all of them in lockstep (``SyncEventStore.run_all``): the same
        two round trips for the whole batch as for one game. One that fails (logged) does not stop
        the others: its dirty mark stays, for the sweeper. Returns the games that failed."""
        failed = []
        outcomes = self.store.run_all([self._catch_up(game_id) for game_id in game_ids])
        for game_id, outcome in zip(game_ids, outcomes, strict=True):
            if isinstance(outcome, Exception):
                log.warning("projection_failed", game_id=game_id, exc_info=outcome)
                failed.append(game_id)
        return failed

    def _catch_up(self, game_id: str) -> Operation[int]:
        before = self.cache.get(game_id)
        start = yield from ops.begin_projection(game_id, self.cache)
        head = start.folded
        logged = None
        if head is not None and head.version > start.checkpoint and transparency.loggable(before, head):
            logged = head.version  # the public log of game heads: queued for its appender, never waited on
        here = self.store.scripts_write_indexes
        if logged is not None and not here:  # noted before the views are written, in a round trip of its own
            yield from transparency.note_loggable_op(game_id, logged)
        projected, write, written = yield from self._project(game_id, start, logged if here else None)
        checkpoint = projected.checkpoint
        folded = self.cache.get(game_id)
        at_head = folded is not None and folded.version == checkpoint
        pending = at_head and folded is not None and lifecycle_behind(start.timer, folded)
        if pending:  # routine (a bot or a timer is on its way): debug, and counted
            log.debug("lifecycle_pending", game_id=game_id, version=checkpoint)
            metrics.lifecycle_pending()
        summary = write.summary if written is not None else None
        if not projected.indexed:  # the indexes live apart (a cluster): in round trips of their own
            yield from indexes.after_projection(
                game_id,
                checkpoint,
                summary,
                started=written is not None and write.started,
                clean=not pending,
                deadline=write.deadline,
                status=write.status if written is not None else None,
            )
        if summary is not None:
            self._listed.written(game_id, summary)
        return checkpoint

    def drain(
        self, busy: Callable[[], bool] = lambda: False, since: float | None = None
    ) -> tuple[int, list[str]]:
        """Project the handed-over games, ``DRAIN_BATCH`` at a time, while games keep arriving: one
        RQ job serves a whole stream of hand-overs. It holds ``DRAIN_PENDING`` meanwhile (appends
        queue no job), looks again after ``POLL_SECONDS`` (backing off) while none waits, ends once none came
        for ``IDLE_SECONDS``, after ``DRAIN_SECONDS``, or when ``busy()`` says the worker's other
        queues have jobs waiting (a bot's move must not wait for projections). It ends by clearing
        ``DRAIN_PENDING`` and taking once more in the same round trip, then projects what that
        took: a game handed over after it queues the next job (``indexes.take_poked``). Returns how
        many were taken and the ones that failed.

        Each game's projection lag is counted (``metrics.projection_lag``) as the time from the
        earliest moment it can have been handed over (the take before the one that found it; for
        the first take, ``since``: the job's queueing, on the ``time.monotonic`` clock) to its views
        written: an upper bound of its lag, not the job's whole run."""
        taken: int = 0
        failed: list[str] = []
        started = idle_since = time.monotonic()
        earliest = started if since is None else min(since, started)
        pause = POLL_SECONDS[0]
        took_at = time.monotonic()
        games = self.store.take_poked(DRAIN_BATCH, claim="hold")
        while True:
            if games:
                taken += len(games)
                failed += self.catch_up_all(games)
                metrics.projection_lag(time.monotonic() - earliest, len(games))
                idle_since, pause = time.monotonic(), POLL_SECONDS[0]
            earliest = took_at
            now = time.monotonic()
            if now - started >= DRAIN_SECONDS or now - idle_since >= IDLE_SECONDS or busy():
                break
            if len(games) < DRAIN_BATCH:  # nothing more waited at the last take: wait a little
                time.sleep(pause)
                pause = min(pause * 2, POLL_SECONDS[1])
            took_at = time.monotonic()
            games = self.store.take_poked(DRAIN_BATCH)
        while True:  # again while full
            took_at = time.monotonic()
            games = self.store.take_poked(DRAIN_BATCH, claim="release")
            if not games:
                break
            taken += len(games)
            failed += self.catch_up_all(games)
            metrics.projection_lag(time.monotonic() - earliest, len(games))
            earliest = took_at
            if len(games) < DRAIN_BATCH:
                break
        return taken, failed

    def _project(
        self, game_id: str, start: ProjectionStart, logged: int | None
    ) -> Operation[tuple[Projected, ProjectionWrite, Folded | None]]:
        """The views written at the head, with the indexes that follow when they live on the store's
        server (``projection.project_views``): what the write did, what it was asked, and the table
        whose views it wrote (``None``: none, another projection was there first, or they were
        current). One round trip, unless another projection raced it (``mismatch``: folded again).
        A finished game's record (``RatingsRecorder.record``, rare) does its own round trips."""
        checkpoint, folded = start.checkpoint, start.folded
        for attempt in range(MAX_CAS_ROUNDS):
            if attempt:
                folded = yield from ops.load(game_id, self.cache)
            if folded is not None and folded.state.status == "finished":
                self.ratings.record(folded)
                self.store.run(archive.note_finished(game_id, clock_ms()))  # its time in the archive's index
            write = self._write(game_id, checkpoint, folded, start.timer, logged)
            span = (
                tracing.start_child(
                    "projection.write_views", **{tracing.GAME_ID: game_id, tracing.VERSION: write.folded}
                )
                if tracing.ON and write.new is not None
                else None
            )
            projected = yield from project_views(game_id, write)
            if span is not None:
                tracing.end(
                    span,
                    **{
                        "tablestream.views.outcome": projected.outcome,
                        "tablestream.views.previous": checkpoint,
                    },
                )
            if projected.outcome == "written":
                log.debug("projected", game_id=game_id, checkpoint=write.new, previous=checkpoint)
                return projected, write, folded
            if projected.outcome != "mismatch":
                return projected, write, None
            checkpoint = projected.checkpoint
        raise RuntimeError(f"projection of {game_id} kept losing its compare-and-set")

    def _write(
        self, game_id: str, checkpoint: int, folded: Folded | None, timer: dict[str, str], logged: int | None
    ) -> ProjectionWrite:
        """What to write for ``folded`` over views at ``checkpoint``: nothing when they are current;
        an ended game's views are not kept hot (dropped, rendered on demand by their readers). The
        game's armed timer (``timer``'s deadline) goes to the timer index either way."""
        armed = timer.get("deadline")
        deadline = int(armed) if armed is not None else None
        if folded is None or folded.version <= checkpoint:
            version = 0 if folded is None else folded.version
            behind = folded is not None and lifecycle_behind(timer, folded)
            return ProjectionWrite(
                checkpoint, None, {}, version, behind=behind, deadline=deadline, logged=logged
            )
        state = folded.state
        fields = {} if state.status in ENDED else materialise(state, folded.version)
        summary = None
        if not is_private(state):  # a private table is never listed in the lobby
            summary = self._listed.changed(game_id, lobby_entry(state, folded.version))
        return ProjectionWrite(
            checkpoint,
            folded.version,
            fields,
            folded.version,
            behind=lifecycle_behind(timer, folded),
            summary=summary,
            started=state.status != "waiting",
            status=state.status,  # the retention indexes (services.store.retention)
            deadline=deadline,
            logged=logged,
        )


def _job() -> Job:
    job = get_current_job()
    assert job is not None, "projection entry points run inside an RQ job"
    return job


def project(game_id: str) -> int:
    """RQ entry point (``services.store.queue.PROJECTION_JOB``; JSON serializer, ids only)."""
    job = _job()
    with structlog.contextvars.bound_contextvars(game_id=game_id, job_id=job.id):
        return Projector(job_store(job), _cache, listed=_listed).catch_up(game_id)


def project_games(game_ids: list[str]) -> int:
    """RQ entry point (``services.store.queue.BATCH_JOB``): project these games; fails (to be
    retried) if any of them failed, after trying all."""
    job = _job()
    with structlog.contextvars.bound_contextvars(job_id=job.id):
        failed = Projector(job_store(job), _cache, listed=_listed).catch_up_all(game_ids)
    if failed:
        raise RuntimeError(f"projection failed for {len(failed)} of {len(game_ids)} games: {failed[:10]}")
    return len(game_ids)


def project_poked() -> int:
    """RQ entry point (``services.store.queue.DRAIN_JOB``): project the handed-over games while they
    keep coming (``Projector.drain``), yielding the worker when its other queues have jobs waiting.
    The games that failed keep their dirty marks (the sweeper queues them again); the job then
    fails, so that the failure is kept with its traceback. Returns how many games it took."""
    job = _job()
    store = job_store(job)
    linked = take_handovers(job.connection) if tracing.configure_once() else []
    with (
        structlog.contextvars.bound_contextvars(job_id=job.id),
        tracing.job_span("projection.drain", job.meta, linked, **{"messaging.message.id": job.id}) as span,
    ):
        taken, failed = Projector(store, _cache, listed=_listed).drain(
            OtherQueues(job.connection, job.origin), since=_queued_at(job)
        )
        if span is not None:
            span.set_attribute("tablestream.drain.taken", taken)
            span.set_attribute("tablestream.drain.failed", len(failed))
            span.set_attribute("tablestream.drain.linked", len(linked))
    metrics.drained(taken)
    if failed:
        raise RuntimeError(f"projection failed for {len(failed)} of {taken} games: {failed[:10]}")
    return taken


def _queued_at(job: Job) -> float | None:
    """When ``job`` was queued, on the ``time.monotonic`` clock (``None``: RQ did not say)."""
    if job.enqueued_at is None:
        return None
    queued = job.enqueued_at.replace(tzinfo=job.enqueued_at.tzinfo or UTC)
    return time.monotonic() - max(0.0, (datetime.now(UTC) - queued).total_seconds())


class OtherQueues:
    """Whether jobs wait in any RQ queue but the drain job's own (one round trip: their lengths),
    the queues as RQ had them registered when the job started."""

    def __init__(self, connection: redis.Redis, own: str) -> None:
        self.connection = connection
        keys = sorted(key.decode() for key in connection.smembers(Queue.redis_queues_keys))
        self.keys = [key for key in keys if key != Queue.redis_queue_namespace_prefix + own]

    def __call__(self) -> bool:
        if not self.keys:
            return False
        with self.connection.pipeline(transaction=False) as pipe:
            for key in self.keys:
                pipe.llen(key)
            return any(pipe.execute())
