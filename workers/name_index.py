"""Rebuild the operator's index of account names (``services.store.name_index``) from the account
streams alone: each account's current name, folded the way its claim was. Run by ``tablestream
rebuild-all`` (``workers.backup.rebuild``) with the API stopped, like the other rebuilds."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec
import structlog

from domain.accounts import AccountEvent, fold
from services.store import accounts as store_accounts
from services.store import name_index
from services.store.event_store import SyncEventStore

BATCH = 500

log = structlog.get_logger("tablestream.name_index")
_decoder = msgspec.json.Decoder(AccountEvent)


def index_names(store: SyncEventStore, account_ids: Iterable[str]) -> int:
    """Index every account of ``account_ids`` by its name, built beside the index and renamed over
    it in one step (so an account gone since the last rebuild leaves no member behind); how many."""
    store.run(name_index.start_rebuild())
    batch: list[tuple[str, str]] = []
    count = 0
    for account_id in account_ids:
        state = fold(_decoder.decode(e) for e in store.run(store_accounts.account_events(account_id)))
        if state is None:  # removed since the scan
            continue
        batch.append((state.skeleton, account_id))
        count += 1
        if len(batch) >= BATCH:
            store.run(name_index.add_to_rebuild(batch))
            batch = []
    store.run(name_index.add_to_rebuild(batch))
    store.run(name_index.finish_rebuild(count))
    log.info("name_index_rebuilt", accounts=count)
    return count
