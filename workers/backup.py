"""Logical backup and restore of the event store: ``tablestream export-all`` / ``import-all``.

A backup is one JSON Lines file holding what the store cannot derive (the source of truth) and
nothing it can (docs/operations.md, "Backups and restore", lists both):

- a ``header`` line (format, when, and that the file holds secrets);
- one ``finish`` line per entry of the ratings' finish log (game id and the worker's finish time:
  the order and clock the ratings fold replays; the only ratings input outside the game streams),
  read first, so that every game it names is finished in its own snapshot, read later;
- one ``game`` line per game, in the lobby's order, then one per game archived out of Redis
  (``services.store.archive``; ``read_archived_game``: the same record): every stream entry exactly
  as stored (``data`` as UTF-8 text, its ``hash``), the game's secret (seed root and master: never
  public), the seat tokens' SHA-256 digests and the command dedup records (``seat_commands``,
  ``commands``, ``seats``), so that a restored running game goes on with the same seat tokens and
  the same idempotent retries; and, for a table with a chat, its chat stream as the export's chat
  section (``chat``) with its state hash (``chat_state``), checked by the chat verifier on import;
  and its disputes (``disputes``: each one's id, when it was opened and its events as stored), each
  checked on import to be one dispute of this game, opened once and resolved at most once, last;
- one ``account`` line per account: its event stream as stored (name, Argon2id password hash and
  token digests are events in it: restored players stay logged in) and when it last took a seat;
- one ``operator`` line when the console holds anything: the operators' account ids, the
  operators' audit log and the players' chat reports (each entry with its stream id, which the
  console and the handled notes name it by) and the notes of reports handled; a restore adds
  what the target lacks and refuses one that would rewrite or reorder what it holds;
- one ``signing_keys`` line when the service has its receipt signing keys (``services.fairness.signing``:
  the key ring with its private seeds), so that receipts signed before the backup still verify
  against exports made after the restore; the restore merges it into any ring the target holds;
- one ``tlog`` line when the public log of game heads holds anything (``services.fairness.transparency``):
  its leaves in order, every published checkpoint and the witnesses' cosignatures; the tree's
  node hashes are recomputed from the leaves at the restore, and checked against every
  checkpoint's root (``workers.tlog_backup``);
- an ``end`` line with the counts, so that a truncated file is refused, and the signed manifest.

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
one. The games, chats and disputes are then still each verified as below: a rewritten game must
also pass the offline verifier with its own secret.

Export reads one game at a time (one ``MULTI`` on the game's node: a consistent snapshot of its
keys), scanning every primary of a Redis Cluster; memory stays one game's worth (and the list of
game ids, and the manifest: about 100 bytes a record). The file is written beside its final name
with mode 0600 and renamed into place once complete.

``--data-dir DIR`` runs a command on a stopped ``tablestream serve``'s data directory: it takes the
directory's lock as ``serve`` does and starts its embedded Redis for the command alone, so that a
restore is written with no API and no worker running (docs/restore.md).

Import reads the file three times, a line at a time: the integrity check above, then two passes.
The first pass changes nothing: it verifies every
game with the offline verifier (``services.history.verify``: hash chain, records, rules re-run,
seeds, scores; a running game up to its unrevealed round) and checks its secret against the stream's
commitments, checks that every finish names a finished game of the file, and compares every game,
account, name and finish with what the target store already holds. Any tampered game or any conflict
refuses the whole import, naming each, with nothing written. The second pass writes what is missing
(each game in one ``MULTI`` guarded by ``WATCH``; an identical game is left alone, so importing
twice changes nothing), then rebuilds every projection from the streams alone: the ratings,
histories and leaderboards (``workers.ratings.rebuild``, in finish-log order), every game's views
and lobby entry (``workers.projector``), the lag and timer indexes
(``workers.sweeper.rebuild_indexes``), the accounts' retention index and their "Your tables" index
(the running tables where each account holds a seat), and the operators' list of open disputes.
A dispute the target holds is never overwritten: the backup's events must agree with the
stored ones as far as both go, and only the events the target lacks are written. Run it with the workers
stopped, like ``workers.ratings.rebuild``.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import hashlib
import itertools
import json
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import msgspec
import redis

from domain.accounts import AccountEvent, fold
from domain.disputes import DisputeOpened, DisputeResolved
from domain.disputes import fold as fold_dispute
from domain.fairness import SecretSeeds
from services.fairness.receipts import ensure_keys
from services.fairness.signing import KeyRing, PublicKey
from services.fairness.transparency.log import note_loggable_op
from services.history.chat_export import GENESIS, chat_problems, chat_section
from services.history.export import build_export
from services.history.folding import StateCache
from services.history.records import Entry
from services.history.replay import CorruptStream, replay
from services.history.verify import verify_export
from services.history.verify_report import SCORES
from services.operating.config import Settings
from services.store import accounts as store_accounts
from services.store import disputes as store_disputes
from services.store import retention
from services.store.archive import ArchivedGame
from services.store.chat import REPORTS, ChatKeys
from services.store.connection import PoolLimits, connect_sync, topology
from services.store.embedded import DataDirLocked, EmbeddedRedis, data_dir_lock
from services.store.event_store import SyncEventStore
from services.store.keys import (
    LOBBY,
    LOBBY_ORDER,
    PREFIX,
    RATINGS,
    TLOG,
    WAITING,
    account_seated_key,
    game_keys,
)
from services.store.operator import AUDIT, HANDLED, OPERATORS
from services.store.requests import Operation, clock_ms, index_call, text
from services.store.signing_keys import create_secret, load_secret, swap_secret
from services.store.your_tables import note_table
from workers import tlog_backup
from workers.name_index import index_names
from workers.projector import Projector
from workers.ratings import rebuild as rebuild_ratings
from workers.stores import settings_archive
from workers.sweeper import rebuild_indexes

FORMAT = "tablestream-backup/2"
FORMAT_1 = "tablestream-backup/1"  # before the signed manifest: read only when asked
SIGNATURE_DOMAIN = "tablestream-backup-v2"
SUFFIX = ".jsonl"
FILE_PREFIX = "tablestream-backup-"
SCAN_COUNT = 500
LOG_PAGE = 1000
GAME_HASHES = ("secret", "tokens", "seat_commands", "commands", "seats")
"""The game's hashes that are source, not projection (``services.store.keys.GameKeys``)."""

_account_decoder = msgspec.json.Decoder(AccountEvent)
ACCOUNT_ID = re.compile(r"[0-9a-f]{16}")


class BackupError(Exception):
    """A backup that cannot be read or restored; ``problems`` names each game or record."""

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)

    def render(self) -> str:
        return "\n".join([self.args[0], *(f"  - {p}" for p in self.problems)])

    def __str__(self) -> str:
        return self.render()


# -- where a backup file is -----------------------------------------------------------------------


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


# -- reading the store ----------------------------------------------------------------------------


