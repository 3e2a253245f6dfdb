"""Retention: what is removed, and when. Finished games are kept for ever (they are the history:
replays, audits, exports, players' pages), in Redis and then, a day after their finish, in the
archive (``services.store.archive``); everything else that would otherwise grow without bound has
an end:

- a table that expired unfilled: removed ``expired_after_ms`` after its last change (it stays
  readable that long, so that its players see it expired);
- an abandoned game, waiting or playing: no change for ``abandoned_after_ms`` (a game with a turn
  timer never gets there: its timeouts move it, bots take its seats and it finishes, so this is
  the untimed table everyone walked away from);
- an unverified idle account: no password, no finished game, and no use (register, login,
  password, logout: an append; taking a seat) for ``idle_account_after_ms``; its name is free again;
- a game's disputes (``services.store.disputes``) go with the game when it is removed, once each is
  resolved: a game with an open dispute is never removed (its stream is the dispute's evidence),
  and is removed by the first pass after the last resolution that finds it still due;
- idempotency records (24 hours) and the waiting tables counted per client address (twice the
  longest wait) are Redis TTLs (``services.store.idempotency``, ``reserve_waiting``).

Three indexes (beside the lobby, ``services.store.indexes``) make a pass cost what it removes, not
what is stored: ``ACTIVITY`` (a waiting or playing game -> when a projection last changed it, in
ms), ``EXPIRED`` (an expired table -> when it was seen expired) and ``ACCOUNTS_SEEN`` (account id
-> its last append, in ms); a finished game leaves them. The sweeper
(``workers.sweeper``) runs ``retire`` every ``interval``; the time comes from the caller, so tests
drive it with a fake clock. A game is removed whole (every key of its slot, its index entries), in
one script of its slot that checks its head is still the one seen when it was picked
(``remove_game``), so a game that moved since it was picked stays, projected or not; an account
likewise (``remove_account.lua``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from services.store import name_index
from services.store.chat import chat_keys
from services.store.disputes import OPEN as OPEN_DISPUTES
from services.store.disputes import index_key as dispute_index_key
from services.store.disputes import stream_key as dispute_stream_key
from services.store.keys import (
    ACCOUNTS_SEEN,
    ACTIVITY,
    CHECKPOINT_FIELD,
    DIRTY,
    EXPIRED,
    LOBBY,
    LOBBY_ORDER,
    PACED,
    PREFIX,
    RETENTION_MARK,
    TIMERS,
    WAITING,
    account_events_key,
    account_seated_key,
    check_game_id,
    game_keys,
    history_key,
    name_claim_key,
)
from services.store.requests import (
    Call,
    Operation,
    Pipelined,
    ScriptCall,
    index_call,
    int_or_zero,
    text,
    version_of,
)
from services.store.your_tables import forget_account

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
BATCH = 200
MAX_BATCHES = 10  # per kind and pass: up to 2,000 of each every pass while a backlog drains
ACCOUNT_EVENTS_PATTERN = f"{PREFIX}:{{acct:*}}:events"


@dataclass(frozen=True)
class RetentionPolicy:
    expired_after_ms: int = DAY_MS
    abandoned_after_ms: int = 14 * DAY_MS
    idle_account_after_ms: int = 30 * DAY_MS
    batch: int = BATCH
    max_batches: int = MAX_BATCHES


@dataclass
class Retired:
    """What one pass removed."""

    expired: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)
    accounts: list[str] = field(default_factory=list)


# -- the activity of games ------------------------------------------------------------------------


def activity_calls(game_id: str, status: str, now_ms: int) -> tuple[Call, ...]:
    """The index calls after a projection changed the game to ``status``
    (``indexes.after_projection``): a waiting or playing game's activity as of ``now_ms``, an
    expired table's expiry, and nothing kept for a finished game or a table an operator closed
    (both stay, like their exports)."""
    check_game_id(game_id)
    kind = activity_kind(status)
    if kind == "kept":
        return (index_call("ZREM", ACTIVITY, game_id), index_call("ZREM", EXPIRED, game_id))
    if kind == "expired":
        return (index_call("ZREM", ACTIVITY, game_id), index_call("ZADD", EXPIRED, "NX", now_ms, game_id))
    return (index_call("ZADD", ACTIVITY, now_ms, game_id),)


ActivityKind = Literal["active", "expired", "kept"]


def activity_kind(status: str) -> ActivityKind:
    """Which retention index a game of ``status`` belongs in: ``active`` (waiting or playing: its
    last activity), ``expired`` (an expired table), ``kept`` (finished or closed: neither). The
    projection script writes the same (``project_views.lua``) when the indexes live on its server."""
    if status in ("finished", "closed"):
        return "kept"
    if status == "expired":
        return "expired"
    return "active"


def retire(now_ms: int, policy: RetentionPolicy) -> Operation[Retired]:
    """One retention pass at ``now_ms``: remove the expired tables, abandoned games and idle
    unverified accounts that are due, ``policy.batch`` of each kind at a time, for as long as a
    batch comes back full (a backlog drains), up to ``policy.max_batches`` batches of each."""
    retired = Retired()
    for index, after, removed in (
        (EXPIRED, policy.expired_after_ms, retired.expired),
        (ACTIVITY, policy.abandoned_after_ms, retired.abandoned),
    ):
        kept = 0  # due but kept (they moved): still in the index, so the next batch starts after them
        for _ in range(policy.max_batches):
            raw = yield index_call(
                "ZRANGEBYSCORE", index, "-inf", now_ms - after, "WITHSCORES", "LIMIT", kept, policy.batch
            )
            picked = scored_pairs(raw)
            for game_id, score in picked:
                if (yield from remove_game(game_id, index, score)):
                    removed.append(game_id)
                else:
                    kept += 1
            if len(picked) < policy.batch:
                break
    retired.accounts = yield from retire_accounts(now_ms, policy)
    return retired


def remove_game(game_id: str, index: str, seen_ms: float) -> Operation[bool]:
    """Delete every key of the game and its entries in the indexes, unless it moved since it was
    picked with score ``seen_ms`` in ``index`` (``ACTIVITY`` or ``EXPIRED``). ``True`` if removed.

    The head is read first, with the views' checkpoint; then the game must still have that score
    and no dirty mark (an append marks the game dirty before it writes, and the projection clears
    the mark in the same round trip that moves the score on); then one script of the game's slot
    (``remove_game.lua``) deletes its keys only if the head is still the one read, the views are at
    it, no projection is pending, the game is not finished and every dispute of the game is
    resolved. An append acknowledged at any point of this keeps the game, whether or not its
    projection ran; so does a dispute opened after the game's disputes were read.
    The game's disputes (``services.store.disputes``: their streams and index, all resolved) go
    with it."""
    k = game_keys(game_id)
    top, checkpoint = yield Pipelined(
        (Call(("XREVRANGE", k.events, "+", "-", "COUNT", 1)), Call(("HGET", k.views, CHECKPOINT_FIELD)))
    )
    head = version_of(top[0][0]) if top else 0
    if head != int_or_zero(checkpoint):
        return False  # a projection lags: the game moved
    score, dirty = yield Pipelined(
        (index_call("ZSCORE", index, game_id), index_call("ZSCORE", DIRTY, game_id))
    )
    if score is None or float(score) != seen_ms or dirty is not None:
        return False
    disputes = [text(d) for d in (yield Call(("ZRANGE", dispute_index_key(game_id), 0, -1)))]
    streams = [dispute_stream_key(game_id, d) for d in disputes]
    others = (k.commands, k.seat_commands, k.seats, k.secret, k.tokens, k.timer, *chat_keys(game_id))
    keys = [k.events, k.views, k.pending, dispute_index_key(game_id), *streams, *others]
    if not (yield ScriptCall("remove_game", keys, [head, len(streams)])):
        return False
    paced = yield from _paced_entries(game_id)
    listed = [f"{game_id}/{d}" for d in disputes]  # resolved: still listed open only if that mark was lost
    yield Pipelined(
        (
            index_call("HDEL", LOBBY, game_id),
            index_call("ZREM", LOBBY_ORDER, game_id),
            index_call("ZREM", WAITING, game_id),
            index_call("ZREM", TIMERS, game_id),
            index_call("ZREM", DIRTY, game_id),
            index_call("ZREM", ACTIVITY, game_id),
            index_call("ZREM", EXPIRED, game_id),
            *((index_call("ZREM", PACED, *paced),) if paced else ()),
            *((index_call("ZREM", OPEN_DISPUTES, *listed),) if listed else ()),
        )
    )
    return True


def _paced_entries(game_id: str) -> Operation[list[bytes]]:
    """The game's entries in ``PACED`` (``<game id>:<version>:<seat>``), by ``ZSCAN`` of the index."""
    pattern = "".join(f"\\{c}" if c in "*?[]\\" else c for c in game_id) + ":*"
    found: list[bytes] = []
    cursor = 0
    while True:
        cursor, raw = yield index_call("ZSCAN", PACED, cursor, "MATCH", pattern, "COUNT", 500)
        members = [m for m, _ in raw] if raw and isinstance(raw[0], list | tuple) else raw[::2]
        found += [m for m in members if text(m).rsplit(":", 2)[0] == game_id]
        if int(cursor) == 0:
            return found


