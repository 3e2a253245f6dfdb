"""The lag sweeper: pokes every marked game whose projection checkpoint is behind its stream head.

Pokes can be lost (a crash between append and enqueue, a job that exhausted its retries, a Redis
restart that lost the queue); the sweeper makes projections eventually complete without anyone
watching. It reads only the dirty set (``services.store.operations``: every write marks its game,
the projector clears the mark), so an idle sweep costs one command however many games are stored.
A game is swept once its mark is ``grace`` old: younger ones have a job on the way.
"""

from __future__ import annotations

import threading

import structlog
from rq import Queue

from services.store.event_store import SyncEventStore
from services.store.queue import enqueue_projection

log = structlog.get_logger("tablestream.sweeper")


GRACE_MS = 2000
BATCH = 1000


def sweep(store: SyncEventStore, queue: Queue, grace_ms: int = GRACE_MS, batch: int = BATCH) -> list[str]:
    """Poke each lagging marked game once (clear the marks of caught-up ones); returns the poked ids."""
    lagging = []
    for game_id in store.dirty_games(grace_ms, batch):
        checkpoint = store.checkpoint(game_id)
        if checkpoint < store.head(game_id):
            lagging.append(game_id)
        else:
            store.clear_dirty(game_id, checkpoint)
    for game_id in lagging:
        enqueue_projection(queue, game_id, reason="sweep")
    if lagging:
        log.info("swept", lagging=len(lagging))
    return lagging


class Sweeper(threading.Thread):
    """Runs ``sweep`` every ``interval`` seconds until ``stop()``."""

    def __init__(self, store: SyncEventStore, queue: Queue, interval: float = 5.0) -> None:
        super().__init__(name="tablestream-sweeper", daemon=True)
        self._store, self._queue, self._interval = store, queue, interval
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                sweep(self._store, self._queue)
            except Exception as exc:  # a flaky connection must not kill the sweeper; the next pass retries
                log.warning("sweep_failed", error=f"{type(exc).__name__}: {exc}")

    def stop(self) -> None:
        self._stopped.set()
