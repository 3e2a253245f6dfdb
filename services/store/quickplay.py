"""Quick play's state in Redis: the queues, the tickets, the matches under way.

Every key carries the hash tag ``{qp}`` (one Redis Cluster slot), and every change of a ticket is
one run of ``quickplay.lua``, so a cancel racing a match either removes the ticket before the match
claims it or finds it claimed; nothing lives in a process's memory, so a matcher that restarts picks
up the queues and any match it had claimed but not finished (``MATCHES``).

- ``QUEUES``: set of queue names ``<game>:<players>``;
- ``queue_key``: zset ticket id -> arrival (ms) of one queue;
- ``ticket_key``: hash of one ticket (``id``, ``digest`` of its secret, ``game``, ``players``,
  ``name``, ``account_id``, ``account_name``, ``rating``, ``bots``, ``arrived``, ``seen``, ``state``:
  ``queued`` / ``matched`` / ``seated`` / ``timed_out``; once matched ``match``; once seated
  ``game_id``, ``seat`` and, until its holder reads it once, ``seat_token``);
- ``owner_key``: string, the live ticket of one account or browser;
- ``MATCHES``: zset match id -> when it was claimed, of the matches not yet finished;
- ``match_key``: hash of one match (``tickets``, ``game``, ``players``, ``bots``, ``game_id`` chosen at
  the claim, and per ticket ``token:<id>``, the seat token chosen before its join).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from services.store.keys import PREFIX
from services.store.requests import Call, Operation, Pipelined, ScriptCall, text, text_map

BASE = f"{PREFIX}:qp:{{qp}}"
QUEUES = f"{BASE}:queues"
MATCHES = f"{BASE}:matches"
LEASE = f"{BASE}:lease"


def queue_name(game: str, players: int) -> str:
    return f"{game}:{players}"


def queue_key(name: str) -> str:
    return f"{BASE}:queue:{name}"


def ticket_key(ticket_id: str) -> str:
    return f"{BASE}:ticket:{ticket_id}"


def owner_key(owner: str) -> str:
    return f"{BASE}:owner:{owner}"


def match_key(match_id: str) -> str:
    return f"{BASE}:match:{match_id}"


def _flat(fields: Mapping[str, str | int]) -> list[str | int]:
    return [part for pair in fields.items() for part in pair]


def open_ticket(
    ticket_id: str, game: str, players: int, owner: str | None, now_ms: int, fields: Mapping[str, str | int]
) -> Operation[tuple[str, str]]:
    """Queue a new ticket; ``("live", id)`` instead when ``owner`` holds a live ticket already."""
    name = queue_name(game, players)
    owner_or_none = owner_key(owner) if owner else ticket_key(ticket_id)
    keys = [ticket_key(ticket_id), queue_key(name), QUEUES, owner_or_none]
    args = ["open", ticket_id, name, now_ms, *_flat({**fields, "id": ticket_id, "arrived": now_ms})]
    if owner:
        args += ["owner", owner]
    status, found = yield ScriptCall("quickplay", keys, args)
    return text(status), text(found)


def read_ticket(ticket_id: str, digest: str, now_ms: int, deliver: bool) -> Operation[dict[str, str] | None]:
    """The ticket's fields (``None``: no such ticket for this secret); notes that its holder asked
    (``seen``), and with ``deliver`` hands out a seated ticket's seat token, once."""
    queue = yield Call(("HMGET", ticket_key(ticket_id), "game", "players"))
    name = queue_name(text(queue[0]), int(queue[1])) if queue[0] is not None else "none:0"
    args = ["read", digest, now_ms, "1" if deliver else "0"]
    reply = yield ScriptCall("quickplay", [ticket_key(ticket_id), queue_key(name)], args)
    if not reply:
        return None
    pairs = [text(part) for part in reply]
    return dict(zip(pairs[::2], pairs[1::2], strict=True))


def cancel_ticket(ticket_id: str, digest: str) -> Operation[str]:
    """``cancelled`` (no trace left), ``missing``, or the state that forbids it (``matched``, ``seated``)."""
    found = yield Call(("HMGET", ticket_key(ticket_id), "game", "players", "owner"))
    if found[0] is None:
        return "missing"
    name = queue_name(text(found[0]), int(found[1]))
    owner = owner_key(text(found[2])) if found[2] is not None else ticket_key(ticket_id)
    reply = yield ScriptCall("quickplay", [ticket_key(ticket_id), queue_key(name), owner], ["cancel", digest])
    return text(reply)


def agree_to_bots(ticket_id: str, digest: str) -> Operation[str]:
    """The holder agrees to bots after the wait; returns the ticket's state (``""``: missing)."""
    reply = yield ScriptCall("quickplay", [ticket_key(ticket_id)], ["bots", digest])
    return text(reply)


