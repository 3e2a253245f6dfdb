"""'Your tables': every table where the caller holds a seat, the ones awaiting them first.

The seats come from two places: the account's index (``services.store.your_tables``: the tables its
joins noted, on every device it logs in from) and the seat tokens this browser remembers (its
``ts_seat_<id>`` cookies, given here as game id -> token). Each is checked against the table itself:
an account's seat is the one its ``seat_claimed`` names, still held (not left); a browser's token must
still open its seat. Tables that ended leave the list (and the account's index). Whose turn it is
and the deadline are the table's own (``to_act`` and the timer's ``clock``, as in every view): only
what every spectator sees, besides which seat is yours.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.errors import AppError
from services.history.folding import Folded
from services.store.event_store import EventStore
from services.store.your_tables import account_tables, drop_tables
from services.table.callers import Callers
from services.table.queries import GameQueries

MAX_BROWSER_SEATS = 50
"""Seat cookies looked at per request (a browser keeps one per table it sat at)."""
ENDED = ("finished", "expired")


@dataclass(frozen=True)
class Held:
    """A seat of the caller: at ``game_id``, ``seat``; ``account``: the account's (playable from any
    device it logs in from); ``here``: this browser holds the seat's token."""

    game_id: str
    seat: int
    account: bool
    here: bool


def account_seat(folded: Folded, account_id: str) -> int | None:
    """The seat the account holds at the table (claimed by it, not left), if any."""
    state = folded.state
    for player in state.seated:
        if player.account is not None and player.account.id == account_id and state.holds(player.seat):
            return player.seat
    return None


async def browser_seats(callers: Callers, tokens: Mapping[str, str]) -> dict[str, int]:
    """The seats the browser's remembered tokens still open (game id -> seat); stale ones are left out."""
    picked = list(tokens.items())[:MAX_BROWSER_SEATS]

    async def seat_of(game_id: str, token: str) -> int | None:
        try:
            return (await callers.remembered(game_id, [token])).seat
        except AppError:
            return None

    seats = await asyncio.gather(*(seat_of(game_id, token) for game_id, token in picked))
    return {game_id: seat for (game_id, _), seat in zip(picked, seats, strict=True) if seat is not None}


async def load_all(queries: GameQueries, game_ids: list[str]) -> dict[str, Folded]:
    """The tables that exist (a removed one is simply left out)."""

    async def load(game_id: str) -> Folded | None:
        try:
            return await queries.load(game_id)
        except AppError:
            return None

    found = await asyncio.gather(*(load(game_id) for game_id in game_ids))
    return {folded.game_id: folded for folded in found if folded is not None}


async def held_seats(
    store: EventStore,
    queries: GameQueries,
    callers: Callers,
    account_id: str | None,
    tokens: Mapping[str, str],
) -> tuple[list[Held], dict[str, Folded]]:
    """Every seat the caller holds at a table that has not ended, with the tables folded."""
    here = await browser_seats(callers, tokens)
    from_account = await store.run(account_tables(account_id)) if account_id is not None else []
    tables = await load_all(queries, list(dict.fromkeys([*from_account, *here])))
    held: dict[str, Held] = {}
    stale = []
    for game_id in from_account:
        folded = tables.get(game_id)
        seat = account_seat(folded, account_id) if folded is not None and account_id is not None else None
        if folded is None or seat is None or folded.state.status in ENDED:
            stale.append(game_id)
            continue
        held[game_id] = Held(game_id, seat, account=True, here=here.get(game_id) == seat)
    for game_id, seat in here.items():
        folded = tables.get(game_id)
        if game_id in held or folded is None or folded.state.status in ENDED:
            continue
        held[game_id] = Held(game_id, seat, account=False, here=True)
    if stale and account_id is not None:
        await store.run_best_effort(drop_tables(account_id, stale), "drop_tables")
    return list(held.values()), tables


async def entry(queries: GameQueries, held: Held, folded: Folded) -> dict[str, Any]:
    """One table of the list: the game, your seat, the others, whether it awaits you and until when."""
    state = folded.state
    names = state.names()
    awaited = folded.table.to_act(state)
    clock = await queries.clock_for(folded)
    taken_over = state.takeovers.get(held.seat) if held.seat in state.bots else None
    return {
        "game_id": held.game_id,
        "game": state.game,
        "status": state.status,
        "version": folded.version,
        "seat": held.seat,
        "name": names[held.seat],
        "opponents": [
            {"seat": seat, "name": name, "bot": seat in state.bots}
            for seat, name in enumerate(names)
            if seat != held.seat and any(p.seat == seat for p in state.seated)
        ],
        "seats": state.players,
        "seats_taken": len([p for p in state.seated if p.seat not in state.left]),
        "awaiting": held.seat in awaited and taken_over is None,
        "taken_over": taken_over,
        "turn_based": state.timers is not None and state.timers.turn_based,
        "practice": state.practice,
        "turn_seconds": clock["turn_seconds"] if clock else None,
        "deadline_ms": clock["deadline_ms"] if clock else None,
        "account": held.account,
        "here": held.here,
    }


def order_key(table: dict[str, Any]) -> tuple[int, int, int, float]:
    """Awaiting you first (the nearest deadline first, untimed last), then running, then waiting."""
    deadline = table["deadline_ms"]
    return (
        0 if table["awaiting"] else 1,
        0 if table["status"] == "playing" else 1,
        0 if deadline is not None else 1,
        deadline if deadline is not None else 0,
    )


async def your_tables(
    store: EventStore,
    queries: GameQueries,
    callers: Callers,
    account_id: str | None,
    tokens: Mapping[str, str],
) -> dict[str, Any]:
    """``{"tables": [...], "awaiting": n, "now_ms"}``: the caller's tables in order (``order_key``)."""
    held, tables = await held_seats(store, queries, callers, account_id, tokens)
    entries = [await entry(queries, h, tables[h.game_id]) for h in held]
    entries.sort(key=order_key)
    return {
        "tables": entries,
        "awaiting": sum(1 for e in entries if e["awaiting"]),
        "now_ms": queries.clock(),
    }
