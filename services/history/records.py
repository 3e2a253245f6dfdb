"""The stored form of events: the exact bytes in the stream, and the SHA-256 chain over them.

Every stream entry ``0-<version>`` holds ``d`` (the bytes below) and ``h`` (the chain hash, hex):
``h_v = SHA-256(h_{v-1} || d_v)`` with ``h_0`` = 32 zero bytes. ``d`` is a JSON ``StoredEvent``:
the version, the command id, the event, and - on the first event of each batch - the command
that produced the batch (kind, acting seat, body), so the command is under the chain too.

Stored format 2 adds ``salt``: 128 random bits (32 hex digits) per entry, inside the hashed bytes
(docs/fairness.md "Hiding"). A hash is public while the game runs (receipts, the audit head) and a
hidden field takes few values (a card, a bid, a disc order); with an unknown salt in the bytes, no
one can test candidate values against it. The write side draws salts (``services.table.commands``); this
module never draws randomness, and the verifier's re-encoding takes each entry's salt from the
entry itself. Format 1 entries (written before salts) have no ``salt`` key and encode exactly as
before, so old streams keep verifying.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from domain.kernel import Event

GENESIS_HASH = "00" * 32

CommandKind = Literal[
    "create", "join", "command", "bots", "leave", "timeout", "bot", "expire", "reclaim", "close", "hint"
]


class CommandRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What was asked: ``create`` (body: game, players, options, and since the online lifecycle
    ``table``: the online options), ``join`` (name, client_seed), ``command`` (body: the game
    command as sent, by ``seat``); the online lifecycle adds ``bots`` (the host filled the free
    seats), ``leave`` (by ``seat``), ``timeout`` (body: the default command played for ``seat``),
    ``bot`` (body: a bot's command for ``seat``) and ``expire`` (a waiting table expired); then
    ``reclaim`` (by ``seat``, body empty: its player takes back a seat taken over after timeouts);
    then ``close`` (body: ``reason`` and ``operator``: an operator closed the table); then ``hint``
    (by ``seat``, body: the suggested ``command`` and its ``reason``: ``hint_given`` at a practice
    table)."""

    id: str
    kind: CommandKind
    seat: int | None = None
    body: dict[str, Any]


SALT_HEX_LENGTH = 32  # 128 bits


class StoredEvent(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``salt`` is ``None`` only in format 1 entries (omitted from the bytes then)."""

    salt: str | None = None
    version: int
    command_id: str
    event: msgspec.Raw
    command: CommandRecord | None = None


class Entry(msgspec.Struct, frozen=True):
    """One stream entry as read back: its version, exact stored bytes and chain hash."""

    version: int
    data: bytes
    hash: str


_encoder = msgspec.json.Encoder()
_stored_decoder = msgspec.json.Decoder(StoredEvent)


def encode_event(event: Event) -> bytes:
    """The exact bytes stored for an event inside its ``StoredEvent`` (the re-run compares these)."""
    return _encoder.encode(event)


def chain_hash(prev_hash: str, data: bytes) -> str:
    return hashlib.sha256(bytes.fromhex(prev_hash) + data).hexdigest()


def encode_batch(
    first_version: int,
    prev_hash: str,
    command: CommandRecord,
    events: Sequence[Event],
    salts: Sequence[str | None],
) -> list[Entry]:
    """The entries one command appends, chained from ``prev_hash`` (the hash at ``first_version - 1``).

    ``salts`` has one salt per event (32 hex digits; ``None`` only to re-encode a format 1 entry).
    """
    if len(salts) != len(events):
        raise ValueError(f"{len(events)} events need {len(events)} salts, not {len(salts)}")
    entries = []
    for offset, (event, salt) in enumerate(zip(events, salts, strict=True)):
        if salt is not None and not is_salt(salt):
            raise ValueError(f"a salt is {SALT_HEX_LENGTH} lowercase hex digits, not {salt!r}")
        stored = StoredEvent(
            salt=salt,
            version=first_version + offset,
            command_id=command.id,
            event=msgspec.Raw(encode_event(event)),
            command=command if offset == 0 else None,
        )
        data = _encoder.encode(stored)
        prev_hash = chain_hash(prev_hash, data)
        entries.append(Entry(first_version + offset, data, prev_hash))
    return entries


def is_salt(value: str) -> bool:
    """Whether ``value`` is a well-formed salt: 32 lowercase hex digits."""
    return len(value) == SALT_HEX_LENGTH and all(c in "0123456789abcdef" for c in value)


def decode_stored(data: bytes) -> StoredEvent:
    return _stored_decoder.decode(data)


def command_fingerprint(seat: int | None, body: Any) -> str:
    """Identity of a request body for command-id dedup: same seat and same canonical body."""
    canonical = msgspec.json.encode({"seat": seat, "body": body}, order="sorted")
    return hashlib.sha256(canonical).hexdigest()


FINGERPRINT_BYTES = 16  # of a fingerprint's SHA-256 kept in a dedup record
_HEX = frozenset("0123456789abcdef")


def stored_fingerprint(fingerprint: str) -> str:
    """A fingerprint as its dedup record keeps it: a ``command_fingerprint`` (64 hex digits) by its
    first 128 bits in unpadded base64url, 22 characters instead of 64 (a second body with the same
    id and seat is told apart all the same: finding one that matches would take about 2**64
    tries, for the sole effect of a seat's own retry answered with its own earlier command); any
    other fingerprint (a system command's record id) as it is. A record written before keeps the
    whole digest: it is read through this too, so both compare alike."""
    if len(fingerprint) != 64 or not _HEX.issuperset(fingerprint):
        return fingerprint
    digest = bytes.fromhex(fingerprint)[:FINGERPRINT_BYTES]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