def _primaries(store: SyncEventStore) -> list[redis.Redis]:
    client = store.redis
    if isinstance(client, redis.RedisCluster):
        return [client.get_redis_connection(node) for node in client.get_primaries()]  # type: ignore[no-untyped-call]
    return [client]


def _node_of(store: SyncEventStore, key: str) -> redis.Redis:
    client = store.redis
    if isinstance(client, redis.RedisCluster):
        return client.get_redis_connection(client.get_node_from_key(key))  # type: ignore[no-untyped-call]
    return client


def _scan(store: SyncEventStore, pattern: str, head: str, tail: str) -> Iterator[str]:
    """The ids between ``head`` and ``tail`` in every key matching ``pattern``, on every primary."""
    for node in _primaries(store):
        for key in node.scan_iter(match=pattern, count=SCAN_COUNT):
            name = text(key)
            if name.startswith(head) and name.endswith(tail):
                middle = name[len(head) : -len(tail)]
                if middle and "{" not in middle and "}" not in middle:
                    yield middle


def game_ids(store: SyncEventStore) -> list[str]:
    """Every game id (not the accounts' streams, whose tag is ``acct:<id>``), sorted."""
    found = _scan(store, f"{PREFIX}:{{*}}:events", f"{PREFIX}:{{", "}:events")
    return sorted({g for g in found if not g.startswith("acct:")})


def creation_order(store: SyncEventStore) -> list[str]:
    """Every game id, those the lobby has seen in its order (oldest first, so that an import in this
    order gives the restored lobby the same order), then the others by id."""
    stored = game_ids(store)
    listed = [text(g) for g in store.run(_lobby_order())]
    present = set(stored)
    ordered = [g for g in listed if g in present]
    seen = set(ordered)
    return ordered + [g for g in stored if g not in seen]


def _lobby_order() -> Operation[list[bytes]]:
    return (yield index_call("ZRANGE", LOBBY_ORDER, 0, -1))  # type: ignore[no-any-return]


def account_ids(store: SyncEventStore) -> list[str]:
    return sorted(set(_scan(store, f"{PREFIX}:{{acct:*}}:events", f"{PREFIX}:{{acct:", "}:events")))


def _hash_text(reply: Mapping[bytes, bytes]) -> dict[str, str]:
    return {text(k): text(v) for k, v in sorted(reply.items())}


def read_game(store: SyncEventStore, game_id: str) -> dict[str, Any] | None:
    """A game's backup record, read in one ``MULTI`` on its node (``None``: it has no stream)."""
    k = game_keys(game_id)
    pipe = _node_of(store, k.events).pipeline(transaction=True)
    pipe.xrange(k.events, "-", "+")
    for name in GAME_HASHES:
        pipe.hgetall(getattr(k, name))
    _read_beside(pipe, game_id)
    stream, *hashes, chat_stream, chat_state, opened = pipe.execute()
    if not stream:
        return None
    entries = []
    for expected, (stream_id, fields) in enumerate(stream, start=1):
        if text(stream_id) != f"0-{expected}":
            raise BackupError(f"game {game_id}: its stream is not contiguous at {text(stream_id)}")
        entries.append(
            {"version": expected, "hash": text(fields[b"h"]), "data": fields[b"d"].decode("utf-8")}
        )
    stored = {name: _hash_text(reply) for name, reply in zip(GAME_HASHES, hashes, strict=True)}
    return _game_record(store, game_id, entries, stored, chat_stream, chat_state, opened)


def read_archived_game(store: SyncEventStore, game: ArchivedGame) -> dict[str, Any]:
    """The backup record of a game archived out of Redis (``services.store.archive``), field for
    field as ``read_game`` gives it for a game in Redis: its stream, secret and command records from
    its archive file, its seat tokens, chat and disputes from Redis, where they stay."""
    k = game_keys(game.game_id)
    pipe = _node_of(store, k.tokens).pipeline(transaction=True)
    pipe.hgetall(k.tokens)
    _read_beside(pipe, game.game_id)
    tokens, chat_stream, chat_state, opened = pipe.execute()
    entries = [{"version": e.version, "hash": e.hash, "data": e.data.decode("utf-8")} for e in game.entries]
    archived = {"secret": game.secret, "seat_commands": game.seat_commands, "commands": game.commands,
                "seats": game.seats, "tokens": _hash_text(tokens)}  # fmt: skip
    stored = {name: dict(sorted(archived[name].items())) for name in GAME_HASHES}
    return _game_record(store, game.game_id, entries, stored, chat_stream, chat_state, opened)


def _read_beside(pipe: Any, game_id: str) -> None:
    """Queue the reads of what a game keeps beside its stream: its chat and its disputes' index."""
    chat = ChatKeys(game_id)
    pipe.xrange(chat.stream, "-", "+")
    pipe.hgetall(chat.state)
    pipe.zrange(store_disputes.index_key(game_id), 0, -1, withscores=True)


def _game_record(
    store: SyncEventStore,
    game_id: str,
    entries: list[dict[str, Any]],
    hashes: Mapping[str, dict[str, str]],
    chat_stream: Any,
    chat_state: Any,
    opened: Any,
) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "game", "id": game_id, "entries": entries, **hashes}
    if chat_stream or chat_state:  # the table's chat: source, beside the game's chain (never in it)
        stored = [(int(text(i).split("-")[1]), f[b"d"], text(f[b"h"])) for i, f in chat_stream]
        record["chat"] = chat_section(stored)
        record["chat_state"] = _hash_text(chat_state)
    if opened:  # its disputes: source too (a verdict is recorded nowhere else)
        record["disputes"] = _read_disputes(store, game_id, [(text(d), int(at)) for d, at in opened])
    return record


def _read_disputes(
    store: SyncEventStore, game_id: str, opened: Sequence[tuple[str, int]]
) -> list[dict[str, Any]]:
    """Each dispute's record: its id, when it was opened (ms) and its events as stored, oldest first;
    read in one ``MULTI`` (a dispute grows only at its end: a later event is the next read's)."""
    keys = [store_disputes.stream_key(game_id, dispute_id) for dispute_id, _ in opened]
    pipe = _node_of(store, keys[0]).pipeline(transaction=True)
    for key in keys:
        pipe.xrange(key, "-", "+")
    disputes = []
    for (dispute_id, at), stream in zip(opened, pipe.execute(), strict=True):
        events = []
        for expected, (stream_id, fields) in enumerate(stream, start=1):
            if text(stream_id) != f"0-{expected}":
                raise BackupError(f"dispute {dispute_id} of {game_id}: not contiguous at {text(stream_id)}")
            events.append(fields[b"d"].decode("utf-8"))
        disputes.append({"id": dispute_id, "opened_ms": at, "events": events})
    return disputes


def read_account(store: SyncEventStore, account_id: str) -> dict[str, Any] | None:
    events = store.run(store_accounts.account_events(account_id))
    if not events:
        return None
    seated = _node_of(store, account_seated_key(account_id)).get(account_seated_key(account_id))
    return {
        "kind": "account",
        "id": account_id,
        "events": [bytes(e).decode("utf-8") for e in events],
        "seated": None if seated is None else text(seated),
    }


