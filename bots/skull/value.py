"""Skull's value of a rolled-out round for the ``strong`` level's search."""

from __future__ import annotations

from typing import Any

from bots.search import relative
from domain.skull.state import SkullState


def worth(state: SkullState) -> list[float]:
    """Each seat's standing: its points, the discs it still owns, out or not, the game won."""
    winners = set(state.winners()) if state.game_over() else set()
    return [
        3.0 * s.points
        + 0.75 * len(s.owned)
        - (4.0 if s.eliminated else 0.0)
        + (20.0 if i in winners else 0.0)
        for i, s in enumerate(state.seats)
    ]


def value(rules: Any, before: SkullState, after: SkullState, seat: int) -> float:
    """What ``seat``'s ``worth`` gained from ``before`` to ``after`` against the mean of the others'."""
    return relative(worth(before), worth(after), seat)
