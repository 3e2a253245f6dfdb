"""The global indexes beside the game streams, each kept with plain idempotent commands (the Lua
scripts stay within one game's hash slot): the dirty set the sweeper reads, the waiting tables the
cap counts, the lobby, and the timer deadlines the timer loop reads. Operations in the style of
``services.store.operations``, run by either event store.

The dirty set: every write marks its game (``operations.mark_dirty``, score: when it was first
marked, in ms) before appending and again after (in the append script's own step when the indexes
live on the store's server, else in the round trip after it); the projector clears the mark once the game's
checkpoint is at its head (and its timer armed for it) and re-marks it if the head moved meanwhile.
The sweeper reads only this set, so its cost follows the games that lag, not every game ever stored.

The hand-over to the projection consumers (``workers.handover``): an append that sets its game's
pending flag (``ts:{<id>}:pending``, in the append script, memory only) adds the game to the
hand-over stream ``HANDOVER`` (memory only too: replication off). On one server the append script
does both in its own atomic step (``operations.HANDOVER_KEYS``); with the indexes beside the queue of
a cluster the caller does the hand-over in one more round trip (``operations.publish_appended``,
``handover.lua``). A consumer blocks on the stream with ``XREAD`` (a read: nothing written, nothing
in the append-only file), claims each game by clearing its flag as its projection begins
(``operations.begin_projection``: of racing consumers only the one whose clear took the flag projects
it) and drops the stream once it has read all of it (``handovers_taken``). So a game has at most one
projection pending, and an append after a projection began hands it over again. The flag and the
stream do not survive a restart of Redis: the dirty set, written durably by every append, says
which games to project again (the sweeper, and each consumer as it starts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from services.store.keys import (
    ACTIVITY,
    DIRTY,
    EVENTS_PATTERN,
    EXPIRED,
    HANDOVER,
    INDEXES_MARK,
    LOBBY,
    LOBBY_CHANNEL,
    LOBBY_FIRST,
    LOBBY_FIRST_ORDER,
    LOBBY_ORDER,
    LOBBY_SEQ,
    PACED,
    TIMERS,
    WAITING,
    check_game_id,
    game_id_of_events_key,
    game_keys,
)
from services.store.operations import head, mark_dirty
from services.store.requests import (
    Call,
    Operation,
    Pipelined,
    ScriptCall,
    clock_ms,
    index_call,
    text,
)
from services.store.retention import activity_calls, scored_pairs
from services.store.timer_record import timer_fields

SCAN_COUNT = 500


# -- the dirty set: games whose projection may lag -------------------------------------------------


def dirty_games(older_than_ms: int, limit: int) -> Operation[list[str]]:
    """Up to ``limit`` marked games, oldest mark first, marked at least ``older_than_ms`` ago."""
    ids: list[bytes] = yield index_call(
        "ZRANGEBYSCORE", DIRTY, "-inf", clock_ms() - older_than_ms, "LIMIT", 0, limit
    )
    return [text(game_id) for game_id in ids]


def clear_dirty(game_id: str, projected: int) -> Operation[bool]:
    """After projecting ``game_id`` to ``projected``: clear its mark, unless its head has moved
    on (then it stays marked for the next job). ``True`` if the game is now clean."""
    return (yield from after_projection(game_id, projected, None, started=False, clean=True))


def touch_dirty(game_id: str) -> Operation[None]:
    """Mark a marked game again as of now (a repair of it was queued): the sweeper looks at it
    again after its grace, and a repair under way does not count as lag (``oldest_dirty_age_ms``)."""
    check_game_id(game_id)
    yield index_call("ZADD", DIRTY, "XX", clock_ms(), game_id)


def oldest_dirty_age_ms() -> Operation[int]:
    """How long the longest-marked game has been marked (0: none)."""
    reply: list[Any] = yield index_call("ZRANGE", DIRTY, 0, 0, "WITHSCORES")
    if not reply:
        return 0
    score = reply[0][1] if isinstance(reply[0], list | tuple) else reply[1]  # pairs, or flat (RESP2)
    return max(0, clock_ms() - int(float(score)))


# -- the hand-over to the projection workers ------------------------------------------------------


def handovers_taken(last_id: str) -> Operation[bool]:
    """A consumer has read the hand-over stream up to ``last_id``: drop the stream if that is its last
    entry (memory only, ``handovers_taken.lua``); ``True`` if it did."""
    return bool((yield ScriptCall("handovers_taken", [HANDOVER], [last_id], index=True)))


@dataclass(frozen=True, slots=True)
class Handed:
    """Hand-overs read from the stream: the games, in the order first handed over (each once), the
    id of the last entry read, and when the first was added (ms, the server's clock: its id)."""

    games: list[str]
    last_id: str
    since_ms: int
    entries: int


def read_handovers(after: str, count: int, block_ms: int | None = None) -> Operation[Handed | None]:
    """Up to ``count`` hand-overs after the stream id ``after`` (``"0-0"``: from the first); with
    ``block_ms``, waiting that long for one when none is there (``XREAD BLOCK``: a read, nothing
    written). ``None``: none came."""
    block = ("BLOCK", block_ms) if block_ms is not None else ()
    reply = yield index_call("XREAD", "COUNT", count, *block, "STREAMS", HANDOVER, after)
    if not reply:
        return None
    entries = _stream_entries(reply)
    if not entries:
        return None
    games: dict[str, None] = {}
    for _, fields in entries:
        game = fields.get(b"g", fields.get("g")) if isinstance(fields, dict) else None
        if game is not None:
            games.setdefault(text(game))
    first, last = text(entries[0][0]), text(entries[-1][0])
    return Handed(list(games), last, int(first.split("-", 1)[0]), len(entries))


def _stream_entries(reply: Any) -> list[tuple[Any, Any]]:
    """The (id, fields) entries of an ``XREAD`` reply of one stream: ``[[stream, entries]]`` (RESP2),
    or a map of the stream to its entries, themselves in a list (RESP3)."""
    if isinstance(reply, dict):
        (read,) = reply.values()
        return list(read[0] if read and isinstance(read[0], list) else read)
    return [entry for _, read in reply for entry in read]


def handed_over() -> Operation[int]:
    """How many hand-overs wait in the stream (read or not: a consumer drops it once it has read
    all of it)."""
    return int((yield index_call("XLEN", HANDOVER)))


HANDOVER_CONSUMER = "tablestream-handover"
"""The client name of each projection consumer's own connection (``workers.handover``), the one it
blocks on the stream with: ``handover_consumer_idle`` finds the consumers by it."""


def handover_consumer_idle() -> Operation[float | None]:
    """Seconds since the liveliest projection consumer last sent a command, from ``CLIENT LIST`` of
    the server holding the stream: the smallest ``idle`` of the connections named
    ``HANDOVER_CONSUMER`` (whole seconds; a live consumer blocks ``BLOCK_MS`` at a time, so reads
    again within a second). ``None``: no consumer is connected. A read: nothing is written, and the
    consumers' reads stay as they are."""
    reply = yield index_call("CLIENT", "LIST")
    return consumer_idle(text(reply), HANDOVER_CONSUMER)


def consumer_idle(listing: str, name: str) -> float | None:
    """The smallest ``idle`` among the connections named ``name`` in a ``CLIENT LIST`` reply."""
    idle: float | None = None
    for line in listing.splitlines():
        fields = dict(field.split("=", 1) for field in line.split(" ") if "=" in field)
        if fields.get("name") == name and fields.get("idle", "").isdigit():
            seconds = float(fields["idle"])
            idle = seconds if idle is None else min(idle, seconds)
    return idle


# -- waiting tables, the lobby, every game ---------------------------------------------------------


def waiting_tables() -> Operation[int]:
    """How many tables wait for players (the cap on open tables)."""
    return int((yield index_call("ZCARD", WAITING)))


def table_counts() -> Operation[dict[str, int]]:
    """Tables by status, from the indexes in one round trip (for a metrics scrape): ``waiting``
    (``WAITING``), ``running`` (active, ``ACTIVITY``, and not waiting), ``expired`` (``EXPIRED``)
    and ``finished`` (the other games of the lobby). Removed games (retention) are in none."""
    waiting, active, expired, listed = yield Pipelined(
        (
            index_call("ZCARD", WAITING),
            index_call("ZCARD", ACTIVITY),
            index_call("ZCARD", EXPIRED),
            index_call("HLEN", LOBBY),
        )
    )
    waiting, active, expired, listed = int(waiting), int(active), int(expired), int(listed)
    return {
        "waiting": waiting,
        "running": max(0, active - waiting),
        "expired": expired,
        "finished": max(0, listed - active - expired),
    }


def not_waiting(game_id: str) -> Operation[None]:
    """The table started, ended or expired: it no longer counts against the cap."""
    check_game_id(game_id)
    yield index_call("ZREM", WAITING, game_id)


def put_lobby(game_id: str, summary: bytes) -> Operation[None]:
    """Set a game's lobby summary; its first put fixes its place in the lobby order."""
    yield from after_projection(game_id, 0, summary, started=False, clean=False)


def after_projection(
    game_id: str,
    projected: int,
    summary: bytes | None,
    *,
    started: bool,
    clean: bool,
    deadline: int | None = None,
    status: str | None = None,
) -> Operation[bool]:
    """What follows a projection of ``game_id`` to ``projected``, in one round trip of the indexes:
    its lobby summary set (``summary``; the first fixes its place in the lobby order; one that
    changed besides its version is announced on ``LOBBY_CHANNEL``, after it is in place), its end
    of counting against the cap on waiting tables (``started``), its armed timer's ``deadline``
    put in the deadline index if an entry as early is not there (the append's announcement
    indexes it; this repairs one that was lost: the index may run early, never late) and its
    dirty mark cleared (``clean``; then the head is read after the clear, and a head that moved
    on marks it again), and, with the ``status`` a projection wrote, its entry in the retention
    indexes (``services.store.retention.activity_calls``). ``True`` if the game is now clean."""
    check_game_id(game_id)
    calls: list[Call] = []
    if summary is not None:  # first: the summary it replaces is replies[0], its ZSCORE replies[2]
        calls += [
            index_call("HGET", LOBBY, game_id),
            index_call("HSET", LOBBY, game_id, summary),
            index_call("ZSCORE", LOBBY_ORDER, game_id),
        ]
    if started:
        calls.append(index_call("ZREM", WAITING, game_id))
    if deadline is not None:
        calls.append(index_call("ZADD", TIMERS, "LT", deadline, game_id))
    if clean:
        calls.append(index_call("ZREM", DIRTY, game_id))
    if status is not None:  # last: the replies above are read by position
        calls += activity_calls(game_id, status, clock_ms())
    replies: list[Any] = (yield Pipelined(tuple(calls))) if calls else []
    if summary is not None:
        then: list[Call] = []
        order = replies[2]
        if order is None:
            sequence, marked = yield Pipelined(
                (index_call("INCR", LOBBY_SEQ), index_call("ZREM", LOBBY_FIRST, game_id))
            )
            order = int(sequence) + (LOBBY_FIRST_ORDER if int(marked) else 0)
            then.append(index_call("ZADD", LOBBY_ORDER, "NX", order, game_id))
        if lobby_changed(replies[0], summary):  # a join, a leave, a start, an end: rare, one round trip
            then.append(index_call("PUBLISH", LOBBY_CHANNEL, shown_in_lobby(summary, float(order))))
        if then:
            yield Pipelined(tuple(then))
    if not clean:
        return False
    now = yield from head(game_id)  # after the ZREM: an append racing it is seen here or re-marks
    if now > projected:
        yield from mark_dirty(game_id)
        return False
    return True


def lobby_changed(before: bytes | None, after: bytes) -> bool:
    """Whether a lobby summary says something new besides its ``version``, the one field that every
    projection changes (the lobby shows status and seats; a move in a running game changes neither)."""
    if before is None:
        return True
    try:
        old, new = msgspec.json.decode(before), msgspec.json.decode(after)
    except msgspec.DecodeError:  # not JSON (the store does not require it): compared whole
        return before != after
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return before != after
    old.pop("version", None)
    new.pop("version", None)
    return bool(old != new)


FIRST_MARK_MS = 3_600_000  # a mark of a table to list first whose create never came to be lasts this long


def mark_first(game_id: str, now_ms: int) -> Operation[None]:
    """The table about to be created as ``game_id`` is listed first (an established account creates
    it): its first listing reads and removes the mark. Marks of creates that never came to be are
    dropped after an hour."""
    check_game_id(game_id)
    yield Pipelined(
        (
            index_call("ZADD", LOBBY_FIRST, now_ms, game_id),
            index_call("ZREMRANGEBYSCORE", LOBBY_FIRST, "-inf", now_ms - FIRST_MARK_MS),
        )
    )


def shown_in_lobby(summary: bytes, order: float) -> bytes:
    """A summary as the lobby shows it: one listed first says ``"first": true``."""
    if order >= LOBBY_FIRST_ORDER and summary.startswith(b"{") and len(summary) > 2:
        return b'{"first":true,' + summary[1:]
    return summary


def lobby(limit: int) -> Operation[list[bytes]]:
    """Up to ``limit`` lobby summaries: the tables of established creators first, then the others,
    newest first in each part (``LOBBY_FIRST_ORDER``)."""
    if limit < 1:
        return []
    ranked = scored_pairs((yield index_call("ZREVRANGE", LOBBY_ORDER, 0, limit - 1, "WITHSCORES")))
    if not ranked:
        return []
    summaries: list[bytes | None] = yield index_call("HMGET", LOBBY, *(game for game, _ in ranked))
    return [
        shown_in_lobby(summary, order)
        for summary, (_, order) in zip(summaries, ranked, strict=True)
        if summary is not None
    ]


def scan_games() -> Operation[list[str]]:
    """Every game id, once each (for the sweeper that pokes lagging projections)."""
    found: dict[str, None] = {}
    cursor = 0
    while True:
        cursor, keys = yield Call(("SCAN", cursor, "MATCH", EVENTS_PATTERN, "COUNT", SCAN_COUNT))
        for key in keys:
            game_id = game_id_of_events_key(key)
            if game_id is not None:
                found.setdefault(game_id)
        if int(cursor) == 0:
            return list(found)


# -- the indexes' own marker -----------------------------------------------------------------------


def indexes_known() -> Operation[bool]:
    """Whether the indexes' server holds the marker ``know_indexes`` sets once they are complete.
    Missing: the server is new, or lost its data (the queue's Redis of a cluster deployment)."""
    return bool((yield index_call("EXISTS", INDEXES_MARK)))


def know_indexes() -> Operation[None]:
    yield index_call("SET", INDEXES_MARK, clock_ms())


# -- timers ---------------------------------------------------------------------------------------


def arm_timer(
    game_id: str, version: int, deadline_ms: int | None, fields: Mapping[str, str | int]
) -> Operation[bool]:
    """Set the game's timer for ``version`` (``deadline_ms`` ``None`` clears it) unless it already
    holds a newer one; an armed timer is then put in the global deadline index. ``True`` if set."""
    k = game_keys(game_id)
    args: list[Any] = [k.live, version, "" if deadline_ms is None else deadline_ms]
    for field, value in fields.items():
        args += [field, value]
    outcome = text((yield ScriptCall("arm_timer", [k.timer], args)))
    if outcome == "armed":  # never later than an entry there (as append.lua): the timer loop moves it on
        yield index_call("ZADD", TIMERS, "LT", deadline_ms or 0, game_id)
    return outcome != "stale"


def drop_timer(game_id: str, version: int) -> Operation[bool]:
    """Take the deadline off the game's timer armed at ``version``, if it still is; ``True`` if it
    was. For a timer job that cannot play what its timer calls for: the table then waits for its
    players instead of the timer loop queueing the job for ever. The deadline index entry is left to
    the loop's ``settle_timer``, which drops it without losing a timer armed meanwhile."""
    k = game_keys(game_id)
    outcome = text((yield ScriptCall("drop_timer", [k.timer], [k.live, version])))
    return outcome == "dropped"


def index_timer(game_id: str, deadline_ms: int) -> Operation[None]:
    """Put a game's armed timer in the deadline index (rebuilding a lost index)."""
    check_game_id(game_id)
    yield index_call("ZADD", TIMERS, deadline_ms, game_id)


def read_timer(game_id: str) -> Operation[dict[str, str]]:
    """The game's timer's fields (``services.store.timer_record``; empty when none was ever armed)."""
    reply: Mapping[bytes, bytes] = yield Call(("HGETALL", game_keys(game_id).timer))
    return timer_fields(reply)


def due_timers(now_ms: int, limit: int = 100) -> Operation[list[str]]:
    """Game ids whose indexed deadline is at or before ``now_ms``, earliest first."""
    ids: list[bytes] = yield index_call("ZRANGEBYSCORE", TIMERS, "-inf", now_ms, "LIMIT", 0, limit)
    return [text(game_id) for game_id in ids]


def settle_timer(game_id: str, now_ms: int) -> Operation[dict[str, str] | None]:
    """The game's timer if it is due; otherwise fix its index entry: moved to the timer's newer
    deadline, or dropped when the timer is cleared (then re-read, so that a timer armed meanwhile is
    indexed again: the index may lag the hash, never lose it)."""
    timer: dict[str, str] = yield from read_timer(game_id)
    if "deadline" in timer:
        deadline = int(timer["deadline"])
        if deadline <= now_ms:
            return timer
        yield index_call("ZADD", TIMERS, deadline, game_id)
        return None
    yield index_call("ZREM", TIMERS, game_id)
    again: dict[str, str] = yield from read_timer(game_id)
    if "deadline" in again:
        yield index_call("ZADD", TIMERS, int(again["deadline"]), game_id)
    return None


# -- paced bots -----------------------------------------------------------------------------------
# A bot at a table with a person waits ``bot_pace_ms`` before it acts (``services.table.lifecycle``): its
# move is put here with its due time, and the worker's pacing loop (``workers.lifecycle.PaceLoop``)
# queues its job once due. One entry per (game, version, seat): the job acts only on that version.


def paced_member(game_id: str, version: int, seat: int) -> str:
    return f"{check_game_id(game_id)}:{version}:{seat}"


def parse_paced(member: bytes | str) -> tuple[str, int, int] | None:
    """The (game id, version, seat) of an entry; ``None`` for one that is not ours. The game id may
    hold colons; the version and the seat, digits, are the last two parts."""
    parts = text(member).rsplit(":", 2)
    if len(parts) != 3 or not parts[0] or not parts[1].isdigit() or not parts[2].isdigit():
        return None
    return parts[0], int(parts[1]), int(parts[2])


def pace_bots(game_id: str, version: int, seats: list[int], due_ms: int) -> Operation[int]:
    """Put the moves of ``seats``' bots on the game at ``version`` in the paced index, due at
    ``due_ms``; a move already there keeps its due time (``NX``), so a repair that runs the
    lifecycle again (``workers.sweeper``) neither postpones it nor adds it twice. Returns how many
    were added."""
    pairs: list[str | int] = []
    for seat in seats:
        pairs += [due_ms, paced_member(game_id, version, seat)]
    if not pairs:
        return 0
    return int((yield index_call("ZADD", PACED, "NX", *pairs)))


def paced_moves(game_id: str, version: int, seats: list[int]) -> Operation[list[bool]]:
    """Whether the move of each of ``seats``' bots on the game at ``version`` waits in the paced
    index (its job is not queued yet)."""
    if not seats:
        return []
    members = [paced_member(game_id, version, seat) for seat in seats]
    scores: list[Any] = yield index_call("ZMSCORE", PACED, *members)
    return [score is not None for score in scores]


def take_due_bots(now_ms: int, limit: int = 100) -> Operation[list[tuple[str, int, int]]]:
    """Take the paced moves due at ``now_ms`` (earliest first, up to ``limit``): each one's ZREM
    decides which of several racing takers gets it, so each is taken exactly once. Returns the
    (game id, version, seat) of those this call took; an entry that is not ours is dropped."""
    members: list[bytes] = yield index_call("ZRANGEBYSCORE", PACED, "-inf", now_ms, "LIMIT", 0, limit)
    if not members:
        return []
    removed: list[int] = yield Pipelined(tuple(index_call("ZREM", PACED, m) for m in members))
    taken = []
    for member, won in zip(members, removed, strict=True):
        parsed = parse_paced(member)
        if won and parsed is not None:
            taken.append(parsed)
    return taken
