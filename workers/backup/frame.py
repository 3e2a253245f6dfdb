"""The frame every part of a backup shares: the file's format, its signed manifest, writing and
reading its lines, and the store's nodes as the parts read and write them.

A backup is one JSON Lines file: a ``header`` line (format, when, and that the file holds secrets),
the record lines of each kind of data (the package's docstring lists them, each kind's module says
what its line holds), and an ``end`` line with the counts, so that a truncated file is refused, and
the signed manifest.

**The file is integrity-checked as a whole** (format ``tablestream-backup/2``). The end line
carries a ``manifest``: the SHA-256 of the header line (``header``); for each record line between
the header and the end, in order, its kind, its id (a game's or account's id, a finish's sequence
number, none for the lines a file holds once) and the SHA-256 of its bytes (``records``); their
number (``count``); and a chain hash over them (``chain``: ``c0 = SHA-256("tablestream-backup-v2\n"
+ header hash hex + "\n")``, ``ci = SHA-256(ci-1 || line hash i)``, both as raw bytes). Its
``signature`` is Ed25519, by the current key of the service's receipt key ring
(``services.fairness.signing.KeyRing``), over the UTF-8 bytes
``tablestream-backup-v2\n<key id>\n<chain>\n<count>\n<signed at>\n``. The chain is the file's
fingerprint, which ``export-all`` prints. Before anything in the file is believed, ``import-all``
reads it once and refuses, naming each, a line whose hash is not listed (a changed byte, or a line
from another backup), a listed line the file lacks (a removed one: adjusting the end's counts does not
help), lines out of the listed order, a repeated line, a header or end line changed, a line after the
end, a chain that is not its records', and a signature that does not verify; nothing is written.

What the signature protects against, honestly: the file carries the ring's private keys (the
``signing_keys`` line, so that receipts verify after a restore), so anyone who holds the file can
change it and sign it again. The hashes and the manifest find corruption, truncation, a removed,
repeated or reordered line and lines mixed from two backups; the signature then shows the manifest
was made by a holder of the service's keys. ``import-all`` checks it with the target's own key of
that id when the target's ring holds it (a restore into the service that made the backup), so a
backup of another service or one made up with another key is refused; a target that holds games or
accounts and a ring without that key refuses it too. Only a target that holds no game and no
account (a new store, whose ring an API just made, or none) checks it with the backup's own key:
then it shows only that the file is whole, not who made it. Against someone who can read and write
the backup, the defence is to keep the fingerprint apart from the file (``import-all --fingerprint``
refuses any other file) and the file private. A ``tablestream-backup/1`` file has no manifest; it
is read only with ``--accept-format-1``, so that a file cut down to the old format is not taken for
one. The games, chats and disputes are then still each verified (``workers.backup.restore``): a
rewritten game must also pass the offline verifier with its own secret.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from services.fairness.signing import KeyRing, PublicKey
from services.store.event_store import SyncEventStore
from services.store.keys import PREFIX
from services.store.requests import text
from services.store.signing_keys import load_secret

FORMAT = "tablestream-backup/2"

FORMAT_1 = "tablestream-backup/1"  # before the signed manifest: read only when asked

SIGNATURE_DOMAIN = "tablestream-backup-v2"

SUFFIX = ".jsonl"

FILE_PREFIX = "tablestream-backup-"

SCAN_COUNT = 500

LOG_PAGE = 1000


class BackupError(Exception):
    """A backup that cannot be read or restored; ``problems`` names each game or record."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)

    def render(self) -> str:
        return "\n".join([self.args[0], *(f"  - {p}" for p in self.problems)])

    def __str__(self) -> str:
        return self.render()


# -- where a backup file is ----------------------------------------------------------------------------------


def export_path(target: str | Path, now: dt.datetime | None = None) -> Path:
    """``target`` itself, or a new dated file inside it when it is a directory: one that exists, or
    one named with a trailing slash, made here (mode 0700) when it does not exist yet."""
    path = Path(target)
    if str(target).endswith(os.sep) and not path.exists():
        path.mkdir(mode=0o700, parents=True)
    if path.is_dir():
        stamp = (now or dt.datetime.now(dt.UTC)).strftime("%Y%m%dT%H%M%S%fZ")
        return path / f"{FILE_PREFIX}{stamp}{SUFFIX}"
    if not path.parent.is_dir():
        raise BackupError(
            f"{path.parent} is not a directory: name an existing directory, or a new one with a "
            f"trailing slash ({path}/) to have it made"
        )
    return path


