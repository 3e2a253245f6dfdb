"""``export-all``: every kind of data written into one new backup file, in the frame's format.

The lines go in this order: the signing keys (``workers.backup.signing_keys``), the public log
(``workers.backup.tlog``; before the games: every head it holds is in a game read later), the finish
log (``workers.backup.finishes``), the games with their chats and disputes (``workers.backup.games``),
the accounts (``workers.backup.accounts``) and the console's records (``workers.backup.operator``),
then the end line with the counts and the signed manifest (``workers.backup.frame``). Memory stays
one game's worth (and the list of game ids, and the manifest: about 100 bytes a record). The file
is written beside its final name with mode 0600 and renamed into place once complete.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from workers.backup import tlog
from workers.backup.accounts import account_ids, read_account
from workers.backup.finishes import finish_log
from workers.backup.frame import FORMAT, BackupError, Manifest, encode_line, export_path, node_of
from workers.backup.games import all_games, is_finished
from workers.backup.operator import OPERATOR_STREAMS, read_operator
from workers.backup.signing_keys import read_signing_keys


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
            head = encode_line(header)
            out.write(head)
            manifest = Manifest(head)

            def write(record: Mapping[str, Any]) -> bytes:
                line = encode_line(record)
                out.write(line)
                manifest.add(record, line)
                return line

            ring, keys = read_signing_keys(store)  # the ring signs the manifest too
            write(keys)
            done.signing_keys = 1
            # the public log before the games: every head it holds is in a game read later
            log_record = tlog.read_log(node_of(store, TLOG.leaves))
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
            for record in all_games(store, written):
                line = write(record)
                written.add(record["id"])
                done.games += 1
                done.disputes += len(record.get("disputes", []))
                if is_finished(record):
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
            out.write(encode_line({"kind": "end", **counts, **manifest.signed(ring, int(time.time()))}))
            done.fingerprint = manifest.chain
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    done.bytes = path.stat().st_size
    return done
