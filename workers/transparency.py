"""The log appender and checkpoint publisher: a thread of the worker pool (``workers.pool``).

Every ``append_seconds`` it appends the heads of the games the projector queued
(``services.fairness.transparency.log``), batch after batch until none wait; every ``checkpoint_seconds``
it signs a checkpoint of the tree with the service's current key (``services.store.signing_keys``)
when the tree grew or the key changed, and only when the tree extends the newest checkpoint published
(kept outside Redis: ``services.fairness.transparency.published``; otherwise it logs
``log_checkpoint_refused`` at each interval and signs nothing). Several pools may run one each: the
append script's size check lets one batch land at a time, and a checkpoint never replaces a larger
one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import structlog

from services.fairness.receipts import ensure_keys
from services.fairness.transparency.log import APPEND_BATCH, TransparencyLog
from services.fairness.transparency.published import LogContradiction
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from services.table.lifecycle import wall_clock_ms
from services.telemetry import metrics

log = structlog.get_logger("tablestream.transparency")

MAX_BATCHES_PER_PASS = 50


def append_all(tlog: TransparencyLog, batch: int = APPEND_BATCH) -> int:
    """Append until no game waits (or ``MAX_BATCHES_PER_PASS`` batches); returns leaves appended."""
    appended = 0
    for _ in range(MAX_BATCHES_PER_PASS):
        if not tlog.redis.zcard(TLOG.pending):
            break
        appended += tlog.append_pending(batch)
    return appended


class TransparencyLoop(threading.Thread):
    """Runs ``append_all`` every ``append_seconds`` and publishes a checkpoint every
    ``checkpoint_seconds``, until ``stop()``."""

    def __init__(
        self,
        store: SyncEventStore,
        key_name: str,
        append_seconds: float = 1.0,
        checkpoint_seconds: float = 10.0,
        clock: Callable[[], int] = wall_clock_ms,
        kept_in: Path | None = None,
    ) -> None:
        super().__init__(name="tablestream-transparency", daemon=True)
        self._store, self._key_name = store, key_name
        self._log = TransparencyLog(store)
        self._append_seconds, self._checkpoint_ms = append_seconds, int(checkpoint_seconds * 1000)
        self._clock = clock
        self._kept_in = kept_in  # where the newest checkpoint published is kept, outside Redis
        self._published_at: int | None = None
        self._stopped = threading.Event()

    def pass_once(self) -> None:
        append_all(self._log)
        now = self._clock()
        if self._published_at is None or now - self._published_at >= self._checkpoint_ms:
            ring = self._store.run(ensure_keys(now // 1000, self._key_name))
            self._log.publish(ring, now // 1000, self._kept_in)
            self._published_at = now

    def run(self) -> None:
        while not self._stopped.wait(self._append_seconds):
            try:
                self.pass_once()
            except LogContradiction as refused:  # nothing signed: an operator must restore the log
                metrics.log_checkpoint_refused()
                log.error("log_checkpoint_refused", reason=str(refused))
            except Exception as exc:  # a flaky connection must not kill the thread; the next pass retries
                log.warning("transparency_pass_failed", error=f"{type(exc).__name__}: {exc}")

    def stop(self) -> None:
        self._stopped.set()
