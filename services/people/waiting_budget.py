"""Who may open one more table that waits for players: budgets that no set of addresses can spend
for somebody else.

A waiting table holds a place in the lobby and some memory until it fills or expires (an hour for a
real-time table, a day for a turn-based one). One global cap on them was a lockout: enough
addresses filled it and nobody could create a table. So a create counts against budgets that
belong to its creator, never against one pool that everyone shares:

- a creator who sends a working account token (the ``Authorization`` header or the browser's
  ``ts_account`` cookie) spends the account's own budget, which grows with trust:
  ``max_waiting_tables_new_account`` tables for a new account, one more for every rated game it
  finished, and the whole ``max_waiting_tables_per_account`` once it is established in any game
  (not provisional: enough games against enough distinct established opponents,
  ``projections.ratings.Skill``). An account is not counted against its address or network: many
  players share one address behind a carrier's NAT;
- a guest (no account, or a token that does not work: a guest may always create as a guest)
  spends its address's budget (``max_waiting_tables_per_address``), its network's
  (``max_waiting_tables_per_network``: an IPv4 /24, an IPv6 /48, so a block of addresses counts
  once) and the pool all guests share (``max_waiting_tables``). A flood from many networks can
  fill that pool, and only for guests: a guest then hears how to create on an allowance of its own
  (registering a name takes one request).

Turn-based tables are counted apart from real-time ones in every budget (a budget of each kind;
the guests' pool for turn-based tables is ``max_waiting_turn_based_tables``): a day-long wait of
turn-based tables never takes the places of the real-time tables that fill in minutes.

Each budget is a sorted set of the tables its holder created that may still wait, plus places
reserved by creates under way (``services.store.retention.reserve_waiting``); a create reserves a
place in each of its budgets before it writes, gives them all back when one is full, and turns its
reservations into its table once created.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Literal

import msgspec

from domain.games import game_names
from domain.table import MAX_TURN_BASED_EXPIRE_MINUTES
from projections.ratings import Skill
from services.errors import AppError, TooManyError, UnavailableError
from services.operating.config import Settings
from services.store import ratings as store_ratings
from services.store import retention
from services.store.event_store import EventStore
from services.table.lifecycle import wall_clock_ms

Kind = Literal["live", "turn"]

KEEP_MS = 2 * MAX_TURN_BASED_EXPIRE_MINUTES * 60_000
"""How long a budget's record lives after its last create: twice the longest a new table may wait."""

_skill = msgspec.json.Decoder(Skill)


@dataclass(frozen=True)
class Trust:
    """What an account has shown of itself: rated games finished, established in some game."""

    account_id: str
    games: int
    established: bool

    def allowance(self, start: int, cap: int) -> int:
        """The waiting tables the account may hold: ``start`` and one more per rated game, or
        ``cap`` once established; never more than ``cap``."""
        if self.established:
            return cap
        return min(cap, start + self.games)


@dataclass(frozen=True)
class Budget:
    """One budget a create spends: whose it is (``holder``, kept as a digest), how many tables it
    holds at most, and what a creator past it hears."""

    holder: str
    cap: int
    refusal: AppError


@dataclass(frozen=True)
class Held:
    """The places a create reserved, one per budget, until its table is created or refused."""

    keys: tuple[str, ...]
    reservation: str


def kind_of(options: dict[str, object]) -> Kind:
    return "turn" if options.get("turn_based") is True else "live"


async def trust_of(store: EventStore, account_id: str) -> Trust:
    """The account's rated games and whether it is established in any game (its ratings)."""
    found = await store.run(store_ratings.account_ratings(account_id, game_names()))
    skills = [_skill.decode(raw) for raw in found.values()]
    return Trust(account_id, sum(s.games for s in skills), any(s.established for s in skills))


def budgets(settings: Settings, kind: Kind, address: str, network: str, trust: Trust | None) -> list[Budget]:
    """The budgets a create of ``kind`` from ``address`` (in ``network``,
    ``services.api.http.network_of``) spends: the account's if ``trust`` (an account's), else the
    guest's address, network and the guests' pool."""
    label = "turn-based tables" if kind == "turn" else "tables"
    if trust is not None:
        cap = trust.allowance(
            settings.max_waiting_tables_new_account, settings.max_waiting_tables_per_account
        )
        grows = (
            ""
            if cap >= settings.max_waiting_tables_per_account
            else " (it grows with the rated games you finish)"
        )
        return [
            Budget(
                f"{kind}:account:{trust.account_id}",
                cap,
                TooManyError(
                    "too_many_tables_from_account",
                    f"Your account has {cap} {label} waiting for players, its allowance{grows}; "
                    "fill or leave one first.",
                    retry_after=60,
                ),
            )
        ]
    pool = settings.max_waiting_turn_based_tables if kind == "turn" else settings.max_waiting_tables
    return [
        Budget(
            f"{kind}:address:{address}",
            settings.max_waiting_tables_per_address,
            TooManyError(
                "too_many_tables_from_address",
                f"You already have {settings.max_waiting_tables_per_address} {label} waiting for players; "
                "fill or leave one first.",
                retry_after=60,
            ),
        ),
        Budget(
            f"{kind}:network:{network}",
            settings.max_waiting_tables_per_network,
            TooManyError(
                "too_many_tables_from_network",
                f"Your network already has {settings.max_waiting_tables_per_network} {label} waiting for "
                "players; fill or leave one first, or sign in to create on your account's allowance.",
                retry_after=60,
            ),
        ),
        Budget(
            f"{kind}:guests",
            pool,
            UnavailableError(
                "too_many_tables",
                f"{pool} {label} of guests are already waiting for players; join one, or register a "
                "name (one request) to create on an allowance of your own.",
                retry_after=30,
            ),
        ),
    ]


def holder_key(holder: str) -> str:
    return retention.waiting_budget_key(hashlib.sha256(holder.encode()).hexdigest()[:32])


async def reserve(store: EventStore, spent: list[Budget]) -> Held:
    """A place in every budget of ``spent``, or none and the refusal of the first that is full."""
    reservation = secrets.token_hex(8)
    taken: list[str] = []
    now = wall_clock_ms()
    for budget in spent:
        key = holder_key(budget.holder)
        if not await store.run(retention.reserve_waiting(key, reservation, budget.cap, now, KEEP_MS)):
            await settle(store, Held(tuple(taken), reservation), None)
            raise budget.refusal
        taken.append(key)
    return Held(tuple(taken), reservation)


async def settle(store: EventStore, held: Held, game_id: str | None) -> None:
    """The create of ``held`` ended: its table counts in each budget instead (``game_id``), or nothing."""
    await store.run_best_effort(  # a created table answers 201 whatever an index write does after it
        retention.settle_waiting(held.keys, held.reservation, game_id, wall_clock_ms(), KEEP_MS),
        "settle_waiting",
    )
