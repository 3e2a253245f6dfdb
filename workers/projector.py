"""The projection: bring games' read models up to their newest events.

Hand-overs are coalesced (``services.store.indexes``): the append that sets a game's pending flag
hands the game over to the projection consumers (``workers.handover``: a thread of the worker
process blocked on the hand-over stream), which project what they take in batches
(``Projector.catch_up_all`` with ``claim``: a game is projected by the consumer whose clear took its
flag). The sweeper queues ``project_games`` with the lagging games it finds, projected whatever their
flags say; ``project`` (one game) stays for jobs queued before. Each projection of a game first
clears its pending flag, then reads its head: an append after the clear hands the game over again.

Each projection folds from what it already holds (a per-process cache of folded tables, else the
stream from the start), materialises the views at the head once (their public part, each seat's and
the spectator's own part, the scoreboard: ``projections.views``), and writes them with
compare-and-set on the checkpoint; the views and their checkpoint live in memory only
(``project_views.lua``), and an ended game's are dropped (its readers render them from its events).
A duplicate or late hand-over finds the checkpoint already at the head and changes nothing; two
workers racing on one game cannot move it backwards. Once the views are at the head, the game's mark
in the dirty set is cleared (in memory only: after a restart of Redis the durable mark is back, and
the game is projected again; kept while the stream has moved past the views, while the game's timer
is behind its head or a bot is to act, for the sweeper to repair if that lasts), and a table that no
longer waits for players stops counting against the cap on waiting tables.

A batch of games costs two round trips (``catch_up_all``): the start (pending flags cleared, then
every game's checkpoint, timer and new events read) and the write (``services.store.projection``:
each game's views, and, where the indexes live on the store's one server, the public log's note, the
lobby, the waiting tables, the timer and retention indexes and the dirty mark, in the same script).
A move's projection writes nothing durable: no ``fsync`` of its own with AOF ``always``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import msgspec
import structlog
from rq import get_current_job
from rq.job import Job

from domain.table import is_private
from projections.views import lobby_entry, materialise
from services.fairness.transparency import log as transparency
from services.history.folding import Folded, StateCache
from services.store import archive, indexes
from services.store import operations as ops
from services.store.event_store import SyncEventStore
from services.store.operations import ProjectionStart
from services.store.projection import Projected, ProjectionWrite, project_views
from services.store.requests import Operation, clock_ms
from services.table import tracing
from services.table.lifecycle import lifecycle_behind
from services.telemetry import metrics
from workers.ratings import RatingsRecorder
from workers.stores import job_store

MAX_CAS_ROUNDS = 20
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
        over, queued for the log's appender, ``services.fairness.transparency.log``) in one before the
        views."""
        return self.store.run(self._catch_up(game_id))

    def catch_up_all(
        self, game_ids: list[str], claim: bool = False, also: Operation[Any] | None = None
    ) -> list[str]:
        """``catch_up`` each game, all of them in lockstep (``SyncEventStore.run_all``): the same
        two round trips for the whole batch as for one game. One that fails (logged) does not stop
        the others: its dirty mark stays, for the sweeper. Returns the games that failed.
        ``claim``: project only the games whose pending flag this batch cleared (a consumer's batch
        of hand-overs: of consumers racing on a game, the one that took the flag projects it).
        ``also``: an operation run in the same rounds (a consumer drops the stream it read whole),
        its failure logged."""
        failed = []
        operations: list[Operation[Any]] = [self._catch_up(game_id, claim) for game_id in game_ids]
        outcomes = self.store.run_all([*operations, *((also,) if also is not None else ())])
        if also is not None and isinstance(extra := outcomes.pop(), Exception):
            log.warning("projection_batch_extra_failed", exc_info=extra)
        for game_id, outcome in zip(game_ids, outcomes, strict=True):
            if isinstance(outcome, Exception):
                log.warning("projection_failed", game_id=game_id, exc_info=outcome)
                failed.append(game_id)
        return failed

    def _catch_up(self, game_id: str, claim: bool = False) -> Operation[int]:
        before = self.cache.get(game_id)
        start = yield from ops.begin_projection(game_id, self.cache)
        if claim and not start.claimed:  # another consumer took it, or a projection began since
            return start.checkpoint
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
