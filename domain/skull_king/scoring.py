"""Scoring one round (docs/rules.md): the seed's table by default, the classic edition as an option."""

from __future__ import annotations

from domain.skull_king.options import Scoring

PER_TRICK = 20
PER_ROUND = 10
PER_MISS = 10


def bonus_counted(bid: int, tricks: int, bonus: int) -> int:
    """Bonuses count only when the bid is exact (a zero bid made takes no tricks, hence no bonus)."""
    return bonus if tricks == bid else 0


def round_score(bid: int, tricks: int, bonus: int, round_number: int, scoring: Scoring) -> int:
    """A seat's score for one round, bonus included.

    b >= 1 exact: 20 x t (+ 10 x r in the seed's scoring) plus bonuses; b >= 1 missed: -10 per trick
    off; b = 0: +10 x r when no trick was taken, else -10 x r.
    """
    if bid == 0:
        return PER_ROUND * round_number if tricks == 0 else -PER_ROUND * round_number
    if tricks != bid:
        return -PER_MISS * abs(tricks - bid)
    base = PER_TRICK * tricks + (PER_ROUND * round_number if scoring == "seed" else 0)
    return base + bonus
