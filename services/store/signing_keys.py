"""Where the service's signing keys live: one string key, ``ts:signing-keys``, holding the key ring
with its private seeds (``services.fairness.signing.KeyRing.to_secret``: JSON). It is a server secret like a
game's seeds: never served, never logged; the public half is served at
``/.well-known/tablestream-keys``. It is not in a game's slot (it names no game), so on a Redis
Cluster it lives in its own slot of the store.

The operations here move the secret as bytes; ``services.fairness.receipts`` makes and rotates rings: the
first process to start stores one with ``SET NX`` (concurrent starts agree on one ring), and a
rotation replaces it with a compare-and-swap (``swap_keys.lua``).
"""

from __future__ import annotations

from services.store.keys import PREFIX
from services.store.requests import Call, Operation, ScriptCall

SIGNING_KEYS = f"{PREFIX}:signing-keys"  # string: the key ring's secret JSON


def load_secret() -> Operation[bytes | None]:
    """The stored ring's secret, or None before the first start."""
    raw: bytes | None = yield Call(("GET", SIGNING_KEYS))
    return raw


def create_secret(secret: str) -> Operation[bytes]:
    """Store ``secret`` unless a ring is there already; the stored one (ours or another's)."""
    yield Call(("SET", SIGNING_KEYS, secret, "NX"))
    raw: bytes | None = yield Call(("GET", SIGNING_KEYS))
    assert raw is not None, "a ring stored with SET NX is readable"
    return raw


def swap_secret(read: bytes, secret: str) -> Operation[bool]:
    """Replace the ring with ``secret`` if it is still ``read``; False when another write won."""
    swapped = yield ScriptCall("swap_keys", [SIGNING_KEYS], [read, secret])
    return bool(swapped)