def finish_log(store: SyncEventStore) -> Iterator[dict[str, Any]]:
    """The ratings' finish log, a page at a time."""
    node = _node_of(store, RATINGS.log)
    start = "-"
    while True:
        page: Any = node.xrange(RATINGS.log, start, "+", count=LOG_PAGE)
        for stream_id, fields in page:
            yield {"kind": "finish", "seq": int(text(stream_id).split("-")[1]), "game_id": text(fields[b"g"]),
                   "t": text(fields[b"t"])}  # fmt: skip
        if len(page) < LOG_PAGE:
            return
        start = "(" + text(page[-1][0])


OPERATOR_STREAMS = {"audit": AUDIT, "reports": REPORTS}
"""The console's streams a backup keeps (on the indexes' server), by their name in the file."""
STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


def _stream_entries(client: Any, key: str) -> Iterator[dict[str, Any]]:
    """A stream's entries, a page at a time: each its ``id`` and its ``fields`` as text."""
    start = "-"
    while True:
        page: Any = client.xrange(key, start, "+", count=LOG_PAGE)
        for stream_id, fields in page:
            yield {"id": text(stream_id), "fields": _hash_text(fields)}
        if len(page) < LOG_PAGE:
            return
        start = "(" + text(page[-1][0])


def read_operator(store: SyncEventStore) -> dict[str, Any] | None:
    """The console's source records (``None``: it holds none): operators, audit log, chat reports
    and the notes of reports handled."""
    client = store.index
    members: Any = client.smembers(OPERATORS)
    handled: Any = client.hgetall(HANDLED)
    record: dict[str, Any] = {
        "kind": "operator",
        "operators": sorted(text(member) for member in members),
        **{name: list(_stream_entries(client, key)) for name, key in OPERATOR_STREAMS.items()},
        "handled": _hash_text(handled),
    }
    return record if any(record[name] for name in ("operators", *OPERATOR_STREAMS, "handled")) else None


# -- the manifest: the file integrity-checked as a whole ------------------------------------------


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
    return bool(game_ids(store) or account_ids(store))


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
                if _line(record) != raw:
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
            carried = [] if ring_record is None else _ring_of(ring_record).public_keys()
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


# -- export ---------------------------------------------------------------------------------------


@dataclass
class Exported:
    path: Path
    games: int = 0
    finished: int = 0
    disputes: int = 0
    accounts: int = 0
    finishes: int = 0
    signing_keys: int = 0
    tlog_leaves: int = 0
    operator_entries: int = 0  # audit entries and chat reports
    bytes: int = 0
    fingerprint: str = ""  # the manifest's chain hash: record it apart to check the file at a restore
    game_bytes: dict[str, int] = field(default_factory=dict)  # finished game id -> its line's size


def _line(record: Mapping[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def export_all(store: SyncEventStore, target: str | Path, now: dt.datetime | None = None) -> Exported:
    """Write every game, account and finish to a new 0600 file (``target``, or a dated file in the
    directory ``target``); refuses to overwrite an existing file."""
    path = export_path(target, now)
    if path.exists():
        raise BackupError(f"{path} exists already; a backup never overwrites a file")
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchmod(fd, 0o600)
    done = Exported(path)
    try:
        with os.fdopen(fd, "wb") as out:
            header = {
                "kind": "header",
                "format": FORMAT,
                "created_at": (now or dt.datetime.now(dt.UTC)).isoformat(),
                "note": "operator data: holds every game's secret seeds and the accounts' password "
                "hashes and token digests; keep it private (mode 0600)",
            }
            head = _line(header)
            out.write(head)
            manifest = Manifest(head)

            def write(record: Mapping[str, Any]) -> bytes:
                line = _line(record)
                out.write(line)
                manifest.add(record, line)
                return line

            # the ring signs the manifest: the one the API makes at its first start, made now if
            # no API ever started on this store
            ring = store.run(ensure_keys(int(time.time())))
            write({"kind": "signing_keys", "ring": json.loads(ring.to_secret())})
            done.signing_keys = 1
            # the public log before the games: every head it holds is in a game read later
            log_record = tlog_backup.read_log(_node_of(store, TLOG.leaves))
            if log_record is not None:
                write(log_record)
                done.tlog_leaves = len(log_record["leaves"])
            # the finish log first: every game it names finished before it was read, so the game's
            # own snapshot, taken later, is finished too (one finished after it is recorded again
            # at the restore, as a worker would have)
            for finish in finish_log(store):
                write(finish)
                done.finishes += 1
            written: set[str] = set()
            for record in _games(store, written):
                line = write(record)
                written.add(record["id"])
                done.games += 1
                done.disputes += len(record.get("disputes", []))
                if _finished(record):
                    done.finished += 1
                    done.game_bytes[record["id"]] = len(line)
            for account_id in account_ids(store):
                account = read_account(store, account_id)
                if account is not None:
                    write(account)
                    done.accounts += 1
            operator = read_operator(store)
            if operator is not None:
                write(operator)
                done.operator_entries = sum(len(operator[name]) for name in OPERATOR_STREAMS)
            counts = {"games": done.games, "accounts": done.accounts, "finishes": done.finishes}
            counts["signing_keys"] = done.signing_keys
            if log_record is not None:  # absent from files made before the public log
                counts["tlog"] = 1
            if operator is not None:  # absent from files made before the console's records
                counts["operator"] = 1
            out.write(_line({"kind": "end", **counts, **manifest.signed(ring, int(time.time()))}))
            done.fingerprint = manifest.chain
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    done.bytes = path.stat().st_size
    return done


def _games(store: SyncEventStore, written: set[str]) -> Iterator[dict[str, Any]]:
    """Every game's record: the games in Redis in the lobby's order, then the games archived out of
    it (``store.archive``) that were not among them (one archived but not yet removed, by a pass
    that died in between, is read from Redis). ``written``: the ids written so far."""
    for game_id in creation_order(store):
        record = read_game(store, game_id)
        if record is not None:  # None: removed since the scan (retention) or archived meanwhile
            yield record
    if store.archive is not None:  # a game archived during the loop above is read here, once
        for game in store.archive.games():
            if game.game_id not in written:
                yield read_archived_game(store, game)
    # A game archived out of Redis keeps its lobby summary there: one whose file this archive does
    # not hold was archived into another directory, and a backup without it would lose it unsaid.
    for raw in store.index.hscan_iter(LOBBY, no_values=True):
        game_id = text(raw)
        if game_id in written:
            continue
        record = read_game(store, game_id)
        if record is not None:  # created since the scan: it is in the backup too
            yield record
        elif store.archive is None or not store.archive.has(game_id):
            where = "no archive" if store.archive is None else f"the archive {store.archive.directory}"
            raise BackupError(
                f"game {game_id} has left Redis for the archive of finished games, but {where} holds "
                "no file of it: give the service's own archive (TABLESTREAM_ARCHIVE_DIR, or "
                "--data-dir of a stopped serve), or the backup would lose it"
            )


def _finished(record: Mapping[str, Any]) -> bool:
    try:
        build_export(_entries(record))
    except Exception:
        return False
    return True


# -- reading a backup file ------------------------------------------------------------------------


def _entries(record: Mapping[str, Any]) -> list[Entry]:
    raw = record.get("entries")
    if not isinstance(raw, list) or not raw:
        raise BackupError(f"game {record.get('id')!r}: no entries")
    entries = []
    for item in raw:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("version"), int)
            and isinstance(item.get("hash"), str)
            and isinstance(item.get("data"), str)
        ):
            raise BackupError(f"game {record.get('id')!r}: an entry is not {{version, hash, data}}")
        entries.append(Entry(item["version"], item["data"].encode("utf-8"), item["hash"]))
    return entries


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


