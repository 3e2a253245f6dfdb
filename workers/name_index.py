"""Build the operator's index of account names (``services.store.name_index``) from the account
streams alone: each account's current name, folded the way its claim was.

``index_names`` rebuilds it whole, beside the index and renamed over it, for ``tablestream
rebuild-all`` and ``import-all`` (``workers.backup.rebuild``), which run with the API stopped.
``backfill_names`` fills it in place on a running service, once: the sweeper calls it on each
retention pass, and it does nothing while the index is marked done."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec
import structlog

from domain.accounts import AccountEvent, fold
from services.store import accounts as store_accounts
from services.store import name_index
from services.store.event_store import SyncEventStore
from services.store.requests import clock_ms

BATCH = 500

log = structlog.get_logger("tablestream.name_index")
_decoder = msgspec.json.Decoder(AccountEvent)


def _fill(store: SyncEventStore, account_ids: Iterable[str], key: str) -> int:
    """Add every account of ``account_ids`` still stored to the sorted set ``key``; how many."""
    batch: list[tuple[str, str]] = []
    count = 0
    for account_id in account_ids:
        state = fold(_decoder.decode(e) for e in store.run(store_accounts.account_events(account_id)))
        if state is None:  # removed since the scan
            continue
        batch.append((state.skeleton, account_id))
        count += 1
        if len(batch) >= BATCH:
            store.run(name_index.add_many(batch, key))
            batch = []
    store.run(name_index.add_many(batch, key))
    return count


def index_names(store: SyncEventStore, account_ids: Iterable[str]) -> int:
    """Index every account of ``account_ids`` by its name, built beside the index and renamed over
    it in one step (so an account gone since the last rebuild leaves no member behind); how many."""
    store.run(name_index.start_rebuild())
    count = _fill(store, account_ids, name_index.BUILDING)
    store.run(name_index.finish_rebuild(count))
    store.run(name_index.mark_indexed(clock_ms()))
    log.info("name_index_rebuilt", accounts=count)
    return count


def backfill_names(store: SyncEventStore, account_ids: Callable[[], Iterable[str]]) -> int | None:
    """Unless the index is marked done, add every stored account (``account_ids()``) to it in place,
    beside the registrations the API adds meanwhile, then mark it done; how many (``None``: it was
    done already)."""
    if store.run(name_index.indexed()):
        return None
    count = _fill(store, account_ids(), name_index.NAMES)
    store.run(name_index.mark_indexed(clock_ms()))
    log.info("name_index_backfilled", accounts=count)
    return count