# -- accounts -------------------------------------------------------------------------------------


def account_seen(account_id: str, now_ms: int) -> Operation[None]:
    """Note an append to the account (``services.store.accounts.append_account``)."""
    yield index_call("ZADD", ACCOUNTS_SEEN, now_ms, account_id)


def account_seating(account_id: str, now_ms: int) -> Operation[bool]:
    """An account is about to take a seat: noted in its own slot (``account_seat.lua``) before the
    join, so that a pass removing it in between keeps it. ``False``: the account is gone (removed)."""
    k = account_events_key(account_id)
    return bool((yield ScriptCall("account_seat", [k, account_seated_key(account_id)], [now_ms])))


def account_known(account_id: str, now_ms: int) -> Operation[None]:
    """Index an account found by the backfill, unless its last append is already there."""
    yield index_call("ZADD", ACCOUNTS_SEEN, "NX", now_ms, account_id)


def retire_accounts(now_ms: int, policy: RetentionPolicy) -> Operation[list[str]]:
    """Remove the accounts idle for ``policy.idle_account_after_ms`` that have no password and no
    finished game; the others leave the index until their next append puts them back. Batches of
    ``policy.batch`` while one comes back full, up to ``policy.max_batches``.

    An account's stream is read with its head; its score is read again; then one script of the
    account's slot (``remove_account.lua``) deletes the stream only if its head is still the one
    read (and it still has no password), so an append in between (a password set, a login) keeps it,
    and only if it took no seat since ``cutoff_ms``: a join notes its seat in the account's slot
    first (``account_seating``), and is refused once the account is gone. Then its name is
    released, if the account still holds it."""
    removed: list[str] = []
    kept = 0  # due but kept (used since it was picked): still in the index
    for _ in range(policy.max_batches):
        raw = yield index_call(
            "ZRANGEBYSCORE",
            ACCOUNTS_SEEN,
            "-inf",
            now_ms - policy.idle_account_after_ms,
            "WITHSCORES",
            "LIMIT",
            kept,
            policy.batch,
        )
        picked = scored_pairs(raw)
        for account_id, seen in picked:
            gone = yield from _remove_account(account_id, seen, now_ms - policy.idle_account_after_ms)
            if gone is True:
                removed.append(account_id)
            elif gone is None:
                kept += 1
        if len(picked) < policy.batch:
            break
    return removed


