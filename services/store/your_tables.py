"""The tables an account sits at ("Your tables"): a sorted set in the account's own slot,
``ts:{acct:<id>}:tables`` (game id -> when the account began to take its seat, in ms).

A join notes the game here before it takes the seat (``note_table``), like ``retention.account_seating``:
a join that then fails, or a seat left since, leaves an entry that names a table where the account
holds no seat; the reader (``services.people.your_tables``) checks every entry against the table itself
and drops those (``drop_tables``), and those of tables that ended. So the index may hold too much,
never too little, and stays bounded (``MAX_TABLES``: the oldest go first).
"""

from __future__ import annotations

from services.store.keys import PREFIX, check_game_id
from services.store.requests import Call, Operation, Pipelined

MAX_TABLES = 200
"""Entries kept per account; an account seated at more tables sees its newest ones."""


def account_tables_key(account_id: str) -> str:
    """The account's tables (its slot: the hash tag is the account, as ``keys.account_events_key``)."""
    return f"{PREFIX}:{{acct:{check_game_id(account_id)}}}:tables"


def note_table(account_id: str, game_id: str, now_ms: int) -> Operation[None]:
    """The account is about to take a seat at ``game_id`` (its first note keeps its time)."""
    key = account_tables_key(account_id)
    yield Pipelined(
        (
            Call(("ZADD", key, "NX", now_ms, check_game_id(game_id))),
            Call(("ZREMRANGEBYRANK", key, 0, -(MAX_TABLES + 1))),
        )
    )


def account_tables(account_id: str) -> Operation[list[str]]:
    """The account's tables, the newest seat first."""
    raw: list[bytes | str] = yield Call(("ZREVRANGE", account_tables_key(account_id), 0, MAX_TABLES - 1))
    return [g.decode() if isinstance(g, bytes) else g for g in raw]


def drop_tables(account_id: str, game_ids: list[str]) -> Operation[None]:
    """Forget tables where the account holds no seat (any more), or that ended."""
    if game_ids:
        yield Call(("ZREM", account_tables_key(account_id), *game_ids))


def forget_account(account_id: str) -> Operation[None]:
    """The account was removed (retention): its tables go with it."""
    yield Call(("DEL", account_tables_key(account_id)))
