"""The projection job: bring one game's read models up to its newest event.

A poke carries only the game id. The job folds from what it already holds (a per-process cache of
folded tables, else the stream from the start), materialises every view at the head, and writes
them with compare-and-set on the checkpoint. A duplicate or late poke finds the checkpoint already
at the head and changes nothing; two workers racing on one game cannot move it backwards.
"""

from __future__ import annotations

from typing import Any

import msgspec
import redis
import structlog
from rq import Queue, Retry, get_current_job
from rq.serializers import JSONSerializer

from projections.views import lobby_entry, materialise
from services.folding import Folded, StateCache, advance
from services.store_sync import SyncEventStore

QUEUE_NAME = "projections"
JOB = "workers.projector.project"
MAX_CAS_ROUNDS = 20

log = structlog.get_logger("tablestream.projector")
_cache = StateCache()


class Projector:
    def __init__(self, store: SyncEventStore, cache: StateCache | None = None) -> None:
        self.store = store
        self.cache = cache if cache is not None else StateCache()

    def load(self, game_id: str) -> Folded | None:
        cached = self.cache.get(game_id)
        entries = self.store.read(game_id, after=cached.version if cached else 0)
        if cached is None and not entries:
            return None
        folded = advance(game_id, cached, entries)
        self.cache.put(folded)
        return folded

    def catch_up(self, game_id: str) -> int:
        """Project ``game_id`` to its head; returns the checkpoint it leaves behind."""
        for _ in range(MAX_CAS_ROUNDS):
            checkpoint = self.store.checkpoint(game_id)
            folded = self.load(game_id)
            if folded is None or folded.version <= checkpoint:
                return checkpoint
            fields = materialise(folded.state, folded.version)
            outcome = self.store.write_views(game_id, checkpoint, folded.version, fields)
            if outcome == "written":
                self.store.put_lobby(game_id, msgspec.json.encode(lobby_entry(folded.state, folded.version)))
                log.info("projected", game_id=game_id, checkpoint=folded.version, previous=checkpoint)
                return folded.version
            if outcome == "stale":
                return self.store.checkpoint(game_id)
        raise RuntimeError(f"projection of {game_id} kept losing its compare-and-set")


def project(game_id: str) -> int:
    """RQ entry point (JSON serializer, ids only)."""
    job = get_current_job()
    assert job is not None, "project() runs inside an RQ job"
    with structlog.contextvars.bound_contextvars(game_id=game_id, job_id=job.id):
        return Projector(SyncEventStore(job.connection), _cache).catch_up(game_id)


def projection_queue(connection: redis.Redis) -> Queue:
    return Queue(QUEUE_NAME, connection=connection, serializer=JSONSerializer)


def enqueue_poke(queue: Queue, game_id: str, **meta: Any) -> None:
    """One poke per accepted command; retried on failure; no result kept."""
    queue.enqueue_call(
        JOB,
        args=(game_id,),
        result_ttl=0,
        failure_ttl=7 * 24 * 3600,
        retry=Retry(max=3),
        meta=meta or None,
    )