def import_path(source: str | Path) -> Path:
    """``source`` itself, or the newest backup file inside it when it is a directory."""
    path = Path(source)
    if not path.is_dir():
        return path
    found = sorted(path.glob(f"{FILE_PREFIX}*{SUFFIX}"))
    if not found:
        raise BackupError(f"{path} holds no {FILE_PREFIX}*{SUFFIX} file")
    return found[-1]


# -- the store's nodes ---------------------------------------------------------------------------------------


def primaries(store: SyncEventStore) -> list[redis.Redis]:
    client = store.redis
    if isinstance(client, redis.RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]  # type: ignore[no-untyped-call]
    return [client]


def node_of(store: SyncEventStore, key: str) -> redis.Redis:
    client = store.redis
    if isinstance(client, redis.RedisCluster):
        return client.get_redis_connection(client.get_node_from_key(key))  # type: ignore[no-untyped-call]
    return client


def scan(store: SyncEventStore, pattern: str, head: str, tail: str) -> Iterator[str]:
    """The ids between ``head`` and ``tail`` in every key matching ``pattern``, on every primary."""
    for node in primaries(store):
        for key in node.scan_iter(match=pattern, count=SCAN_COUNT):
            name = text(key)
            if name.startswith(head) and name.endswith(tail):
                middle = name[len(head) : -len(tail)]
                if middle and "{" not in middle and "}" not in middle:
                    yield middle


def hash_text(reply: Mapping[bytes, bytes]) -> dict[str, str]:
    return {text(k): text(v) for k, v in sorted(reply.items())}


# -- lines ---------------------------------------------------------------------------------------------------


def encode_line(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def _header(first: bytes) -> dict[str, Any] | None:
    """A backup file's first line as its header object (``None``: not one)."""
    try:
        header = json.loads(first)
    except ValueError:
        return None
    return header if isinstance(header, dict) else None


def records(path: Path) -> Iterator[dict[str, Any]]:
    """The file's records after its header, checking the header first and the end's counts last."""
    counts = {"game": 0, "account": 0, "finish": 0, "signing_keys": 0, "tlog": 0, "operator": 0}
    with path.open("rb") as source:
        header = _header(source.readline())
        if header is None or header.get("format") not in (FORMAT, FORMAT_1):
            raise BackupError(f"{path} is not a {FORMAT} file")
        for number, raw in enumerate(source, start=2):
            try:
                record = json.loads(raw)
            except ValueError as exc:
                raise BackupError(f"{path} line {number} is not JSON: {exc}") from None
            kind = record.get("kind") if isinstance(record, dict) else None
            if kind == "end":
                expected = {"game": record.get("games"), "account": record.get("accounts"),
                            "finish": record.get("finishes"),
                            "signing_keys": record.get("signing_keys", 0),
                            "tlog": record.get("tlog", 0),
                            "operator": record.get("operator", 0)}  # fmt: skip
                if expected != counts:
                    raise BackupError(f"{path}: the end line counts {expected}, the file holds {counts}")
                if source.readline():
                    raise BackupError(f"{path}: a line follows the end line; nothing may be added after it")
                return
            if kind not in counts:
                raise BackupError(f"{path} line {number}: unknown record kind {kind!r}")
            counts[kind] += 1
            yield record
    raise BackupError(f"{path} has no end line: the backup is truncated")


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# -- the manifest: the file integrity-checked as a whole -----------------------------------------------------


def record_key(record: Mapping[str, Any]) -> tuple[str, str | None]:
    """A record's kind and id, as the manifest lists it: a game's or account's id, a finish's
    sequence number, and no id for the lines a backup holds once (signing keys, log, operator)."""
    kind = str(record.get("kind"))
    if kind in ("game", "account"):
        return kind, str(record.get("id"))
    if kind == "finish":
        return kind, str(record.get("seq"))
    return kind, None


def record_name(kind: str, record_id: str | None) -> str:
    """How a sentence names a record: "game g3-skull", "finish 4", "the signing keys"."""
    if record_id is not None:
        return f"{kind} {record_id}"
    return {
        "signing_keys": "the signing keys",
        "tlog": "the public log",
        "operator": "the operator records",
    }.get(kind, f"a {kind!r} record")


def _chain_start(header_sha: str) -> bytes:
    return hashlib.sha256(f"{SIGNATURE_DOMAIN}\n{header_sha}\n".encode()).digest()


def _chain_next(chain: bytes, line_sha: str) -> bytes:
    return hashlib.sha256(chain + bytes.fromhex(line_sha)).digest()


def signature_message(key_id: str, chain: str, count: int, signed_at: int) -> bytes:
    """The exact bytes a backup's signature covers (the module's docstring)."""
    return f"{SIGNATURE_DOMAIN}\n{key_id}\n{chain}\n{count}\n{signed_at}\n".encode()


class Manifest:
    """The manifest of a file being written or read: each record line's kind, id and SHA-256, in
    order, and the chain hash over the header and those hashes."""

    def __init__(self, header_line: bytes) -> None:
        self.header = hashlib.sha256(header_line).hexdigest()
        self.records: list[tuple[str, str | None, str]] = []
        self._chain = _chain_start(self.header)

    def add(self, record: Mapping[str, Any], line: bytes) -> None:
        digest = hashlib.sha256(line).hexdigest()
        self.records.append((*record_key(record), digest))
        self._chain = _chain_next(self._chain, digest)

    @property
    def chain(self) -> str:
        return self._chain.hex()

    def signed(self, ring: KeyRing, signed_at: int) -> dict[str, Any]:
        """The end line's ``manifest`` and ``signature``, signed with the ring's current key."""
        key = ring.current
        message = signature_message(key.key_id, self.chain, len(self.records), signed_at)
        return {
            "manifest": {
                "header": self.header,
                "records": [list(item) for item in self.records],
                "count": len(self.records),
                "chain": self.chain,
            },
            "signature": {
                "key_id": key.key_id,
                "signed_at": signed_at,
                "signature": base64.b64encode(key.sign(message)).decode("ascii"),
            },
        }


@dataclass(frozen=True)
class Sealed:
    """What the integrity check found: the file's format, its fingerprint (the manifest's chain
    hash), the key that signed it and where the import took that key from."""

    format: str
    fingerprint: str | None = None
    key_id: str | None = None
    checked_with: str = ""  # "target" (its own ring) or "file" (the backup's own ring)


def _listed(manifest: Any) -> list[tuple[str, str | None, str]] | None:
    """The manifest's records, or ``None`` when it is not shaped as the export writes it."""
    if not (
        isinstance(manifest, dict)
        and isinstance(manifest.get("header"), str)
        and isinstance(manifest.get("chain"), str)
        and type(manifest.get("count")) is int
        and isinstance(manifest.get("records"), list)
    ):
        return None
    listed = []
    for item in manifest["records"]:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and isinstance(item[0], str)
            and (item[1] is None or isinstance(item[1], str))
            and isinstance(item[2], str)
            and re.fullmatch(r"[0-9a-f]{64}", item[2])
        ):
            return None
        listed.append((item[0], item[1], item[2]))
    return listed


