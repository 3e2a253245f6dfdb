"""Skull King's value of a rolled-out round for the ``strong`` level's search."""

from __future__ import annotations

from typing import Any

from bots.search import relative
from domain.skull_king.state import SkullKingState


def value(rules: Any, before: SkullKingState, after: SkullKingState, seat: int) -> float:
    """The score ``seat`` gained from ``before`` to ``after`` against the mean of the others', in
    tens of points (a round's scores run in tens)."""
    return relative(before.totals, after.totals, seat) / 10
