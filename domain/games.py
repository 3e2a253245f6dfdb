"""The registry of playable games: public name -> rules, and the table Decider around them."""

from __future__ import annotations

from functools import cache
from typing import Any

from domain.kernel import Rejected, Rules
from domain.table import Table


def _all_rules() -> dict[str, Rules[Any, Any, Any, Any]]:
    from domain.six_nimmt import RULES as SIX_NIMMT
    from domain.skull import RULES as SKULL
    from domain.skull_king import RULES as SKULL_KING

    return {rules.name: rules for rules in (SKULL, SIX_NIMMT, SKULL_KING)}


@cache
def tables() -> dict[str, Table]:
    return {name: Table(rules) for name, rules in _all_rules().items()}


def table_for(game: Any) -> Table:
    """The table Decider of a game by its public name, or ``Rejected('unknown_game')``."""
    found = tables().get(game) if isinstance(game, str) else None
    if found is None:
        names = ", ".join(sorted(tables()))
        raise Rejected("unknown_game", f"Unknown game {game!r}; this server plays {names}.")
    return found