def _order_problems(
    found: Sequence[tuple[str, str | None, str]], listed: Sequence[tuple[str, str | None, str]]
) -> list[str]:
    """Sentences naming each line the file holds that the manifest does not list, each listed line
    the file lacks, and, when the lines are the listed ones, where their order differs."""
    first_line = 2  # the header is line 1
    listed_hashes = {digest for _, _, digest in listed}
    found_hashes = {digest for _, _, digest in found}
    problems = [
        f"line {n} ({record_name(kind, rid)}) is not a line of this backup: its SHA-256 is not in the "
        "signed manifest (changed since the export, or taken from another backup)"
        for n, (kind, rid, digest) in enumerate(found, start=first_line)
        if digest not in listed_hashes
    ]
    problems += [
        f"{record_name(kind, rid)}, record {n} of the signed manifest, is missing from the file "
        "(its line was removed or changed)"
        for n, (kind, rid, digest) in enumerate(listed, start=1)
        if digest not in found_hashes
    ]
    if not problems:
        problems = [
            f"line {n} holds {record_name(*was[:2])}, the signed manifest lists {record_name(*should[:2])} "
            "there: the lines were reordered"
            for n, (was, should) in enumerate(zip(found, listed, strict=False), start=first_line)
            if was[2] != should[2]
        ]
    if not problems and len(found) != len(listed):
        problems = [
            f"the file holds {len(found)} record lines, the signed manifest lists {len(listed)}: "
            "a line was repeated"
        ]
    return problems[:10]


def _holds_data(store: SyncEventStore) -> bool:
    """Whether the target holds any game or account: any event stream, a game's (``{<id>}``) or an
    account's (``{acct:<id>}``)."""
    return any(True for _ in scan(store, f"{PREFIX}:{{*}}:events", f"{PREFIX}:{{", "}:events"))


