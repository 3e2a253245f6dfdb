"""6 nimmt!'s value of a rolled-out round for the ``strong`` level's search."""

from __future__ import annotations

from typing import Any

from bots.search import relative
from domain.six_nimmt.state import SixNimmtState


def value(rules: Any, before: SixNimmtState, after: SixNimmtState, seat: int) -> float:
    """The bullheads the others took from ``before`` to ``after`` (their mean) less ``seat``'s own:
    fewer bullheads is better."""
    return -relative(before.totals, after.totals, seat)
