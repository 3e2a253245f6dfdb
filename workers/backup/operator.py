"""The operators' console in a backup: one ``operator`` line when it holds anything: the operators'
account ids, the operators' audit log and the players' chat reports (each entry with its stream id,
which the console and the handled notes name it by) and the notes of reports handled. A restore
adds what the target lacks and refuses one that would rewrite or reorder what it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from services.store.chat import REPORTS
from services.store.event_store import SyncEventStore
from services.store.operator import AUDIT, HANDLED, OPERATORS
from services.store.requests import text
from workers.backup.accounts import ACCOUNT_ID
from workers.backup.frame import LOG_PAGE, hash_text

OPERATOR_STREAMS = {"audit": AUDIT, "reports": REPORTS}
"""The console's streams a backup keeps (on the indexes' server), by their name in the file."""


STREAM_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


def _stream_entries(client: Any, key: str) -> Iterator[dict[str, Any]]:
    """A stream's entries, a page at a time: each its ``id`` and its ``fields`` as text."""
    start = "-"
    while True:
        page: Any = client.xrange(key, start, "+", count=LOG_PAGE)
        for stream_id, fields in page:
            yield {"id": text(stream_id), "fields": hash_text(fields)}
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
        "handled": hash_text(handled),
    }
    return record if any(record[name] for name in ("operators", *OPERATOR_STREAMS, "handled")) else None


def _texts(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


def operator_problems(store: SyncEventStore, record: Mapping[str, Any]) -> list[str]:
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


def write_operator(store: SyncEventStore, record: Mapping[str, Any]) -> int:
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
