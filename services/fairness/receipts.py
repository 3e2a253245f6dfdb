"""Signed receipts on the command path: the service's key ring, made on first start, reloaded now
and then (a rotation by ``tablestream keys rotate`` reaches every process within
``RELOAD_SECONDS``), and the signing of each receipt a command answers (``services.fairness.signing``)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any

from services.fairness.signing import DEFAULT_KEY_NAME, ROTATION_OVERLAP_SECONDS, KeyRing, sign_receipt
from services.store.event_store import EventStore
from services.store.requests import Operation
from services.store.signing_keys import create_secret, load_secret, swap_secret

RELOAD_SECONDS = 60.0  # well inside ROTATION_OVERLAP_SECONDS: an old key never signs past its period
MIN_OVERLAP_SECONDS = int(RELOAD_SECONDS) + 30
"""The shortest overlap a rotation gives the old key: an API process that read the ring just before
the rotation signs with the old key until its next reload (``RELOAD_SECONDS``), plus slack for
clocks that differ between machines, so a shorter ``--overlap`` would have the old key sign past
its period. A rotation asked with less gets this, and says so."""


class RotationRaced(RuntimeError):
    """Another rotation replaced the ring between this one's read and write: nothing was written."""


def load_keys() -> Operation[KeyRing | None]:
    """The stored ring, or None before the first start."""
    raw = yield from load_secret()
    return None if raw is None else KeyRing.from_secret(raw)


def unique_name() -> str:
    """A key name no other deployment carries, for a ring made without a configured or derived one
    (``Settings.key_name``): the log's origin must tell deployments apart (C2SP tlog-checkpoint)."""
    return f"{DEFAULT_KEY_NAME}/{secrets.token_hex(8)}"


def ensure_keys(now: int, name: str = "") -> Operation[KeyRing]:
    """The stored ring; created (one new key valid from ``now``, named ``name``, else a unique name)
    when there is none. A ring keeps its name: a name given later names only keys rotated in."""
    raw = yield from load_secret()
    if raw is None:
        raw = yield from create_secret(KeyRing.generate(now, name or unique_name()).to_secret())
    return KeyRing.from_secret(raw)


def rotate_keys(
    now: int, overlap: int = ROTATION_OVERLAP_SECONDS, name: str | None = None
) -> Operation[KeyRing]:
    """Close the current key's period at ``now + overlap`` (at least ``MIN_OVERLAP_SECONDS``) and
    add a new current key valid from ``now``; every old key stays, for verification.
    ``RotationRaced`` when another rotation won."""
    raw = yield from load_secret()
    if raw is None:
        raw = yield from create_secret(KeyRing.generate(now, name or unique_name()).to_secret())
    rotated = KeyRing.from_secret(raw).rotate(now, max(overlap, MIN_OVERLAP_SECONDS), name)
    if not (yield from swap_secret(raw, rotated.to_secret())):
        raise RotationRaced("another rotation replaced the signing keys first; run it again")
    return rotated


class ReceiptSigner:
    """Signs receipts with the current key of the ring in Redis (one per API process)."""

    def __init__(
        self,
        store: EventStore,
        name: str = "",
        clock: Callable[[], float] = time.time,
        reload_seconds: float = RELOAD_SECONDS,
    ) -> None:
        self.store = store
        self.name = name
        self.clock = clock
        self.reload_seconds = reload_seconds
        self._ring: KeyRing | None = None
        self._loaded_at = 0.0

    async def keys(self) -> KeyRing:
        """The ring, read (or made) on first use and read again every ``reload_seconds``."""
        now = self.clock()
        if self._ring is None or now - self._loaded_at >= self.reload_seconds:
            self._ring = await self.store.run(ensure_keys(int(now), self.name))
            self._loaded_at = now
        return self._ring

    async def sign(self, receipt: Mapping[str, Any]) -> dict[str, Any]:
        """``receipt`` (game_id, version, hash) with key_id, signed_at and signature added."""
        ring = await self.keys()
        return sign_receipt(receipt, ring.current, int(self.clock()))
