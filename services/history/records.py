"""The stored form of events: the exact bytes in the stream, and the SHA-256 chain over them.

Every stream entry ``0-<version>`` holds ``d`` (the bytes below) and ``h`` (the chain hash, hex):
``h_v = SHA-256(h_{v-1} || d_v)`` with ``h_0`` = 32 zero bytes. ``d`` is a JSON ``StoredEvent``:
the version, the command id, the event, and - on the first event of each batch - the command
that produced the batch (kind, acting seat, body), so the command is under the chain too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Literal

import msgspec

from domain.kernel import Event

GENESIS_HASH = "00" * 32

CommandKind = Literal["create", "join", "command", "bots", "leave", "timeout", "bot", "expire"]


class CommandRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What was asked: ``create`` (body: game, players, options, and since the online lifecycle
    ``table``: the online options), ``join`` (name, client_seed), ``command`` (body: the game
    command as sent, by ``seat``); the online lifecycle adds ``bots`` (the host filled the free
    seats), ``leave`` (by ``seat``), ``timeout`` (body: the default command played for ``seat``),
    ``bot`` (body: a bot's command for ``seat``) and ``expire`` (a waiting table expired)."""

    id: str
    kind: CommandKind
    seat: int | None = None
    body: dict[str, Any]


class StoredEvent(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
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
    first_version: int, prev_hash: str, command: CommandRecord, events: Sequence[Event]
) -> list[Entry]:
    """The entries one command appends, chained from ``prev_hash`` (the hash at ``first_version - 1``)."""
    entries = []
    for offset, event in enumerate(events):
        stored = StoredEvent(
            version=first_version + offset,
            command_id=command.id,
            event=msgspec.Raw(encode_event(event)),
            command=command if offset == 0 else None,
        )
        data = _encoder.encode(stored)
        prev_hash = chain_hash(prev_hash, data)
        entries.append(Entry(first_version + offset, data, prev_hash))
    return entries


def decode_stored(data: bytes) -> StoredEvent:
    return _stored_decoder.decode(data)


def command_fingerprint(seat: int | None, body: Any) -> str:
    """Identity of a request body for command-id dedup: same seat and same canonical body."""
    canonical = msgspec.json.encode({"seat": seat, "body": body}, order="sorted")
    return hashlib.sha256(canonical).hexdigest()
