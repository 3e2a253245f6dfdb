"""The projection job: bring one game's read models up to its newest event.

A poke carries only the game id. The job folds from what it already holds (a per-process cache of
folded tables, else the stream from the start), materialises every view at the head, and writes
them with compare-and-set on the checkpoint. A duplicate or late poke finds the checkpoint already
at the head and changes nothing; two workers racing on one game cannot move it backwards. Once
the views are at the head, the game's mark in the dirty set is cleared (``ops.clear_dirty``; kept
while the game's timer is behind its head or a bot is to act, for the sweeper to repair if that
lasts), and a table that no longer
waits for players stops counting against the cap on waiting tables.
"""

from __future__ import annotations

import msgspec
import structlog
from rq import get_current_job

from projections.views import lobby_entry, materialise
from services.history.folding import StateCache
from services.lifecycle import lifecycle_behind
from services.store.event_store import SyncEventStore
from workers.ratings import RatingsRecorder

MAX_CAS_ROUNDS = 20

log = structlog.get_logger("tablestream.projector")
_cache = StateCache()


class Projector:
    def __init__(
        self, store: SyncEventStore, cache: StateCache | None = None, ratings: RatingsRecorder | None = None
    ) -> None:
        self.store = store
        self.cache = cache if cache is not None else StateCache()
        self.ratings = ratings if ratings is not None else RatingsRecorder(store)

    def catch_up(self, game_id: str) -> int:
        """Project ``game_id`` to its head; returns the checkpoint it leaves behind. A finished game
        is also recorded in its players' histories and ratings (once, however often it is poked).
        The game stays marked dirty while its lifecycle is pending at the head (its timer is behind,
        the appending process died before arming it, or a bot is to act): the sweeper then has it
        settled if that lasts (``workers.sweeper``)."""
        checkpoint = self._project(game_id)
        folded = self.cache.get(game_id)
        at_head = folded is not None and folded.version == checkpoint
        if at_head and folded is not None and lifecycle_behind(self.store.read_timer(game_id), folded):
            log.info("lifecycle_pending", game_id=game_id, version=checkpoint)
            return checkpoint
        self.store.clear_dirty(game_id, checkpoint)
        return checkpoint

    def _project(self, game_id: str) -> int:
        for _ in range(MAX_CAS_ROUNDS):
            checkpoint = self.store.checkpoint(game_id)
            folded = self.store.load(game_id, self.cache)
            if folded is not None and folded.state.status == "finished":
                self.ratings.record(folded)
            if folded is None or folded.version <= checkpoint:
                return checkpoint
            fields = materialise(folded.state, folded.version)
            outcome = self.store.write_views(game_id, checkpoint, folded.version, fields)
            if outcome == "written":
                self.store.put_lobby(game_id, msgspec.json.encode(lobby_entry(folded.state, folded.version)))
                if folded.state.status != "waiting":
                    self.store.not_waiting(game_id)
                log.info("projected", game_id=game_id, checkpoint=folded.version, previous=checkpoint)
                return folded.version
            if outcome == "stale":
                return self.store.checkpoint(game_id)
        raise RuntimeError(f"projection of {game_id} kept losing its compare-and-set")


def project(game_id: str) -> int:
    """RQ entry point (``services.store.queue.PROJECTION_JOB``; JSON serializer, ids only)."""
    job = get_current_job()
    assert job is not None, "project() runs inside an RQ job"
    with structlog.contextvars.bound_contextvars(game_id=game_id, job_id=job.id):
        return Projector(SyncEventStore(job.connection), _cache).catch_up(game_id)
