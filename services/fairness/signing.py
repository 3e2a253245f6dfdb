"""The service's signing keys, signed receipts and C2SP signed notes (Ed25519, ``cryptography``).

Nothing here does I/O: the key ring is a value that ``services.store.signing_keys`` keeps in Redis.

**Times** are whole unix seconds (UTC). A key is valid from ``not_before`` (included) to
``not_after`` (excluded); ``not_after`` is ``None`` while the key is the current one.

**Key ids** are the first 8 bytes of SHA-256 of the raw 32-byte public key, as 16 hex digits: anyone
holding a public key can recompute its id.

**A receipt** is ``{game_id, version, hash}`` (what a command answers) plus ``key_id``,
``signed_at`` and ``signature``. The signature is Ed25519 over these exact bytes (UTF-8)::

    tablestream-receipt-v1\\n<key id>\\n<game id>\\n<version>\\n<hash>\\n<signed at>\\n

where ``<version>`` and ``<signed at>`` are decimal integers without sign or leading zeros and
``<hash>`` is the chain hash as 64 lower-case hex digits. ``signature`` is the standard base64
(RFC 4648 section 4, padded) of the 64 signature bytes. A receipt verifies when its key is known,
``signed_at`` lies in the key's validity period and the signature checks.

**Signed notes** follow https://c2sp.org/signed-note with Ed25519 (signature type 0x01): a note is
its text (ending in a newline), a blank line and lines ``— <name> base64(key hash || signature)``;
the key hash is the first 4 bytes of SHA-256(name || 0x0A || 0x01 || public key). A verifier key
("vkey") is ``<name>+<key hash, 8 hex>+base64(0x01 || public key)``; a signer key (the format of
golang.org/x/mod/sumdb/note) is ``PRIVATE+KEY+<name>+<key hash>+base64(0x01 || private seed)``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

ALGORITHM = "Ed25519"
RECEIPT_DOMAIN = "tablestream-receipt-v1"
ED25519_TYPE = 0x01  # the signed-note signature type of plain Ed25519
DEFAULT_KEY_NAME = "tablestream"  # a note key name when the settings give none
ROTATION_OVERLAP_SECONDS = 120  # a rotated key still signs this long, while processes reload the ring

_HASH = re.compile(r"[0-9a-f]{64}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    """Strict standard base64 (padded, no stray characters); ValueError otherwise."""
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as error:
        raise ValueError(f"not base64: {text!r}") from error


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def raw_private(key: Ed25519PrivateKey) -> bytes:
    return key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())


def key_id(public_key: bytes) -> str:
    """The id of a raw 32-byte Ed25519 public key: SHA-256(public key)[:8] in hex."""
    return hashlib.sha256(public_key).hexdigest()[:16]


# -- keys and the key ring ----------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicKey:
    """A verification key with its validity period (unix seconds; ``not_after`` None: current)."""

    key_id: str
    public_key: bytes  # raw 32 bytes
    not_before: int
    not_after: int | None
    name: str = DEFAULT_KEY_NAME  # its signed-note key name

    def valid_at(self, when: int) -> bool:
        return self.not_before <= when and (self.not_after is None or when < self.not_after)

    def verify(self, signature: bytes, message: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public_key).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True

    def document(self) -> dict[str, Any]:
        """Its public JSON (the well-known URL, exports): id, algorithm, key, period, note vkey."""
        return {
            "key_id": self.key_id,
            "algorithm": ALGORITHM,
            "public_key": _b64(self.public_key),
            "not_before": self.not_before,
            "not_after": self.not_after,
            "name": self.name,
            "vkey": vkey(self.name, self.public_key),
        }

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> PublicKey:
        """The inverse of ``document``; ValueError when a field is missing or malformed, or when the
        id does not belong to the key."""
        try:
            public = _unb64(doc["public_key"])
            kid, not_before, not_after = doc["key_id"], doc["not_before"], doc["not_after"]
            name = doc.get("name", DEFAULT_KEY_NAME)
        except (KeyError, TypeError) as error:
            raise ValueError(
                f"a key document needs key_id, public_key, not_before, not_after: {error}"
            ) from None
        if doc.get("algorithm", ALGORITHM) != ALGORITHM or len(public) != 32:
            raise ValueError(f"key {kid!r} is not a 32-byte {ALGORITHM} key")
        if kid != key_id(public):
            raise ValueError(f"key id {kid!r} does not belong to its public key")
        if not isinstance(not_before, int) or not (not_after is None or isinstance(not_after, int)):
            raise ValueError(f"key {kid!r}: not_before and not_after are unix seconds")
        return cls(kid, public, not_before, not_after, check_key_name(name))


@dataclass(frozen=True)
class SigningKey:
    """A private key and its public half (id, period)."""

    public: PublicKey
    private: Ed25519PrivateKey

    @property
    def key_id(self) -> str:
        return self.public.key_id

    @classmethod
    def generate(cls, now: int, name: str = DEFAULT_KEY_NAME) -> SigningKey:
        private = Ed25519PrivateKey.generate()
        public = raw_public(private.public_key())
        return cls(PublicKey(key_id(public), public, now, None, check_key_name(name)), private)

    def sign(self, message: bytes) -> bytes:
        return self.private.sign(message)


@dataclass(frozen=True)
class KeyRing:
    """Every key the service ever signed with, oldest first; the last one signs."""

    keys: tuple[SigningKey, ...]

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("a key ring holds at least one key")

    @classmethod
    def generate(cls, now: int, name: str = DEFAULT_KEY_NAME) -> KeyRing:
        return cls((SigningKey.generate(now, name),))

    @property
    def current(self) -> SigningKey:
        return self.keys[-1]

    def public_keys(self) -> list[PublicKey]:
        return [key.public for key in self.keys]

    def rotate(self, now: int, overlap: int = ROTATION_OVERLAP_SECONDS, name: str | None = None) -> KeyRing:
        """A new current key valid from ``now``; the old one's period closes at ``now + overlap`` (so
        processes that have not reloaded the ring yet still sign validly). Keys stay forever."""
        old = self.current
        closed = replace(old, public=replace(old.public, not_after=now + overlap))
        fresh = SigningKey.generate(now, old.public.name if name is None else name)
        return KeyRing((*self.keys[:-1], closed, fresh))

    def merged(self, other: KeyRing, now: int) -> KeyRing:
        """This ring with ``other``'s keys it lacks (a restored backup's), oldest first; the newest
        key stays the current one, and every other key still open is closed at ``now``."""
        mine = {key.key_id for key in self.keys}
        keys = sorted(
            [*self.keys, *(k for k in other.keys if k.key_id not in mine)], key=lambda k: k.public.not_before
        )
        closed = [
            key
            if key.public.not_after is not None
            else replace(key, public=replace(key.public, not_after=now))
            for key in keys[:-1]
        ]
        return KeyRing((*closed, keys[-1]))

    def public_document(self) -> dict[str, Any]:
        """The JSON served at ``/.well-known/tablestream-keys`` and put in exports."""
        return {
            "algorithm": ALGORITHM,
            "current": self.current.key_id,
            "keys": [k.document() for k in self.public_keys()],
        }

    def to_secret(self) -> str:
        """The ring as JSON with its private seeds (the server's secret: never served)."""
        return json.dumps(
            [{**key.public.document(), "private_key": _b64(raw_private(key.private))} for key in self.keys],
            separators=(",", ":"),
        )

    @classmethod
    def from_secret(cls, text: str | bytes) -> KeyRing:
        keys = []
        for doc in json.loads(text):
            public = PublicKey.from_document(doc)
            private = Ed25519PrivateKey.from_private_bytes(_unb64(doc["private_key"]))
            if raw_public(private.public_key()) != public.public_key:
                raise ValueError(f"key {public.key_id}: the private key does not match the public key")
            keys.append(SigningKey(public, private))
        return cls(tuple(keys))


def public_keys_from_document(doc: Mapping[str, Any]) -> list[PublicKey]:
    """The keys of a ``public_document`` (as served or exported); ValueError when malformed."""
    keys = doc.get("keys") if isinstance(doc, Mapping) else None
    if not isinstance(keys, list):
        raise ValueError("a keys document has a list of keys")
    return [PublicKey.from_document(key) for key in keys]


# -- receipts -----------------------------------------------------------------------------------------


def receipt_message(key_id: str, game_id: str, version: int, hash_hex: str, signed_at: int) -> bytes:
    """The exact bytes a receipt's signature covers (module docstring)."""
    return f"{RECEIPT_DOMAIN}\n{key_id}\n{game_id}\n{version}\n{hash_hex}\n{signed_at}\n".encode()


def sign_receipt(receipt: Mapping[str, Any], key: SigningKey, now: int) -> dict[str, Any]:
    """``receipt`` (game_id, version, hash) with ``key_id``, ``signed_at`` and ``signature`` added."""
    message = receipt_message(key.key_id, receipt["game_id"], receipt["version"], receipt["hash"], now)
    return {**receipt, "key_id": key.key_id, "signed_at": now, "signature": _b64(key.sign(message))}


class ReceiptCheck(StrEnum):
    """What ``verify_receipt`` says of one receipt."""

    OK = "ok"
    MALFORMED = "malformed"  # a field is missing or of the wrong shape
    UNKNOWN_KEY = "unknown_key"  # no key with its key id
    KEY_NOT_VALID = "key_not_valid"  # signed_at outside the key's validity period
    BAD_SIGNATURE = "bad_signature"  # the key is known and valid, the signature does not check: forged


def verify_receipt(receipt: Mapping[str, Any], keys: Iterable[PublicKey]) -> ReceiptCheck:
    """Check one signed receipt against the service's public keys (it says nothing about whether
    the history holds it: that is the export's check)."""
    try:
        kid, game_id, version = receipt["key_id"], receipt["game_id"], receipt["version"]
        hash_hex, signed_at, signature = receipt["hash"], receipt["signed_at"], _unb64(receipt["signature"])
    except (KeyError, TypeError, ValueError):
        return ReceiptCheck.MALFORMED
    if not (
        isinstance(kid, str)
        and _KEY_ID.fullmatch(kid)
        and isinstance(game_id, str)
        and game_id
        and "\n" not in game_id
        and type(version) is int
        and version >= 0
        and isinstance(hash_hex, str)
        and _HASH.fullmatch(hash_hex)
        and type(signed_at) is int
        and len(signature) == 64
    ):
        return ReceiptCheck.MALFORMED
    key = next((k for k in keys if k.key_id == kid), None)
    if key is None:
        return ReceiptCheck.UNKNOWN_KEY
    if not key.valid_at(signed_at):
        return ReceiptCheck.KEY_NOT_VALID
    if not key.verify(signature, receipt_message(kid, game_id, version, hash_hex, signed_at)):
        return ReceiptCheck.BAD_SIGNATURE
    return ReceiptCheck.OK


# -- C2SP signed notes ------------------------------------------------------------------------------


class NoteError(ValueError):
    """A note that is malformed, or that no known key signs, or that a known key's signature fails."""


@dataclass(frozen=True)
class NoteVerifier:
    """A known note key: its name, 4-byte key hash (an int) and raw Ed25519 public key."""

    name: str
    key_hash: int
    public_key: bytes


@dataclass(frozen=True)
class NoteSignature:
    """One signature line of a note: the signer's name, key hash and the signature bytes after it."""

    name: str
    key_hash: int
    signature: bytes


def check_key_name(name: str) -> str:
    """``name`` when it can name a note key (non-empty, no spaces, no '+'); ValueError otherwise."""
    if not name or "+" in name or any(c.isspace() for c in name) or not name.isprintable():
        raise ValueError(f"a note key name is non-empty, without spaces or '+': {name!r}")
    return name


def key_hash(name: str, public_key: bytes, signature_type: int = ED25519_TYPE) -> int:
    """SHA-256(name || 0x0A || type || public key)[:4] as a big-endian uint32."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([signature_type]) + public_key).digest()
    return int.from_bytes(digest[:4], "big")


def vkey(name: str, public_key: bytes) -> str:
    """The verifier key string ``<name>+<hash hex>+base64(0x01 || public key)``."""
    return (
        f"{check_key_name(name)}+{key_hash(name, public_key):08x}+{_b64(bytes([ED25519_TYPE]) + public_key)}"
    )


def parse_vkey(text: str) -> NoteVerifier:
    """A verifier key string back to its parts; NoteError when malformed or inconsistent."""
    name, _, rest = text.partition("+")
    hash_hex, _, material = rest.partition("+")
    try:
        check_key_name(name)
        raw = _unb64(material)
    except ValueError as error:
        raise NoteError(f"malformed verifier key {text!r}: {error}") from None
    if not re.fullmatch(r"[0-9a-f]{8}", hash_hex) or len(raw) != 33 or raw[0] != ED25519_TYPE:
        raise NoteError(f"malformed verifier key {text!r}: not an Ed25519 key")
    if key_hash(name, raw[1:]) != int(hash_hex, 16):
        raise NoteError(f"verifier key {text!r}: its hash does not match its name and key")
    return NoteVerifier(name, int(hash_hex, 16), raw[1:])


def signer_key(name: str, private_key: Ed25519PrivateKey) -> str:
    """The signer key string ``PRIVATE+KEY+<name>+<hash>+base64(0x01 || seed)`` (keep it secret)."""
    public = raw_public(private_key.public_key())
    material = _b64(bytes([ED25519_TYPE]) + raw_private(private_key))
    return f"PRIVATE+KEY+{check_key_name(name)}+{key_hash(name, public):08x}+{material}"


def parse_signer_key(text: str) -> tuple[str, Ed25519PrivateKey]:
    """A signer key string back to its name and private key; NoteError when malformed."""
    head, _, rest = text.partition("PRIVATE+KEY+")
    name, _, rest = rest.partition("+")
    hash_hex, _, material = rest.partition("+")
    try:
        if head:
            raise ValueError("it does not start with PRIVATE+KEY+")
        check_key_name(name)
        raw = _unb64(material)
        if len(raw) != 33 or raw[0] != ED25519_TYPE:
            raise ValueError("not an Ed25519 key")
        private = Ed25519PrivateKey.from_private_bytes(raw[1:])
    except ValueError as error:
        raise NoteError(f"malformed signer key: {error}") from None
    if f"{key_hash(name, raw_public(private.public_key())):08x}" != hash_hex:
        raise NoteError("signer key: its hash does not match its name and key")
    return name, private


def _check_text(text: str) -> None:
    if not text.endswith("\n") or any(c < " " and c != "\n" for c in text):
        raise NoteError("a note text ends in a newline and holds no control characters but newlines")


def sign_note(text: str, name: str, private_key: Ed25519PrivateKey) -> str:
    """The signed note: ``text``, a blank line, and the signature line of ``name``'s key."""
    _check_text(text)
    kh = key_hash(check_key_name(name), raw_public(private_key.public_key()))
    blob = kh.to_bytes(4, "big") + private_key.sign(text.encode())
    return f"{text}\n— {name} {_b64(blob)}\n"


def add_note_signature(note: str, name: str, private_key: Ed25519PrivateKey) -> str:
    """``note`` (already signed) with one more signature line by ``name``'s key over its text."""
    text, _ = parse_note(note)
    line = sign_note(text, name, private_key)[len(text) + 1 :]
    return note + line


def parse_note(note: str) -> tuple[str, list[NoteSignature]]:
    """Split a signed note into its text and its signature lines, without verifying anything (for
    signature types other than 0x01, such as tlog-cosignature's 0x04). NoteError when malformed."""
    if any(c < " " and c != "\n" for c in note) or not note.endswith("\n"):
        raise NoteError("a signed note ends in a newline and holds no control characters but newlines")
    split = note.rfind("\n\n")
    if split < 0:
        raise NoteError("a signed note has a blank line between its text and its signatures")
    text, lines = note[: split + 1], note[split + 2 :].splitlines()
    if not lines:
        raise NoteError("a signed note has at least one signature line")
    signatures = []
    for line in lines:
        if not line.startswith("— "):
            raise NoteError(f"not a signature line: {line!r}")
        name, space, encoded = line[2:].partition(" ")
        try:
            check_key_name(name)
            blob = _unb64(encoded) if space else b""
        except ValueError:
            raise NoteError(f"malformed signature line: {line!r}") from None
        if len(blob) < 5:
            raise NoteError(f"signature line too short: {line!r}")
        signatures.append(NoteSignature(name, int.from_bytes(blob[:4], "big"), blob[4:]))
    return text, signatures


def open_note(note: str, verifiers: Iterable[NoteVerifier | str]) -> tuple[str, list[str]]:
    """The text of a signed note and the names of the known keys whose signatures verify.

    Signatures by unknown keys (another name or another key hash) are ignored, as the spec says.
    NoteError when the note is malformed, when a known key's signature fails, or when no known key
    signed it. ``verifiers`` are ``NoteVerifier`` values or vkey strings."""
    known: dict[tuple[str, int], NoteVerifier] = {}
    for verifier in verifiers:
        v = parse_vkey(verifier) if isinstance(verifier, str) else verifier
        known[(v.name, v.key_hash)] = v
    text, signatures = parse_note(note)
    signed: list[str] = []
    for signature in signatures:
        found = known.get((signature.name, signature.key_hash))
        if found is None:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(found.public_key).verify(signature.signature, text.encode())
        except (InvalidSignature, ValueError):
            raise NoteError(f"the signature of {signature.name} does not verify") from None
        if signature.name not in signed:
            signed.append(signature.name)
    if not signed:
        raise NoteError("no known key signed this note")
    return text, signed
