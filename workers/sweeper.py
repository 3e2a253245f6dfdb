"""The lag sweeper: pokes every game whose projection checkpoint is behind its stream head.

Pokes can be lost (a crash between append and enqueue, a job that exhausted its retries); the
sweeper makes projections eventually complete without anyone watching.
"""

from __future__ import annotations

import threading

import structlog
from rq import Queue

from services.store.event_store import SyncEventStore
from services.store.queue import enqueue_projection

log = structlog.get_logger("tablestream.sweeper")


def sweep(store: SyncEventStore, queue: Queue) -> list[str]:
    """Poke each lagging game once; returns their ids."""
    lagging = [gid for gid in store.scan_games() if store.checkpoint(gid) < store.head(gid)]
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
            except Exception:  # a flaky connection must not kill the sweeper; the next pass retries
                log.exception("sweep_failed")

    def stop(self) -> None:
        self._stopped.set()
