"""Checkpoints of the log (C2SP tlog-checkpoint) and witnesses' cosignatures (C2SP tlog-cosignature).

A checkpoint is a signed note (``services.fairness.signing.sign_note``, the service's current key) whose text
is::

    <origin>                 the log's name: the signing key's note name (TABLESTREAM_SIGNING_KEY_NAME)
    <size>                   leaves in the tree, decimal
    <base64 root hash>       RFC 9162 root of those leaves, standard base64 with padding
    timestamp <unix seconds> an extension line: when it was signed (a key is checked at that time)

A checkpoint verifies when a key of the ring (the well-known keys, an export's keys) with the
origin's name signed it and that key was valid at its timestamp: a checkpoint by an unknown key, or
by a key outside its validity period, is refused.

A cosignature is one more note signature line, ``— <witness name> base64(key ID || timestamp ||
signature)``: the key ID is SHA-256(name || 0x0A || 0x04 || public key)[:4], the timestamp a
big-endian u64 (unix seconds), the Ed25519 signature is over ``cosignature/v1\\ntime
<timestamp>\\n`` followed by the checkpoint's text. A witness key is given as a vkey with type 0x04:
``<name>+<key ID hex>+base64(0x04 || public key)``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from services.fairness.signing import (
    KeyRing,
    NoteError,
    NoteSignature,
    PublicKey,
    check_key_name,
    key_hash,
    parse_note,
    raw_public,
    sign_note,
)

COSIGNATURE_TYPE = 0x04
_SIZE = re.compile(r"0|[1-9][0-9]{0,18}")
_TIMESTAMP = re.compile(r"timestamp (0|[1-9][0-9]{0,18})")


class CheckpointError(ValueError):
    """A checkpoint that is malformed, unsigned by a known key, or signed by a key not valid then."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    timestamp: int
    text: str  # the signed text, exactly

    def document(self, note: str) -> dict[str, object]:
        return {
            "origin": self.origin,
            "size": self.size,
            "root_hash": base64.b64encode(self.root).decode(),
            "timestamp": self.timestamp,
            "note": note,
        }


def checkpoint_text(origin: str, size: int, root: bytes, timestamp: int) -> str:
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\ntimestamp {timestamp}\n"


def parse_text(text: str) -> Checkpoint:
    lines = text.split("\n")
    if len(lines) < 5 or lines[-1] != "":
        raise CheckpointError(
            "checkpoint_malformed", "A checkpoint has an origin, a size, a root and a timestamp."
        )
    origin, size, root, timestamp = lines[0], lines[1], lines[2], lines[3]
    try:
        check_key_name(origin)
        digest = base64.b64decode(root, validate=True)
    except (ValueError, binascii.Error):
        raise CheckpointError(
            "checkpoint_malformed", "The checkpoint's origin or root hash is malformed."
        ) from None
    stamp = _TIMESTAMP.fullmatch(timestamp)
    if not _SIZE.fullmatch(size) or len(digest) != 32 or stamp is None:
        raise CheckpointError(
            "checkpoint_malformed", "The checkpoint's size, root hash or timestamp is malformed."
        )
    return Checkpoint(origin, int(size), digest, int(stamp.group(1)), text)


def sign_checkpoint(ring: KeyRing, size: int, root: bytes, now: int) -> str:
    """The note of a checkpoint signed by the ring's current key (its name is the origin)."""
    key = ring.current
    return sign_note(checkpoint_text(key.public.name, size, root, now), key.public.name, key.private)


def _parts(note: str) -> tuple[str, list[NoteSignature]]:
    """A checkpoint note's text and signature lines; ``CheckpointError`` when it is no signed note."""
    try:
        return parse_note(note)
    except NoteError as error:
        raise CheckpointError(
            "checkpoint_malformed", f"The checkpoint is not a signed note: {error}"
        ) from None


def open_checkpoint(note: str, keys: Iterable[PublicKey]) -> tuple[Checkpoint, PublicKey]:
    """The checkpoint of ``note`` and the key that signed it; ``CheckpointError`` unless a key of
    ``keys`` named as the origin signed it and was valid at its timestamp."""
    text, signatures = _parts(note)
    checkpoint = parse_text(text)
    candidates = {(k.name, key_hash(k.name, k.public_key)): k for k in keys if k.name == checkpoint.origin}
    signer: PublicKey | None = None
    for signature in signatures:
        key = candidates.get((signature.name, signature.key_hash))
        if key is not None and key.verify(signature.signature, text.encode()):
            signer = key
            break
        if key is not None:
            raise CheckpointError("checkpoint_forged", f"The signature of {signature.name} does not verify.")
    if signer is None:
        raise CheckpointError("checkpoint_key_unknown", "No known key of the log signed this checkpoint.")
    if not signer.valid_at(checkpoint.timestamp):
        raise CheckpointError(
            "checkpoint_key_expired",
            f"The checkpoint was signed by key {signer.key_id}, which was not valid at its timestamp "
            f"{checkpoint.timestamp}.",
        )
    return checkpoint, signer