def check_integrity(
    store: SyncEventStore, path: Path, fingerprint: str | None = None, accept_format_1: bool = False
) -> Sealed:
    """Check the file as a whole before anything in it is believed: every line is the one the
    manifest lists at its place, the manifest's chain is the hash of its records, and its signature
    verifies with the target's own key of that id (or, when the target is a new store that never
    held it, the backup's own); ``fingerprint``, when given, must be the manifest's chain. Raises
    ``BackupError`` naming each problem; reads, never writes."""
    problems: list[str] = []
    with path.open("rb") as source:
        first = source.readline()
        header = _header(first)
        version = None if header is None else header.get("format")
        if version == FORMAT_1:
            if accept_format_1:
                return Sealed(FORMAT_1)
            raise BackupError(
                f"{path} is a {FORMAT_1} file, made before backups carried a signed manifest, so a "
                "changed, removed or added line could not be told from the real ones; import it with "
                "--accept-format-1 only if the file never left your hands since it was made"
            )
        if version != FORMAT:
            raise BackupError(f"{path} is not a {FORMAT} file")
        manifest = Manifest(first)
        end: dict[str, Any] | None = None
        ring_record: dict[str, Any] | None = None
        for number, raw in enumerate(source, start=2):
            try:
                record = json.loads(raw)
            except ValueError as exc:
                raise BackupError(f"{path} line {number} is not JSON: {exc}") from None
            if not isinstance(record, dict):
                raise BackupError(f"{path} line {number} is not a record")
            if end is not None:
                raise BackupError(
                    f"{path}: line {number} follows the end line; nothing may be added after it"
                )
            if record.get("kind") == "end":
                end = record
                if encode_line(record) != raw:
                    problems.append("the end line is not as the export wrote it (a byte of it was changed)")
                continue
            manifest.add(record, raw)
            if record.get("kind") == "signing_keys":
                ring_record = record
    if end is None:
        raise BackupError(f"{path} has no end line: the backup is truncated")
    listed = _listed(end.get("manifest"))
    if listed is None:
        raise BackupError(
            f"{path}: refused, nothing was written", [*problems, "the end line carries no signed manifest"]
        )
    claimed = end["manifest"]
    if claimed["header"] != manifest.header:
        problems.append("the header line is not the one the backup was made with")
    problems += _order_problems(manifest.records, listed)
    if claimed["count"] != len(listed):
        problems.append(f"the manifest counts {claimed['count']} records but lists {len(listed)}")
    chain = _chain_start(claimed["header"])
    for _, _, digest in listed:
        chain = _chain_next(chain, digest)
    if chain.hex() != claimed["chain"]:
        problems.append("the manifest's chain hash is not the hash of its records in order")
    sealed, signature_problems = _check_signature(store, end.get("signature"), claimed, ring_record)
    problems += signature_problems
    if fingerprint is not None and fingerprint.lower() != claimed["chain"]:
        problems.append(
            f"the backup's fingerprint is {claimed['chain']}, not the {fingerprint} you gave: "
            "this is not the backup that was recorded"
        )
    if problems:
        raise BackupError(f"{path}: refused, nothing was written", problems)
    return sealed


def _check_signature(
    store: SyncEventStore, signature: Any, manifest: Mapping[str, Any], ring_record: Mapping[str, Any] | None
) -> tuple[Sealed, list[str]]:
    """The manifest's signature checked with the key it names: the target's own when its ring holds
    that key; else, when the target holds no game and no account (a new store, whose ring an API
    just made), the backup's own; else refused."""
    unsigned = Sealed(FORMAT, manifest["chain"])
    if not (
        isinstance(signature, dict)
        and isinstance(signature.get("key_id"), str)
        and type(signature.get("signed_at")) is int
        and isinstance(signature.get("signature"), str)
    ):
        return unsigned, ["the manifest is not signed"]
    key_id = signature["key_id"]
    raw = store.run(load_secret())
    own = None if raw is None else KeyRing.from_secret(raw)
    key: PublicKey | None = None
    checked_with = "target"
    if own is not None:
        key = next((k for k in own.public_keys() if k.key_id == key_id), None)
    if key is None:
        if own is not None and _holds_data(store):
            return unsigned, [
                f"the manifest is signed with key {key_id}, which this service's signing keys do not hold, "
                "and this service holds games or accounts: a backup of another service, or one made up"
            ]
        checked_with = "file"
        try:
            carried = [] if ring_record is None else ring_of(ring_record).public_keys()
        except (TypeError, ValueError, KeyError):
            carried = []
        key = next((k for k in carried if k.key_id == key_id), None)
        if key is None:
            return unsigned, [
                f"the manifest is signed with key {key_id}, which neither the target nor the backup holds"
            ]
    message = signature_message(key_id, manifest["chain"], manifest["count"], signature["signed_at"])
    try:
        raw_signature = base64.b64decode(signature["signature"], validate=True)
    except ValueError:
        raw_signature = b""
    if not key.verify(raw_signature, message):
        return unsigned, [f"the manifest's signature does not verify with key {key_id}"]
    return Sealed(FORMAT, manifest["chain"], key_id, checked_with), []


def ring_of(record: Mapping[str, Any]) -> KeyRing:
    return KeyRing.from_secret(json.dumps(record["ring"]))
