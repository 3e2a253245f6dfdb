"""A 6 nimmt! bot that reads only its own seat's view (``projections.six_nimmt`` in the envelope).

It plays the card least likely to cost bullheads this turn, estimating how many of the other seats'
cards could land between a row's end and its own card and fill the row first; it takes the row with
the fewest bullheads when it must choose; and it drafts the cheapest cards (tactical mode).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from domain.six_nimmt.cards import DECK_SIZE, ROW_LIMIT, bullheads

_EPSILON = 1e-9


def _at_least(successes: int, trials: int, p: float) -> float:
    """P(X >= successes) for X ~ Binomial(trials, p)."""
    if successes <= 0:
        return 1.0
    return sum(math.comb(trials, k) * p**k * (1 - p) ** (trials - k) for k in range(successes, trials + 1))


def _unseen(view: dict[str, Any]) -> int:
    """Cards the bot cannot place: everything minus its hand, the rows and the penalty piles."""
    seen = len(view["hand"] or []) + sum(len(row["cards"]) for row in view["rows"])
    seen += sum(len(pile) for pile in view["piles"])
    return max(DECK_SIZE - seen, 1)


def card_risk(card: int, view: dict[str, Any], unseen: int | None = None) -> float:
    """Expected bullheads this card takes this turn (a rough, view-only estimate); ``unseen`` is
    ``_unseen(view)``, given when the caller weighs many cards of one view."""
    rows = view["rows"]
    below = [row for row in rows if row["end"] < card]
    if not below:
        return float(min(row["bullheads"] for row in rows))
    row = max(below, key=lambda r: r["end"])
    space = ROW_LIMIT - len(row["cards"])
    others = max(len(view["selected"]) - 1, 0)
    p = min((card - row["end"] - 1) / (unseen or _unseen(view)), 1.0)
    return float(row["bullheads"]) * _at_least(space, others, p)


def _row_cost(row: dict[str, Any]) -> float:
    """Fewest bullheads first; between equal rows the shorter, which leaves fewer cards to others."""
    return float(row["bullheads"]) + 0.01 * len(row["cards"])


def _cheapest(
    options: list[dict[str, Any]], cost: Callable[[dict[str, Any]], float], rng: random.Random
) -> dict[str, Any]:
    costs = [cost(option) for option in options]
    best = min(costs)
    return rng.choice([option for option, c in zip(options, costs, strict=True) if c <= best + _EPSILON])


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One of ``view["legal"]``: the cheapest-looking move; ties broken by ``rng``."""
    legal: list[dict[str, Any]] = view["legal"]
    if not legal:
        raise ValueError("the bot was asked to move with no legal command")
    kind = legal[0]["type"]
    if kind == "choose_row":
        rows = view["rows"]
        return _cheapest(legal, lambda c: _row_cost(rows[c["row"]]), rng)
    if kind == "draft_card":
        return _cheapest(legal, lambda c: float(bullheads(c["card"])), rng)
    unseen = _unseen(view)
    return _cheapest(legal, lambda c: card_risk(c["card"], view, unseen), rng)


def reason(view: dict[str, Any], command: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Why (glossary ``bot.reason.*``): the cheapest row, or the card least likely to take one."""
    if command.get("type") == "choose_row":
        return "bot.reason.cheapest_row", {}
    if command.get("type") == "select_card":
        return "bot.reason.lowest_risk", {}
    return None
