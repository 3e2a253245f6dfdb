"""Where the service's signing keys live: one string key, ``ts:signing-keys``, holding the key ring
with its private seeds (``services.signing.KeyRing.to_secret``: JSON). It is a server secret like a
game's seeds: never served, never logged; the public half is served at
``/.well-known/tablestream-keys``. It is not in a game's slot (it names no game), so on a Redis
Cluster it lives in its own slot of the store.

The first process to start creates it (``SET NX``: concurrent starts agree on one ring);
``tablestream keys rotate`` replaces it with a compare-and-swap (``swap_keys.lua``).
"""

from __future__ import annotations

from services.signing import DEFAULT_KEY_NAME, ROTATION_OVERLAP_SECONDS, KeyRing
from services.store.keys import PREFIX
from services.store.requests import Call, Operation, ScriptCall

SIGNING_KEYS = f"{PREFIX}:signing-keys"  # string: the key ring's secret JSON


class RotationRaced(RuntimeError):
    """Another rotation replaced the ring between this one's read and write: nothing was written."""


def load_keys() -> Operation[KeyRing | None]:
    """The stored ring, or None before the first start."""
    raw: bytes | None = yield Call(("GET", SIGNING_KEYS))
    return None if raw is None else KeyRing.from_secret(raw)


def ensure_keys(now: int, name: str = DEFAULT_KEY_NAME) -> Operation[KeyRing]:
    """The stored ring; created (one new key valid from ``now``) when there is none."""
    ring = yield from load_keys()
    if ring is not None:
        return ring
    yield Call(("SET", SIGNING_KEYS, KeyRing.generate(now, name).to_secret(), "NX"))
    stored = yield from load_keys()  # ours, or a concurrent first start's
    assert stored is not None
    return stored


def rotate_keys(
    now: int, overlap: int = ROTATION_OVERLAP_SECONDS, name: str | None = None
) -> Operation[KeyRing]:
    """Close the current key's period at ``now + overlap`` and add a new current key valid from
    ``now``; every old key stays, for verification. ``RotationRaced`` when another rotation won."""
    raw: bytes | None = yield Call(("GET", SIGNING_KEYS))
    if raw is None:
        ring = yield from ensure_keys(now, name or DEFAULT_KEY_NAME)
        raw = ring.to_secret().encode()
    rotated = KeyRing.from_secret(raw).rotate(now, overlap, name)
    swapped = yield ScriptCall("swap_keys", [SIGNING_KEYS], [raw, rotated.to_secret()])
    if not swapped:
        raise RotationRaced("another rotation replaced the signing keys first; run it again")
    return rotated