def _remove_account(account_id: str, seen: float, cutoff_ms: int) -> Operation[bool | None]:
    """``True``: removed; ``False``: never to be removed (out of the index); ``None``: kept for now."""
    events = yield Call(("XRANGE", account_events_key(account_id), "-", "+"))
    games = yield Call(("ZCARD", history_key(account_id)))
    names = [_decoded(fields.get(b"d")) for _, fields in events]
    registered = next((n for n in names if n.get("type") == "account_registered"), None)
    has_password = any(n.get("type") == "password_set" for n in names)
    if has_password or games or registered is None:
        yield index_call("ZREM", ACCOUNTS_SEEN, account_id)
        return False
    again = yield index_call("ZSCORE", ACCOUNTS_SEEN, account_id)
    if again is None or float(again) != seen:
        return None
    head = version_of(events[-1][0])
    keys = [account_events_key(account_id), account_seated_key(account_id)]
    if not (yield ScriptCall("remove_account", keys, [head, cutoff_ms])):
        return None
    yield ScriptCall("release_name", [name_claim_key(registered["skeleton"])], [account_id])
    yield from forget_account(account_id)  # its "Your tables" index (services.store.your_tables)
    yield from name_index.remove(str(registered["skeleton"]), account_id)  # the operator's search
    yield index_call("ZREM", ACCOUNTS_SEEN, account_id)
    return True


# -- the backfill: data stored before these indexes (or since their server lost them) ------------


def backfilled() -> Operation[bool]:
    """Whether every game and account stored was indexed once (``RETENTION_MARK``)."""
    return bool((yield index_call("EXISTS", RETENTION_MARK)))