# -- checks ---------------------------------------------------------------------------------------


def verify_game(record: Mapping[str, Any]) -> list[str]:
    """Why ``record`` is not a genuine game (empty: it is). Its secret must produce the stream's
    commitments and revealed seeds; the stream must then pass the offline verifier as an export
    does, a finished or closed game as its export, a running one with the rounds its seeds have not
    revealed yet drawn from that secret (so that its deals are checked as strictly as a finished
    game's), all but its final scores."""
    game_id = record.get("id")
    try:
        entries = _entries(record)
    except BackupError as exc:
        return [str(exc)]
    rp = replay(entries)
    if rp.created is None or rp.table is None:
        return [f"the stream does not start with a readable table: {rp.problem}"]
    if rp.created.game_id != game_id:
        return [f"the stream is game {rp.created.game_id!r}, not {game_id!r}"]
    seeds, problems = _secret_of(record.get("secret"), rp.commitments, rp.revealed)
    if problems:
        return problems
    try:
        doc = build_export(entries, running=True)
    except (CorruptStream, ValueError) as exc:
        return [f"unreadable: {exc}"]
    over = "scores" in doc or "closed" in doc
    assert seeds is not None
    sealed = {} if over else {r: seeds.round_seed(r) for batch in rp.batches for r in batch.pending}
    report = verify_export(doc, sealed_seeds=sealed)
    return [
        f"{bucket.label}: {check}: {detail}"
        for _, bucket in sorted(report.rounds.items())
        for check, detail in bucket.failures
        if over or check != SCORES
    ]


def verify_chat(record: Mapping[str, Any]) -> list[str]:
    """Why the game's chat (``chat``: its export section, ``chat_state``: the state hash) is not the
    chain the server appended (empty: it is, or the game has no chat). The chat verifier of the
    export checks every record's hash and number, and that none names a version past the game's
    head; the state must be the chain's head, its message count and its last on/off setting."""
    if "chat" not in record and "chat_state" not in record:
        return []
    section, chat_state = record.get("chat"), record.get("chat_state")
    if not isinstance(chat_state, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in chat_state.items()
    ):
        return ["chat: its state is not an object of strings"]
    entries = record.get("entries")
    head = entries[-1].get("version") if isinstance(entries, list) and entries else None
    _, problems = chat_problems(section, head if isinstance(head, int) else None)
    if problems:
        return [f"chat: {p}" for p in problems]
    assert isinstance(section, dict)
    parsed = [json.loads(item["data"]) for item in section["records"]]
    messages = sum(1 for r in parsed if r.get("kind") == "message")
    settings = [r for r in parsed if r.get("kind") == "settings"]
    enabled = "1" if not settings or settings[-1].get("enabled", True) else "0"
    expected = {"n": str(section["head"]["n"]), "hash": section["head"]["hash"]}
    found = {"n": chat_state.get("n", "0"), "hash": chat_state.get("hash", GENESIS)}
    if (
        found != expected
        or chat_state.get("messages", "0") != str(messages)
        or (chat_state.get("enabled", "1") != enabled)
    ):
        return [
            f"chat: its state {chat_state} is not the chain's (head {expected['n']}, {messages} messages)"
        ]
    return []


def verify_disputes(record: Mapping[str, Any]) -> list[str]:
    """Why the game's ``disputes`` are not disputes the service could have recorded on it (empty:
    they are, or it has none): each readable, of this game, opened once (at ``opened_ms``), then
    evidence, and at most one verdict, last."""
    disputes = record.get("disputes", [])
    if not isinstance(disputes, list):
        return ["disputes: not a list"]
    problems: list[str] = []
    seen: set[str] = set()
    for item in disputes:
        if not _dispute_shaped(item):
            problems.append(f"disputes: {str(item)[:60]!r} is not a dispute record")
            continue
        if item["id"] in seen:
            problems.append(f"dispute {item['id']}: listed twice")
        seen.add(item["id"])
        problems += [f"dispute {item['id']}: {p}" for p in _dispute_problems(record.get("id"), item)]
    return problems


def _dispute_shaped(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("id"), str)
        and store_disputes.DISPUTE_ID.fullmatch(item["id"]) is not None
        and type(item.get("opened_ms")) is int
        and isinstance(item.get("events"), list)
        and len(item["events"]) > 0
        and all(isinstance(event, str) for event in item["events"])
    )


def _dispute_problems(game_id: Any, item: Mapping[str, Any]) -> list[str]:
    try:
        events = [store_disputes.decode(data.encode("utf-8")) for data in item["events"]]
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        return [f"an event is not a dispute event: {exc}"]
    first = events[0]
    if not isinstance(first, DisputeOpened):
        return ["its first event does not open it"]
    if (first.dispute_id, first.game_id) != (item["id"], game_id):
        return [f"its events are dispute {first.dispute_id} of game {first.game_id}"]
    if first.at != item["opened_ms"]:
        return [f"it was opened at {first.at}, not {item['opened_ms']}"]
    for n, (before, event) in enumerate(itertools.pairwise(events), start=2):
        if isinstance(event, DisputeOpened):
            return [f"event {n} opens it again"]
        if isinstance(before, DisputeResolved):
            return [f"event {n} follows its verdict"]
    return []


def _dispute_conflicts(store: SyncEventStore, record: Mapping[str, Any]) -> list[str]:
    """The backup's disputes the target holds otherwise (events that differ where both have them)."""
    conflicts = []
    for item in record.get("disputes", []):
        stored = _stored_dispute(store, record["id"], item["id"])
        common = min(len(stored), len(item["events"]))
        if stored[:common] != item["events"][:common]:
            conflicts.append(
                f"dispute {item['id']} of game {record['id']}: the store holds a different dispute; "
                "it is never overwritten"
            )
    return conflicts


def _stored_dispute(store: SyncEventStore, game_id: str, dispute_id: str) -> list[str]:
    key = store_disputes.stream_key(game_id, dispute_id)
    stream: Any = _node_of(store, key).xrange(key, "-", "+")
    return [fields[b"d"].decode("utf-8") for _, fields in stream]


