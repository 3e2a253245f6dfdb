"""Accounts in a backup: one ``account`` line per account, its event stream as stored (name,
Argon2id password hash and token digests are events in it: restored players stay logged in) and
when it last took a seat.

The import refuses an account the target holds otherwise, or whose name another account holds; it
writes the others with their name claimed, and notes them in the retention index.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import msgspec

from domain.accounts import AccountEvent, fold
from services.store import accounts as store_accounts
from services.store import retention
from services.store.event_store import SyncEventStore
from services.store.keys import PREFIX, account_seated_key
from services.store.requests import clock_ms, text
from workers.backup.frame import BackupError, node_of, scan

_account_decoder = msgspec.json.Decoder(AccountEvent)
ACCOUNT_ID = re.compile(r"[0-9a-f]{16}")


def account_ids(store: SyncEventStore) -> list[str]:
    return sorted(set(scan(store, f"{PREFIX}:{{acct:*}}:events", f"{PREFIX}:{{acct:", "}:events")))


def read_account(store: SyncEventStore, account_id: str) -> dict[str, Any] | None:
    events = store.run(store_accounts.account_events(account_id))
    if not events:
        return None
    seated = node_of(store, account_seated_key(account_id)).get(account_seated_key(account_id))
    return {
        "kind": "account",
        "id": account_id,
        "events": [bytes(e).decode("utf-8") for e in events],
        "seated": None if seated is None else text(seated),
    }


def _account_events(record: Mapping[str, Any]) -> list[bytes]:
    events = record.get("events")
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        raise BackupError(f"account {record.get('id')!r}: no events")
    return [e.encode("utf-8") for e in events]


def account_problems(store: SyncEventStore, record: Mapping[str, Any]) -> list[str]:
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


def write_account(store: SyncEventStore, record: Mapping[str, Any]) -> bool:
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
        node_of(store, key).set(key, record["seated"], nx=True)
    store.run(retention.account_known(account_id, clock_ms()))
    if appended.status == "ok":
        return True
    if [bytes(e) for e in store.run(store_accounts.account_events(account_id))] != events:
        raise BackupError(f"account {account_id} was written by someone else during the import")
    return False