def mark_backfilled(now_ms: int) -> Operation[None]:
    yield index_call("SET", RETENTION_MARK, now_ms)


def unless_indexed(calls: tuple[Call, ...]) -> Operation[None]:
    """``activity_calls`` of the backfill: entries added only where there are none (``NX``)."""
    nx = tuple(
        index_call(call.args[0], call.args[1], "NX", *call.args[2:])
        if call.args[0] == "ZADD" and "NX" not in call.args
        else call
        for call in calls
    )
    yield Pipelined(nx)


def scan_accounts() -> Operation[list[str]]:
    """Every account id of one server (``SCAN`` of the account streams)."""
    found: list[str] = []
    cursor = 0
    while True:
        cursor, keys = yield Call(("SCAN", cursor, "MATCH", ACCOUNT_EVENTS_PATTERN, "COUNT", 500))
        for key in keys:
            name = text(key)
            head, tail = f"{PREFIX}:{{acct:", "}:events"
            if name.startswith(head) and name.endswith(tail):
                found.append(name[len(head) : -len(tail)])
        if int(cursor) == 0:
            return found


# -- waiting-table budgets (services.people.waiting_budget) -----------------------------------------------

RESERVATION_MS = 60_000  # a create that died between its reservation and its table frees it after this


def waiting_budget_key(holder_digest: str) -> str:
    """zset: the tables one budget's holder created that may still wait (game id -> ms), plus
    reservations (``?<id>``); the holder (an account, an address, a network, the guests' pool) is
    named by a digest only."""
    return f"{PREFIX}:waiting-from:{holder_digest}"


def reserve_waiting(key: str, reservation: str, cap: int, now_ms: int, keep_ms: int) -> Operation[bool]:
    """Reserve a place for one more waiting table in the budget ``key``: ``False`` when it already
    holds ``cap`` tables waiting (or reserved). The reservation is added first and counted with the
    others, so racing creates never pass the cap together. Only a budget that looks full is pruned
    (tables no longer in ``WAITING``, stale reservations) and counted again, so a create costs two
    commands whatever the budget holds; the key lives ``keep_ms`` after its last create."""
    _, count, _ = yield Pipelined(
        (
            index_call("ZADD", key, now_ms, f"?{reservation}"),
            index_call("ZCARD", key),
            index_call("PEXPIRE", key, keep_ms),
        )
    )
    if int(count) <= cap:
        return True
    members = scored_pairs((yield index_call("ZRANGE", key, 0, -1, "WITHSCORES")))
    games = [m for m, _ in members if not m.startswith("?")]
    scores = (yield index_call("ZMSCORE", WAITING, *games)) if games else []
    gone = [g for g, s in zip(games, scores, strict=True) if s is None]
    stale = [m for m, at in members if m.startswith("?") and now_ms - at > RESERVATION_MS]
    counted = len(members) - len(gone) - len(stale)
    dropped = [*gone, *stale] + ([f"?{reservation}"] if counted > cap else [])
    if dropped:
        yield index_call("ZREM", key, *dropped)
    return counted <= cap


def settle_waiting(
    keys: Sequence[str], reservation: str, game_id: str | None, now_ms: int, keep_ms: int
) -> Operation[None]:
    """The create of ``reservation`` ended: in each budget of ``keys`` its table counts instead
    (``game_id``), or nothing. The table is added before the reservation goes, and the key's time
    to live set again: a budget that held only the reservation would otherwise be removed with it
    and made anew by the table's ``ZADD``, without a time to live, for ever."""
    calls = []
    for key in keys:
        if game_id is not None:
            calls.append(index_call("ZADD", key, now_ms, game_id))
        calls.append(index_call("ZREM", key, f"?{reservation}"))
        if game_id is not None:
            calls.append(index_call("PEXPIRE", key, keep_ms))
    if calls:
        yield Pipelined(tuple(calls))


# -- helpers --------------------------------------------------------------------------------------


def scored_pairs(raw: list[object]) -> list[tuple[str, float]]:
    """``WITHSCORES`` replies: pairs (RESP3), or flat (RESP2)."""
    if raw and isinstance(raw[0], list | tuple):
        return [(text(member), float(score)) for member, score in raw]  # type: ignore[misc]
    return [(text(raw[i]), float(raw[i + 1])) for i in range(0, len(raw), 2)]  # type: ignore[arg-type]


def _decoded(data: bytes | None) -> dict[str, object]:
    if data is None:
        return {}
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return {}
    return value if isinstance(value, dict) else {}