def queue_names() -> Operation[list[str]]:
    names = yield Call(("SMEMBERS", QUEUES))
    return sorted(text(name) for name in names)


def queued_tickets(name: str) -> Operation[list[dict[str, str]]]:
    """Every ticket of one queue, in arrival order (an id whose ticket expired leaves the queue)."""
    ids = [text(i) for i in (yield Call(("ZRANGE", queue_key(name), 0, -1)))]
    if not ids:
        return []
    replies = yield Pipelined(tuple(Call(("HGETALL", ticket_key(i))) for i in ids))
    gone = [i for i, reply in zip(ids, replies, strict=True) if not reply]
    if gone:
        keys = [queue_key(name), *(ticket_key(i) for i in gone)]
        yield ScriptCall("quickplay", keys, ["forget", *gone])
    return [text_map(reply) for reply in replies if reply]


def drop_ticket(ticket: Mapping[str, str], mode: str, ttl_s: int) -> Operation[bool]:
    """Take a queued ticket out of its queue: ``timeout`` keeps it ``timed_out`` for ``ttl_s`` (its
    holder reads why), ``abandon`` removes it (its holder stopped asking)."""
    name = queue_name(ticket["game"], int(ticket["players"]))
    owner = owner_key(ticket["owner"]) if ticket.get("owner") else ticket_key(ticket["id"])
    keys = [ticket_key(ticket["id"]), queue_key(name), owner]
    return bool((yield ScriptCall("quickplay", keys, ["drop", "", ttl_s, mode])))


def claim(
    name: str, match_id: str, ticket_ids: Sequence[str], now_ms: int, fields: Mapping[str, str | int]
) -> Operation[bool]:
    """Claim the tickets for one match, all or none: each must still be queued (not cancelled, not
    claimed by another match)."""
    keys = [queue_key(name), MATCHES, match_key(match_id), *(ticket_key(i) for i in ticket_ids)]
    return bool((yield ScriptCall("quickplay", keys, ["claim", match_id, now_ms, *_flat(fields)])))


def pending_matches() -> Operation[list[str]]:
    return [text(m) for m in (yield Call(("ZRANGE", MATCHES, 0, -1)))]


def match_of(match_id: str) -> Operation[dict[str, str]]:
    return text_map((yield Call(("HGETALL", match_key(match_id)))))


def tickets_of(ticket_ids: Sequence[str]) -> Operation[list[dict[str, str]]]:
    replies = yield Pipelined(tuple(Call(("HGETALL", ticket_key(i))) for i in ticket_ids))
    return [text_map(reply) for reply in replies]


def choose_token(match_id: str, ticket_id: str, token: str) -> Operation[str]:
    """The seat token of a ticket in a match: ``token`` unless one was chosen before (a re-run)."""
    key = match_key(match_id)
    field = f"token:{ticket_id}"
    _, chosen = yield Pipelined((Call(("HSETNX", key, field, token)), Call(("HGET", key, field))))
    return text(chosen)


def seated(
    match_id: str, game_id: str, seats: Sequence[tuple[Mapping[str, str], int, str]], ttl_s: int
) -> Operation[None]:
    """Finish a match: every ticket seated (its seat and token), the match gone from the pending set."""
    keys = [MATCHES, match_key(match_id)]
    args: list[str | int] = ["seated", match_id, game_id, ttl_s]
    for ticket, seat, token in seats:
        owner = owner_key(ticket["owner"]) if ticket.get("owner") else ticket_key(ticket["id"])
        keys += [ticket_key(ticket["id"]), owner]
        args += [seat, token]
    yield ScriptCall("quickplay", keys, args)


def give_back(match_id: str) -> Operation[None]:
    """Undo a match whose table was never made: each of its tickets still ``matched`` is queued
    again at its old place (its arrival), and the match is gone from the pending set."""
    match = text_map((yield Call(("HGETALL", match_key(match_id)))))
    ids = [i for i in match.get("tickets", "").split(",") if i]
    if not ids:
        yield Call(("ZREM", MATCHES, match_id))
        return None
    name = queue_name(match["game"], int(match["players"]))
    keys = [MATCHES, match_key(match_id), queue_key(name), *(ticket_key(i) for i in ids)]
    yield ScriptCall("quickplay", keys, ["give_back", match_id])
    return None


def take_lease(holder: str, ms: int) -> Operation[bool]:
    """The matcher's lease: one matcher runs at a time; ``holder`` keeps it by renewing it."""
    if (yield Call(("SET", LEASE, holder, "NX", "PX", ms))):
        return True
    current = yield Call(("GET", LEASE))
    if current is None or text(current) != holder:
        return False
    yield Call(("PEXPIRE", LEASE, ms))
    return True
