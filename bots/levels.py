"""Bot levels: one entry point, ``advise``, for every game and level, from a seat's own view only.

- ``easy``: the game's ``normal`` heuristic, but a share of its moves (``EASY_NOISE``) is a random
  legal move instead: a beginner's slips.
- ``normal``: the game's hand-written heuristic (its bot module's ``choose``, and ``reason`` where
  the game gives reasons).
- ``strong``: determinised search (``bots.search``): it samples the hidden cards/discs
  consistent with its view, plays each candidate in the sampled game with the ``normal`` policy for
  every seat to the end of the round, and picks the candidate that came out best in most samples
  (ties: the best mean), within its budget.
- ``random`` (the arena's floor only, never seated at a table): a uniformly random legal move.

Every level reads nothing but ``view`` (exactly ``GET /games/{id}/view`` for its seat) and draws
only from ``rng`` (at a table: ``BotRandom``, keyed from the game's secret).
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from bots import Explains, bot_for
from bots.search import PRODUCTION, Budget, search
from domain.table import BOT_LEVELS, DEFAULT_BOT_LEVEL

LEVELS: tuple[str, ...] = BOT_LEVELS  # what a host may seat: easy, normal, strong
ARENA_LEVELS: tuple[str, ...] = ("random", *LEVELS)  # random: the floor, in the arena only
DEFAULT_LEVEL: str = DEFAULT_BOT_LEVEL

EASY_NOISE = 0.35  # the share of an easy bot's moves that are a random legal move

Command = dict[str, Any]


class Advice(msgspec.Struct, frozen=True, kw_only=True):
    """What a level would play from a view, and why.

    ``command`` is one of ``view["legal"]``. ``reason`` is a glossary key (``bot.reason.*``) with
    its ``params`` (``{"n": 2}``), where the policy has a reason to give, else ``None``.
    ``shares``: for ``strong``, every candidate it weighed with the share of its simulations in
    which that candidate came out best (a tie splits the simulation among the tied; summing to 1,
    best share first, and ``command`` is always the first); for the other levels the chosen
    command alone, with share 1.0.
    """

    command: Command
    reason: str | None = None
    params: dict[str, Any] = msgspec.field(default_factory=dict)
    shares: list[tuple[Command, float]] = msgspec.field(default_factory=list)


def check_level(level: str, *, arena: bool = False) -> None:
    allowed = ARENA_LEVELS if arena else LEVELS
    if level not in allowed:
        raise ValueError(f"unknown bot level {level!r}; the levels are {', '.join(allowed)}")


def advise(
    game: str, view: dict[str, Any], level: str, rng: random.Random, budget: Budget = PRODUCTION
) -> Advice:
    """What the bot of ``level`` plays in ``game`` from ``view`` (one seat's own view), with ``rng``
    as its only chance. ``budget`` bounds the ``strong`` search (the production budget unless a
    test or the arena's documented ``--sims`` asks for less)."""
    check_level(level, arena=True)
    legal: list[Command] = list(view.get("legal") or [])
    if not legal:
        raise ValueError("the bot was asked to act with no legal command")
    if level == "random":
        return _alone(rng.choice(legal))
    if level == "easy" and len(legal) > 1 and rng.random() < EASY_NOISE:
        return _alone(rng.choice(legal))
    if level == "strong" and len(legal) > 1:
        return _strong(game, view, rng, budget)
    command = bot_for(game).choose(view, rng)
    return _with_reason(game, view, command)


def _strong(game: str, view: dict[str, Any], rng: random.Random, budget: Budget) -> Advice:
    found = search(game, view, rng, budget)
    if found.command == found.normal:
        normal = _with_reason(game, view, found.command)
        return Advice(command=found.command, reason=normal.reason, params=normal.params, shares=found.shares)
    command, share = found.shares[0]  # the chosen move heads the shares
    assert command == found.command
    return Advice(
        command=found.command,
        reason="bot.reason.best_in_simulations",
        params={"percent": round(100 * share), "simulations": found.simulations},
        shares=found.shares,
    )


def choose(
    game: str, view: dict[str, Any], level: str, rng: random.Random, budget: Budget = PRODUCTION
) -> Command:
    """``advise(...).command``: the move alone."""
    return advise(game, view, level, rng, budget).command


def _alone(command: Command) -> Advice:
    return Advice(command=command, shares=[(command, 1.0)])


def _with_reason(game: str, view: dict[str, Any], command: Command) -> Advice:
    """The chosen move with the reason its game's heuristic gives for it, if any."""
    bot = bot_for(game)
    found = bot.reason(view, command) if isinstance(bot, Explains) else None
    if found is None:
        return _alone(command)
    key, params = found
    return Advice(command=command, reason=key, params=params, shares=[(command, 1.0)])
