"""A game's disputes in a backup: part of its game's line (``disputes``), each one's id, when it was
opened and its events as stored.

Each is checked on import to be one dispute of this game, opened once and resolved at most once,
last. A dispute the target holds is never overwritten: the backup's events must agree with the
stored ones as far as both go, and only the events the target lacks are written. The operators'
list of open disputes is derived, rebuilt from the streams after the write.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec
import redis

from domain.disputes import DisputeOpened, DisputeResolved
from domain.disputes import fold as fold_dispute
from services.store import disputes as store_disputes
from services.store.event_store import SyncEventStore
from services.store.requests import text
from workers.backup.frame import BackupError, node_of


def queue_index_read(pipe: Any, game_id: str) -> None:
    """Queue the read of the game's disputes' index (id -> opened ms) in the game's ``MULTI``."""
    pipe.zrange(store_disputes.index_key(game_id), 0, -1, withscores=True)


def read_disputes(
    store: SyncEventStore, game_id: str, opened: Sequence[tuple[str, int]]
) -> list[dict[str, Any]]:
    """Each dispute's record: its id, when it was opened (ms) and its events as stored, oldest first;
    read in one ``MULTI`` (a dispute grows only at its end: a later event is the next read's)."""
    keys = [store_disputes.stream_key(game_id, dispute_id) for dispute_id, _ in opened]
    pipe = node_of(store, keys[0]).pipeline(transaction=True)
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


def dispute_conflicts(store: SyncEventStore, record: Mapping[str, Any]) -> list[str]:
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
    stream: Any = node_of(store, key).xrange(key, "-", "+")
    return [fields[b"d"].decode("utf-8") for _, fields in stream]


def write_disputes(store: SyncEventStore, record: Mapping[str, Any]) -> int:
    """Write the events of the game's disputes the store lacks (each dispute in one ``MULTI``
    guarded by ``WATCH``, as its index entry); how many disputes gained any."""
    game_id, written = record["id"], 0
    for item in record.get("disputes", []):
        key, index = store_disputes.stream_key(game_id, item["id"]), store_disputes.index_key(game_id)
        with node_of(store, key).pipeline(transaction=True) as pipe:
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


def index_disputes(store: SyncEventStore, game_id: str) -> None:
    """The operators' list of open disputes (``services.store.disputes.OPEN``), for this game's
    disputes: derived from their streams, so rebuilt here."""
    index = store_disputes.index_key(game_id)
    listed: Any = node_of(store, index).zrange(index, 0, -1, withscores=True)
    for member, opened in listed:
        dispute_id = text(member)
        state = fold_dispute(store.run(store_disputes.read(game_id, dispute_id)))
        if state is not None and state.open:
            store.run(store_disputes.mark_open(game_id, dispute_id, int(opened)))
        else:
            store.run(store_disputes.mark_resolved(game_id, dispute_id))
