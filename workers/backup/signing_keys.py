"""The receipt signing keys in a backup: one ``signing_keys`` line (``services.fairness.signing``:
the key ring with its private seeds), so that receipts signed before the backup still verify against
exports made after the restore; the restore merges it into any ring the target holds. The same ring
signs the backup's manifest (``workers.backup.frame``).
"""

from __future__ import annotations

import json
import time
from typing import Any

from services.fairness.receipts import ensure_keys
from services.fairness.signing import KeyRing
from services.store.event_store import SyncEventStore
from services.store.signing_keys import create_secret, load_secret, swap_secret
from workers.backup.frame import BackupError, ring_of


def read_signing_keys(store: SyncEventStore) -> tuple[KeyRing, dict[str, Any]]:
    """The ring and its line: the one the API makes at its first start, made now if no API ever
    started on this store."""
    ring = store.run(ensure_keys(int(time.time())))
    return ring, {"kind": "signing_keys", "ring": json.loads(ring.to_secret())}


def signing_keys_problems(record: dict[str, Any]) -> list[str]:
    """Why the ``signing_keys`` line cannot be restored (empty: it can)."""
    try:
        ring_of(record)
    except (TypeError, ValueError, KeyError) as error:
        return [f"the signing keys cannot be read: {error}"]
    return []


def write_signing_keys(store: SyncEventStore, restored: KeyRing) -> None:
    """Store the backup's signing keys, merged into the ring the target holds (an API started
    before the restore made one): every key of both stays, the newest one signs."""
    for _ in range(5):
        raw = store.run(load_secret())
        if raw is None:
            if store.run(create_secret(restored.to_secret())) == restored.to_secret().encode():
                return
            continue
        merged = KeyRing.from_secret(raw).merged(restored, int(time.time()))
        if merged.to_secret().encode() == raw or store.run(swap_secret(raw, merged.to_secret())):
            return
    raise BackupError("the signing keys kept changing during the import")