def _shape_problems(record: Mapping[str, Any]) -> list[str]:
    """The game's hashes must be text to text, as stored."""
    return [
        f"its {name} hash is not an object of strings"
        for name in GAME_HASHES
        if not (
            isinstance(record.get(name, {}), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in record.get(name, {}).items())
        )
    ]


def _secret_of(
    secret: Any, commitments: Mapping[int, str], revealed: Mapping[int, bytes]
) -> tuple[SecretSeeds | None, list[str]]:
    """The game's seeds from its backed-up secret, or why they are not the stream's."""
    if not isinstance(secret, dict) or not {"root", "master"} <= secret.keys():
        return None, ["the game's secret (root, master) is missing"]
    try:
        seeds = SecretSeeds(bytes.fromhex(secret["root"]), bytes.fromhex(secret["master"]))
    except (TypeError, ValueError):
        return None, ["the game's secret is not hex"]
    problems = [
        f"secret: chain {chain}'s commitment is not the stream's"
        for chain, commitment in sorted(commitments.items())
        if seeds.chain_commitment(chain) != commitment
    ]
    problems += [
        f"secret: round {r}'s seed is not the one the stream revealed"
        for r, seed in sorted(revealed.items())
        if seeds.round_seed(r) != seed
    ]
    return seeds, problems


def _stored_head(store: SyncEventStore, game_id: str) -> tuple[int, str] | None:
    events = game_keys(game_id).events
    top: Any = _node_of(store, events).xrevrange(events, "+", "-", count=1)
    if not top:
        return None
    stream_id, fields = top[0]
    return int(text(stream_id).split("-")[1]), text(fields[b"h"])


def _game_conflict(store: SyncEventStore, record: Mapping[str, Any]) -> str | None:
    """``None`` when the target has no such game or holds exactly it (same head and secret)."""
    game_id = record["id"]
    stored = _stored_head(store, game_id)
    if stored is None:
        return None
    last = record["entries"][-1]
    secret = store.secret(game_id) or {}
    if stored != (last["version"], last["hash"]) or secret.get("root") != record["secret"].get("root"):
        return (
            f"game {game_id}: the store holds a different game (head {stored[0]} {stored[1][:12]}…, "
            f"the backup's {last['version']} {last['hash'][:12]}…); it is never overwritten"
        )
    return None


def _account_events(record: Mapping[str, Any]) -> list[bytes]:
    events = record.get("events")
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        raise BackupError(f"account {record.get('id')!r}: no events")
    return [e.encode("utf-8") for e in events]


