"""The ratings' finish log in a backup: one ``finish`` line per entry (game id and the worker's
finish time: the order and clock the ratings fold replays; the only ratings input outside the game
streams). It is read before the games, so that every game it names is finished in its own snapshot,
read later; the import checks that every finish names a finished game of the file and agrees with
the target's log. The ratings themselves are rebuilt from it (``workers.ratings.rebuild``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from services.store.event_store import SyncEventStore
from services.store.keys import RATINGS
from services.store.requests import text
from workers.backup.frame import LOG_PAGE, node_of


def finish_log(store: SyncEventStore) -> Iterator[dict[str, Any]]:
    """The ratings' finish log, a page at a time."""
    node = node_of(store, RATINGS.log)
    start = "-"
    while True:
        page: Any = node.xrange(RATINGS.log, start, "+", count=LOG_PAGE)
        for stream_id, fields in page:
            yield {"kind": "finish", "seq": int(text(stream_id).split("-")[1]), "game_id": text(fields[b"g"]),
                   "t": text(fields[b"t"])}  # fmt: skip
        if len(page) < LOG_PAGE:
            return
        start = "(" + text(page[-1][0])


def finish_problem(store: SyncEventStore, record: Mapping[str, Any], top: int) -> str | None:
    seq, game_id, t = record.get("seq"), record.get("game_id"), record.get("t")
    if not isinstance(seq, int) or seq < 1 or not isinstance(game_id, str) or not isinstance(t, str):
        return f"finish {record!r}: not a finish-log entry"
    try:
        float(t)
    except ValueError:
        return f"finish {seq}: its time {t!r} is not a number"
    found: Any = node_of(store, RATINGS.log).xrange(RATINGS.log, f"0-{seq}", f"0-{seq}")
    if found:
        fields = found[0][1]
        if (text(fields[b"g"]), text(fields[b"t"])) != (game_id, t):
            held = text(fields[b"g"])
            return f"finish {seq}: the store's finish log records game {held} there, the backup {game_id}"
        return None
    if seq <= top:
        return f"finish {seq} (game {game_id}): the store's finish log is past it without it"
    return None


def log_top(store: SyncEventStore) -> int:
    top: Any = node_of(store, RATINGS.log).xrevrange(RATINGS.log, "+", "-", count=1)
    return int(text(top[0][0]).split("-")[1]) if top else 0


def write_finish(store: SyncEventStore, record: Mapping[str, Any]) -> bool:
    node = node_of(store, RATINGS.log)
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
