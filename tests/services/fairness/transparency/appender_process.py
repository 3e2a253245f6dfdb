"""An appender process for the kill test: appends one game per batch and publishes a checkpoint
after each, recording every checkpoint it published under ``PUBLISHED`` (a test-only key).

``python -m tests.services.fairness.transparency.appender_process REDIS_URL``; runs until killed."""

from __future__ import annotations

import sys
import time

import redis

from services.fairness.receipts import ensure_keys
from services.fairness.transparency.log import TransparencyLog
from services.store.event_store import SyncEventStore

PUBLISHED = "test:{tlog}:published"


def main(url: str) -> None:
    client = redis.Redis.from_url(url)
    store = SyncEventStore(client)
    tlog = TransparencyLog(store)
    while True:
        now = int(time.time())
        ring = store.run(ensure_keys(now, "tables.example/log"))
        tlog.append_pending(batch=1)
        client.rpush(PUBLISHED, tlog.publish(ring, now))


if __name__ == "__main__":
    main(sys.argv[1])
