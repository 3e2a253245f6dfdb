"""The projection queue: RQ on Redis, JSON serializer, jobs that carry a game id only.

The job is named by its dotted path, so nothing here (nor anything that enqueues) imports the
workers that run it.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import redis
from rq import Queue, Retry
from rq.serializers import JSONSerializer

from services.store.event_store import EventStore

QUEUE_NAME = "projections"
PROJECTION_JOB = "workers.projector.project"


def projection_queue(connection: redis.Redis) -> Queue:
    return Queue(QUEUE_NAME, connection=connection, serializer=JSONSerializer)


def enqueue_projection(queue: Queue, game_id: str, **meta: Any) -> None:
    """One projection job per accepted command; retried on failure; no result kept."""
    queue.enqueue_call(
        PROJECTION_JOB,
        args=(game_id,),
        result_ttl=0,
        failure_ttl=7 * 24 * 3600,
        retry=Retry(max=3),
        meta=meta or None,
    )


class AppendNotifier:
    """After an append: wake the game's live streams and queue its projection."""

    def __init__(self, store: EventStore, queue: Queue) -> None:
        self.store = store
        self.queue = queue

    async def __call__(self, game_id: str) -> None:
        await self.store.publish_appended(game_id)
        await anyio.to_thread.run_sync(enqueue_projection, self.queue, game_id)
