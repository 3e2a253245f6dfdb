"""The registry of playable games: public name -> rules, and the table Decider around them."""

from __future__ import annotations

import importlib
from functools import cache

from domain.kernel import Rejected
from domain.table import Table

GAME_MODULES = {
    "skull": "domain.skull",
    "six-nimmt": "domain.six_nimmt",
    "skull-king": "domain.skull_king",
}


@cache
def _table(name: str) -> Table:
    return Table(importlib.import_module(GAME_MODULES[name]).RULES)


def game_names() -> list[str]:
    return list(GAME_MODULES)


def table_for(game: object) -> Table:
    """The table Decider of a game by its public name, or ``Rejected('unknown_game')``."""
    if not isinstance(game, str) or game not in GAME_MODULES:
        raise Rejected("unknown_game", f"Unknown game {game!r}; this server plays {', '.join(GAME_MODULES)}.")
    return _table(game)