def _account_problems(store: SyncEventStore, record: Mapping[str, Any]) -> list[str]:
    account_id = record.get("id")
    if not isinstance(account_id, str) or not ACCOUNT_ID.fullmatch(account_id):
        return [f"account {account_id!r}: not an account id"]
    try:
        events = _account_events(record)
        state = fold(_account_decoder.decode(e) for e in events)
    except (BackupError, msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
        return [f"account {account_id}: unreadable events: {exc}"]
    if state is None or state.account_id != account_id:
        return [f"account {account_id}: its stream registers another account"]
    seated = record.get("seated")
    if seated is not None and not (isinstance(seated, str) and seated.isdigit()):
        return [f"account {account_id}: when it last took a seat is not a time in ms"]
    problems = []
    stored = store.run(store_accounts.account_events(account_id))
    if stored and [bytes(e) for e in stored] != events:
        problems.append(f"account {account_id}: the store holds a different account; it is never overwritten")
    holder = store.run(store_accounts.name_holder(state.skeleton))
    if holder is not None and holder != account_id:
        problems.append(f"account {account_id}: its name {state.display_name!r} is held by account {holder}")
    return problems


def _finish_problem(store: SyncEventStore, record: Mapping[str, Any], top: int) -> str | None:
    seq, game_id, t = record.get("seq"), record.get("game_id"), record.get("t")
    if not isinstance(seq, int) or seq < 1 or not isinstance(game_id, str) or not isinstance(t, str):
        return f"finish {record!r}: not a finish-log entry"
    try:
        float(t)
    except ValueError:
        return f"finish {seq}: its time {t!r} is not a number"
    found: Any = _node_of(store, RATINGS.log).xrange(RATINGS.log, f"0-{seq}", f"0-{seq}")
    if found:
        fields = found[0][1]
        if (text(fields[b"g"]), text(fields[b"t"])) != (game_id, t):
            held = text(fields[b"g"])
            return f"finish {seq}: the store's finish log records game {held} there, the backup {game_id}"
        return None
    if seq <= top:
        return f"finish {seq} (game {game_id}): the store's finish log is past it without it"
    return None


def _log_top(store: SyncEventStore) -> int:
    top: Any = _node_of(store, RATINGS.log).xrevrange(RATINGS.log, "+", "-", count=1)
    return int(text(top[0][0]).split("-")[1]) if top else 0


# -- import ---------------------------------------------------------------------------------------


@dataclass
class Imported:
    path: Path
    games: int = 0  # in the file
    written: int = 0  # games the store did not hold
    disputes: int = 0
    disputes_written: int = 0  # disputes the store lacked, or lacked events of
    accounts: int = 0
    accounts_written: int = 0
    finishes: int = 0
    finishes_written: int = 0
    tlog: tlog_backup.LogPlan | None = None  # the public log to restore, checked
    tlog_leaves_written: int = 0
    operator_entries_written: int = 0  # audit entries and chat reports the target lacked
    sealed: Sealed | None = None  # what the integrity check found
    seconds_checking: float = 0.0
    seconds_writing: float = 0.0
    seconds_rebuilding: float = 0.0


def check_backup(
    store: SyncEventStore, path: Path, fingerprint: str | None = None, accept_format_1: bool = False
) -> tuple[str, Imported]:
    """The first pass: the file checked as a whole against its signed manifest (``check_integrity``),
    then every game verified, every record compared with the store; nothing written. Returns the
    file's digest (the second pass must read the same bytes)."""
    started = time.perf_counter()
    digest = file_digest(path)
    done = Imported(path, sealed=check_integrity(store, path, fingerprint, accept_format_1))
    problems: list[str] = []
    top = _log_top(store)
    logged: dict[str, int] = {}  # game id -> finish sequence, for the games the finish log names
    finished: set[str] = set()
    refused: set[str] = set()  # said once: their finishes are not named again
    for record in records(path):
        kind = record["kind"]
        if kind == "game":
            done.games += 1
            game_id = record.get("id")
            if not isinstance(game_id, str) or not game_id or "{" in game_id or "}" in game_id:
                problems.append(f"game {game_id!r}: not a game id")
                continue
            failures = _shape_problems(record) or (
                verify_game(record) + verify_chat(record) + verify_disputes(record)
            )
            if not failures and _finished(record):
                finished.add(game_id)
            if failures:
                refused.add(game_id)
                problems.append(f"game {game_id} is refused, it does not verify: " + "; ".join(failures[:5]))
                continue
            done.disputes += len(record.get("disputes", []))
            conflict = _game_conflict(store, record)
            if conflict:
                problems.append(conflict)
            problems += _dispute_conflicts(store, record)
        elif kind == "account":
            done.accounts += 1
            problems += _account_problems(store, record)
        elif kind == "operator":
            problems += _operator_problems(store, record)
        elif kind == "signing_keys":
            try:
                _ring_of(record)
            except (TypeError, ValueError, KeyError) as error:
                problems.append(f"the signing keys cannot be read: {error}")
        elif kind == "tlog":
            try:
                done.tlog = tlog_backup.check_log(_node_of(store, TLOG.leaves), record)
            except tlog_backup.LogRefused as error:
                problems.append(f"the public log is refused: {error}")
        else:
            done.finishes += 1
            problem = _finish_problem(store, record, top)
            if problem:
                problems.append(problem)
            else:
                logged[record["game_id"]] = record["seq"]
    problems += [
        f"finish {seq}: game {game_id} is not a finished game of the backup"
        for game_id, seq in sorted(logged.items(), key=lambda item: item[1])
        if game_id not in finished and game_id not in refused
    ]
    if problems:
        raise BackupError(f"{path}: refused, nothing was written", problems)
    done.seconds_checking = time.perf_counter() - started
    return digest, done


def _write_game(store: SyncEventStore, record: Mapping[str, Any]) -> bool:
    """Write a game the store lacks in one guarded ``MULTI``; ``False`` if it holds it already."""
    game_id = record["id"]
    k = game_keys(game_id)
    node = _node_of(store, k.events)
    with node.pipeline(transaction=True) as pipe:
        for _ in range(5):
            try:
                pipe.watch(k.events)  # type: ignore[no-untyped-call]
                if pipe.exists(k.events):
                    pipe.unwatch()
                    if _game_conflict(store, record):
                        raise BackupError(f"game {game_id} was written by someone else during the import")
                    return False
                # marked first, as an append does: a crash after the write leaves it to the sweeper
                store.mark_dirty(game_id)
                pipe.multi()
                for entry in record["entries"]:
                    pipe.xadd(k.events, {"d": entry["data"].encode("utf-8"), "h": entry["hash"]},
                              id=f"0-{entry['version']}")  # fmt: skip
                for name in GAME_HASHES:
                    values = record.get(name) or {}
                    if values:
                        pipe.hset(getattr(k, name), mapping=values)
                chat = ChatKeys(game_id)
                for item in (record.get("chat") or {}).get("records", []):
                    pipe.xadd(chat.stream, {"d": item["data"].encode("utf-8"), "h": item["hash"]},
                              id=f"0-{item['n']}")  # fmt: skip
                if record.get("chat_state"):
                    pipe.hset(chat.state, mapping=record["chat_state"])
                pipe.execute()
                return True
            except redis.WatchError:
                continue
    raise BackupError(f"game {game_id} kept changing during the import")


def _write_disputes(store: SyncEventStore, record: Mapping[str, Any]) -> int:
    """Write the events of the game's disputes the store lacks (each dispute in one ``MULTI``
    guarded by ``WATCH``, as its index entry); how many disputes gained any."""
    game_id, written = record["id"], 0
    for item in record.get("disputes", []):
        key, index = store_disputes.stream_key(game_id, item["id"]), store_disputes.index_key(game_id)
        with _node_of(store, key).pipeline(transaction=True) as pipe:
            for _ in range(5):
                try:
                    pipe.watch(key)  # type: ignore[no-untyped-call]
                    reply: Any = pipe.xrange(key, "-", "+")  # watching: answered at once
                    stored = [fields[b"d"].decode("utf-8") for _, fields in reply]
                    common = min(len(stored), len(item["events"]))
                    if stored[:common] != item["events"][:common]:
                        raise BackupError(f"dispute {item['id']} was written by someone else meanwhile")
                    if len(stored) >= len(item["events"]):
                        pipe.unwatch()
                        break
                    pipe.multi()
                    for n, data in enumerate(item["events"][len(stored) :], start=len(stored) + 1):
                        pipe.xadd(key, {"d": data.encode("utf-8")}, id=f"0-{n}")
                    pipe.zadd(index, {item["id"]: item["opened_ms"]}, nx=True)
                    pipe.execute()
                    written += 1
                    break
                except redis.WatchError:
                    continue
            else:
                raise BackupError(f"dispute {item['id']} kept changing during the import")
    return written


def _index_disputes(store: SyncEventStore, game_id: str) -> None:
    """The operators' list of open disputes (``services.store.disputes.OPEN``), for this game's
    disputes: derived from their streams, so rebuilt here."""
    index = store_disputes.index_key(game_id)
    listed: Any = _node_of(store, index).zrange(index, 0, -1, withscores=True)
    for member, opened in listed:
        dispute_id = text(member)
        state = fold_dispute(store.run(store_disputes.read(game_id, dispute_id)))
        if state is not None and state.open:
            store.run(store_disputes.mark_open(game_id, dispute_id, int(opened)))
        else:
            store.run(store_disputes.mark_resolved(game_id, dispute_id))


def _texts(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def _operator_problems(store: SyncEventStore, record: Mapping[str, Any]) -> list[str]:
    """Why the console's records cannot be restored as they are (empty: they can): their shape,
    and anything the target holds that they would rewrite or reorder."""
    operators, handled = record.get("operators"), record.get("handled")
    if not (
        isinstance(operators, list) and all(isinstance(a, str) and ACCOUNT_ID.fullmatch(a) for a in operators)
    ):
        return ["operator: its operators are not a list of account ids"]
    if not _texts(handled):
        return ["operator: its handled reports are not an object of strings"]
    assert isinstance(handled, dict)
    problems = []
    for name, key in OPERATOR_STREAMS.items():
        entries = record.get(name)
        if not (
            isinstance(entries, list)
            and all(
                isinstance(e, dict) and isinstance(e.get("id"), str) and STREAM_ID.fullmatch(e["id"])
                and _texts(e.get("fields")) and e["fields"]
                for e in entries
            )
        ):  # fmt: skip
            problems.append(f"operator: its {name} is not a list of stream entries")
            continue
        ids = [_stream_order(e["id"]) for e in entries]
        if ids != sorted(set(ids)):
            problems.append(f"operator: its {name} entries are not in stream order")
            continue
        problems += _stream_conflicts(store, name, key, entries)
    held: Any = store.index.hgetall(HANDLED)
    problems += [
        f"operator: chat report {report_id} was handled otherwise in the store; a note is never overwritten"
        for report_id, note in sorted(handled.items())
        if held.get(report_id.encode()) not in (None, note.encode())
    ]
    return problems


def _stream_order(stream_id: str) -> tuple[int, int]:
    ms, _, seq = stream_id.partition("-")
    return int(ms), int(seq)


def _stream_conflicts(
    store: SyncEventStore, name: str, key: str, entries: Sequence[Mapping[str, Any]]
) -> list[str]:
    """An entry the target holds with other fields, or lacks but holds later ones (a stream only
    grows at its end: it cannot be put back in its place)."""
    held = {e["id"]: e["fields"] for e in _stream_entries(store.index, key)}
    top = max((_stream_order(i) for i in held), default=(0, 0))
    for entry in entries:
        fields = held.get(entry["id"])
        if fields is not None and fields != entry["fields"]:
            return [f"operator: {name} entry {entry['id']} differs in the store; it is never overwritten"]
        if fields is None and _stream_order(entry["id"]) <= top:
            return [
                f"operator: the store's {name} lacks entry {entry['id']} but holds later ones; "
                "restore it into a store whose console holds nothing yet"
            ]
    return []


def _write_operator(store: SyncEventStore, record: Mapping[str, Any]) -> int:
    """Add what the target lacks (checked: nothing it holds is rewritten); the entries written."""
    client, written = store.index, 0
    if record["operators"]:
        client.sadd(OPERATORS, *record["operators"])
    for report_id, note in record["handled"].items():
        client.hsetnx(HANDLED, report_id, note)
    for name, key in OPERATOR_STREAMS.items():
        top: Any = client.xrevrange(key, "+", "-", count=1)
        after = _stream_order(text(top[0][0])) if top else (0, 0)
        missing = [e for e in record[name] if _stream_order(e["id"]) > after]
        for start in range(0, len(missing), LOG_PAGE):
            with client.pipeline(transaction=True) as pipe:
                for entry in missing[start : start + LOG_PAGE]:
                    pipe.xadd(key, entry["fields"], id=entry["id"])
                pipe.execute()
        written += len(missing)
    return written


def _write_account(store: SyncEventStore, record: Mapping[str, Any]) -> bool:
    account_id = record["id"]
    events = _account_events(record)
    state = fold(_account_decoder.decode(e) for e in events)
    assert state is not None
    holder = store.run(store_accounts.claim_name(state.skeleton, account_id))
    if holder is not None and holder != account_id:
        raise BackupError(f"account {account_id}: its name was claimed by {holder} during the import")
    appended = store.run(store_accounts.append_account(account_id, 0, events))
    if record.get("seated"):
        key = account_seated_key(account_id)
        _node_of(store, key).set(key, record["seated"], nx=True)
    store.run(retention.account_known(account_id, clock_ms()))
    if appended.status == "ok":
        return True
    if [bytes(e) for e in store.run(store_accounts.account_events(account_id))] != events:
        raise BackupError(f"account {account_id} was written by someone else during the import")
    return False


def _write_finish(store: SyncEventStore, record: Mapping[str, Any]) -> bool:
    node = _node_of(store, RATINGS.log)
    seq = record["seq"]
    if node.xrange(RATINGS.log, f"0-{seq}", f"0-{seq}"):
        return False
    node.xadd(RATINGS.log, {"g": record["game_id"], "t": record["t"]}, id=f"0-{seq}")
    # the finish sequence never goes back: recordings after the import continue after it
    node.eval(
        "local c = tonumber(redis.call('GET', KEYS[1]) or '0') "
        "if c < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end return 1",
        1, RATINGS.seq, seq,
    )  # fmt: skip
    return True


def _ring_of(record: Mapping[str, Any]) -> KeyRing:
    return KeyRing.from_secret(json.dumps(record["ring"]))


def _write_signing_keys(store: SyncEventStore, restored: KeyRing) -> None:
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


def import_all(
    store: SyncEventStore, source: str | Path, fingerprint: str | None = None, accept_format_1: bool = False
) -> Imported:
    """Check the whole backup (nothing written if anything is refused), write what the store lacks,
    then rebuild every projection from the streams. ``fingerprint``: the one ``export-all`` printed,
    recorded apart from the file; ``accept_format_1``: read a file made before the signed manifest."""
    path = import_path(source)
    digest, checked = check_backup(store, path, fingerprint, accept_format_1)
    done = Imported(
        path,
        sealed=checked.sealed,
        games=checked.games,
        disputes=checked.disputes,
        accounts=checked.accounts,
        finishes=checked.finishes,
        tlog=checked.tlog,
        seconds_checking=checked.seconds_checking,
    )
    started = time.perf_counter()
    if file_digest(path) != digest:
        raise BackupError(f"{path} changed between the check and the write; nothing was written")
    games: list[str] = []
    for record in records(path):
        kind = record["kind"]
        if kind == "game":
            games.append(record["id"])
            done.written += _write_game(store, record)
            done.disputes_written += _write_disputes(store, record)
        elif kind == "account":
            done.accounts_written += _write_account(store, record)
        elif kind == "operator":
            done.operator_entries_written = _write_operator(store, record)
        elif kind == "signing_keys":
            _write_signing_keys(store, _ring_of(record))
        elif kind == "tlog":
            assert checked.tlog is not None
            try:
                done.tlog_leaves_written = tlog_backup.write_log(_node_of(store, TLOG.leaves), checked.tlog)
            except tlog_backup.LogRefused as error:
                raise BackupError(str(error)) from None
        else:
            done.finishes_written += _write_finish(store, record)
    # every restored game queued for the log's appender: heads it had not logged yet are logged
    # (by content: a head already in the log is never appended twice)
    for game_id in games:
        head = store.head(game_id)
        if head:
            store.run(note_loggable_op(game_id, head))
    done.seconds_writing = time.perf_counter() - started
    started = time.perf_counter()
    rebuild(store, games)
    done.seconds_rebuilding = time.perf_counter() - started
    return done


def rebuild(store: SyncEventStore, games: Sequence[str], fresh_views: bool = False) -> None:
    """Every projection from the streams alone: ratings first (so the projector finds each logged
    game recorded and does not record it again), then each game's views, lobby entry and indexes,
    a waiting table counted against the cap again. ``fresh_views``: drop each game's views before
    projecting it (after a physical restore, whose views may lag or lead the indexes)."""
    rebuild_ratings(store)
    projector = Projector(store, StateCache(capacity=16))  # a few folded games in memory at a time
    for game_id in games:
        if fresh_views:
            views = game_keys(game_id).views
            _node_of(store, views).delete(views)
        projector.catch_up(game_id)
        folded = projector.cache.get(game_id)
        if folded is not None and folded.state.status == "waiting":
            store.run(_still_waiting(game_id))
        if folded is not None and folded.state.status not in ("finished", "expired"):
            _note_account_seats(store, game_id, folded.state)
        _index_disputes(store, game_id)
    rebuild_indexes(store)
    index_names(store, account_ids(store))  # the operator's search by name (workers.name_index)


def _note_account_seats(store: SyncEventStore, game_id: str, state: Any) -> None:
    """The "Your tables" index (``services.store.your_tables``) of every account holding a seat at a
    table still waiting or playing: derived from the game's own ``seat_claimed``, so rebuilt here
    (the reader drops what ended, as it does for any entry)."""
    for player in state.seated:
        if player.account is not None and state.holds(player.seat):
            store.run(note_table(player.account.id, game_id, clock_ms()))


def _still_waiting(game_id: str) -> Operation[None]:
    yield index_call("ZADD", WAITING, "NX", clock_ms(), game_id)


def rebuild_all(store: SyncEventStore) -> int:
    """``tablestream rebuild-all``: every projection of every stored game rebuilt from its stream
    (views dropped first); how many games. Run with the workers and the API stopped."""
    games = creation_order(store)
    rebuild(store, games, fresh_views=True)
    return len(games)


# -- command line ---------------------------------------------------------------------------------


def _store(args: argparse.Namespace) -> SyncEventStore:
    """The store the command reads and writes, with the service's archive of finished games (the
    settings' ``archive_dir``; for ``--data-dir``, the ``archive`` under it, as ``serve`` keeps it)."""
    place = topology(args.redis_url, args.queue_url, args.redis_cluster)
    clients = connect_sync(place, PoolLimits(max_connections=4))
    settings = Settings.from_env()
    if args.data_dir is not None:
        settings = replace(settings, data_dir=args.data_dir)
    return SyncEventStore(clients.store, clients.index, archive=settings_archive(settings))


def _sealed_sentence(sealed: Sealed | None) -> str:
    """What the integrity check showed, said plainly (the module's docstring says why)."""
    if sealed is None or sealed.format == FORMAT_1:
        return f"a {FORMAT_1} file: no manifest was checked"
    where = (
        "this service's own signing keys"
        if sealed.checked_with == "target"
        else "the backup's own key (the target never held it): this shows the file is whole, not who made it"
    )
    return (
        f"the signed manifest (fingerprint {sealed.fingerprint}) verified with key {sealed.key_id}, {where}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """0 done, 1 refused (tampered games or conflicts, each named), 2 unreadable or unusable."""
    parser = argparse.ArgumentParser(
        prog="tablestream", description="Back up, restore or rebuild every stream."
    )
    parser.add_argument("command", choices=("export-all", "import-all", "rebuild-all"))
    parser.add_argument(
        "path", nargs="?", help="a backup file, or a directory (export: a new dated file; import: the newest)"
    )
    parser.add_argument(
        "--check", action="store_true", help="import-all: verify and compare only, write nothing"
    )
    parser.add_argument(
        "--fingerprint",
        help="import-all: the fingerprint export-all printed, kept apart from the file",
    )
    parser.add_argument(
        "--accept-format-1",
        action="store_true",
        help=f"import-all: read a {FORMAT_1} file, which has no signed manifest",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="the data directory of a stopped `tablestream serve`: its embedded Redis is started for "
        "the command alone (refused while serve holds it)",
    )
    parser.add_argument("--redis-url", default=os.environ.get("TABLESTREAM_REDIS_URL"))
    parser.add_argument("--queue-url", default=os.environ.get("TABLESTREAM_QUEUE_URL") or None)
    parser.add_argument(
        "--redis-cluster",
        choices=("auto", "yes", "no"),
        default=os.environ.get("TABLESTREAM_REDIS_CLUSTER") or "auto",
    )
    args = parser.parse_intermixed_args(argv)  # flags before or after the path
    if args.command != "rebuild-all" and not args.path:
        parser.error(f"{args.command} needs a DIR or FILE")
    if args.data_dir is not None:
        if args.redis_url and "--redis-url" in (argv if argv is not None else sys.argv):
            parser.error("give --data-dir or --redis-url, not both")
        return _on_data_dir(args)
    if not args.redis_url:  # never a default: another program's Redis there would be read or written
        parser.error(
            f"{args.command} needs the service's Redis: --redis-url URL or TABLESTREAM_REDIS_URL "
            "(the worker's own setting; `serve` prints its URL when it starts), or --data-dir DIR "
            "of a stopped `tablestream serve`"
        )
    return _run(args)


def _on_data_dir(args: argparse.Namespace) -> int:
    """The command on a stopped ``serve``'s embedded Redis: the data directory locked as ``serve``
    locks it (so that neither starts while the other runs), its Redis started with the AOF and
    fsync on every write, stopped cleanly (the AOF flushed) once the command ends."""
    try:
        with data_dir_lock(args.data_dir), EmbeddedRedis(args.data_dir / "redis", durable=True) as embedded:
            args.redis_url, args.queue_url, args.redis_cluster = embedded.url, None, "no"
            return _run(args)
    except DataDirLocked as exc:
        print(f"tablestream {args.command}: {exc}; stop it first", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    store = _store(args)
    try:
        if args.command == "export-all":
            exported = export_all(store, args.path)
            print(
                f"exported {exported.games} games ({exported.finished} finished), "
                f"{exported.disputes} disputes, {exported.accounts} accounts, "
                f"{exported.finishes} finishes, {exported.tlog_leaves} public log leaves, "
                f"{exported.operator_entries} audit entries and chat reports to {exported.path} "
                f"({exported.bytes} bytes, mode 0600: "
                "it holds every game's secret seeds and the accounts' password hashes)\n"
                f"fingerprint {exported.fingerprint}  (keep it apart from the file: "
                "import-all --fingerprint checks the file is this one)"
            )
        elif args.command == "rebuild-all":
            print(f"rebuilt the projections and ratings of {rebuild_all(store)} games from their streams")
        elif args.check:
            _, checked = check_backup(store, import_path(args.path), args.fingerprint, args.accept_format_1)
            print(
                f"checked {checked.path}: {checked.games} games and {checked.disputes} disputes verified, "
                f"{checked.accounts} accounts and "
                f"{checked.finishes} finishes agree with the store"
                + (
                    ""
                    if checked.tlog is None
                    else f", the public log's {len(checked.tlog.leaves)} leaves give every checkpoint's root "
                    f"and agree with the store's {checked.tlog.target_size}"
                )
                + "; "
                + _sealed_sentence(checked.sealed)
                + "; nothing was written"
            )
        else:
            imported = import_all(store, args.path, args.fingerprint, args.accept_format_1)
            print(
                f"imported {imported.path}: {imported.games} games ({imported.written} new), "
                f"{imported.disputes} disputes ({imported.disputes_written} new or grown), "
                f"{imported.accounts} accounts ({imported.accounts_written} new), {imported.finishes} "
                f"finishes ({imported.finishes_written} new), {imported.tlog_leaves_written} public log "
                f"leaves and {imported.operator_entries_written} audit entries and chat reports restored; "
                "projections and ratings rebuilt; " + _sealed_sentence(imported.sealed)
            )
    except BackupError as exc:
        print(f"tablestream {args.command}: {exc.render()}", file=sys.stderr)
        return 1 if exc.problems else 2
    except OSError as exc:
        print(f"tablestream {args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