# -- cosignatures -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WitnessKey:
    name: str
    key_id: int
    public_key: bytes

    @property
    def vkey(self) -> str:
        material = base64.b64encode(bytes([COSIGNATURE_TYPE]) + self.public_key).decode()
        return f"{self.name}+{self.key_id:08x}+{material}"


def witness_key(name: str, public_key: bytes) -> WitnessKey:
    return WitnessKey(check_key_name(name), key_hash(name, public_key, COSIGNATURE_TYPE), public_key)


def parse_witness_vkey(text: str) -> WitnessKey:
    """A cosigner's vkey (type 0x04); ``CheckpointError`` (``witness_key_malformed``) otherwise."""
    name, _, rest = text.strip().partition("+")
    key_id, _, material = rest.partition("+")
    try:
        check_key_name(name)
        raw = base64.b64decode(material, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if not re.fullmatch(r"[0-9a-f]{8}", key_id) or len(raw) != 33 or raw[0] != COSIGNATURE_TYPE:
        raise CheckpointError(
            "witness_key_malformed", "A witness key is <name>+<key ID>+base64(0x04 || key)."
        )
    key = witness_key(name, raw[1:])
    if key.key_id != int(key_id, 16):
        raise CheckpointError(
            "witness_key_malformed", "The witness key's ID does not match its name and key."
        )
    return key


def cosigned_message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n{text}".encode()


def cosign(text: str, name: str, private_key: Ed25519PrivateKey, timestamp: int) -> str:
    """The cosignature line (without its newline) of witness ``name`` on checkpoint text ``text``."""
    key = witness_key(name, raw_public(private_key.public_key()))
    signature = private_key.sign(cosigned_message(text, timestamp))
    blob = key.key_id.to_bytes(4, "big") + timestamp.to_bytes(8, "big") + signature
    return f"— {name} {base64.b64encode(blob).decode()}"


@dataclass(frozen=True)
class Cosignature:
    name: str
    key_id: int
    timestamp: int
    signature: bytes
    line: str


def parse_cosignature(line: str) -> Cosignature:
    line = line.strip("\n")
    if "\n" in line or not line.startswith("— "):
        raise CheckpointError("cosignature_malformed", "A cosignature is one line: — <name> <base64>.")
    name, _, encoded = line[2:].partition(" ")
    try:
        check_key_name(name)
        blob = base64.b64decode(encoded, validate=True)
    except (ValueError, binascii.Error):
        blob = b""
    if len(blob) != 4 + 8 + 64:
        raise CheckpointError(
            "cosignature_malformed", "A cosignature holds a key ID, a timestamp and a signature."
        )
    timestamp = int.from_bytes(blob[4:12], "big")
    if timestamp >= 1 << 63:
        raise CheckpointError("cosignature_malformed", "A cosignature's timestamp is below 2^63.")
    return Cosignature(name, int.from_bytes(blob[:4], "big"), timestamp, blob[12:], line)


def verify_cosignature(text: str, cosignature: Cosignature, key: WitnessKey) -> bool:
    """True when ``key`` made ``cosignature`` over checkpoint text ``text``."""
    if (cosignature.name, cosignature.key_id) != (key.name, key.key_id):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(key.public_key).verify(
            cosignature.signature, cosigned_message(text, cosignature.timestamp)
        )
    except (InvalidSignature, ValueError):
        return False
    return True


def text_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def cosigners(note: str, witnesses: Iterable[WitnessKey]) -> list[tuple[WitnessKey, int]]:
    """The witnesses of ``witnesses`` whose cosignature of ``note``'s checkpoint is among its signature
    lines and verifies, each with the time it cosigned (its own clock, not the log's); lines that are
    not cosignatures (the log's own signature) are passed over. ``CheckpointError`` when ``note`` is
    not a signed note."""
    text, _ = _parts(note)
    found = []
    for line in note[len(text) + 1 :].splitlines():
        try:
            found.append(parse_cosignature(line))
        except CheckpointError:
            continue  # a signature of another type
    signed = []
    for key in witnesses:
        match = next((c for c in found if verify_cosignature(text, c, key)), None)
        if match is not None:
            signed.append((key, match.timestamp))
    return signed
