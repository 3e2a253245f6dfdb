"""The one registry of playable games: each game's ``GameSpec``, and the table Decider around it.

Every game lives under one package name, ``<package>``: its rules and its spec in
``domain/<package>/`` (``SPEC`` in ``game.py``), its views in ``projections/<package>``, its bot in
``bots/<package>``. ``domain`` imports neither projections nor bots, so a spec names those two by
module path; ``projections.registry.views_for`` and ``bots.bot_for`` import them and check them
against their protocols. Adding a game is one entry in ``GAMES``. Nothing may copy the registry at
import time: ask ``specs()`` or ``spec(name)`` when needed, so a game registered later is seen too.
"""

from __future__ import annotations

from functools import cache

from domain import six_nimmt, skull, skull_king
from domain.kernel import Rejected
from domain.spec import GameSpec, ReplayCut
from domain.table import Table

__all__ = [
    "GAMES",
    "GameSpec",
    "ReplayCut",
    "game_names",
    "is_game",
    "register",
    "spec",
    "specs",
    "table_for",
]


GAMES: list[GameSpec] = [skull.SPEC, six_nimmt.SPEC, skull_king.SPEC]

_BY_NAME = {game.name: game for game in GAMES}


def register(game: GameSpec) -> None:
    """Add a game that lives outside ``domain`` (the tests' own game does so, through the
    ``TABLESTREAM_EXTRA_GAMES`` setting or its fixture); registering the same spec twice is harmless,
    another game under a taken name is refused."""
    known = _BY_NAME.get(game.name)
    if known is game:
        return
    if known is not None:
        raise ValueError(f"a game named {game.name!r} is already registered")
    GAMES.append(game)
    _BY_NAME[game.name] = game


def specs() -> list[GameSpec]:
    """Every playable game, in the order the server lists them."""
    return list(GAMES)


def is_game(name: object) -> bool:
    """Whether ``name`` is a registered game's public name (a dictionary lookup, for hot paths)."""
    return isinstance(name, str) and name in _BY_NAME


def game_names() -> list[str]:
    return [game.name for game in GAMES]


def spec(game: object) -> GameSpec:
    """A game by its public name, or ``Rejected('unknown_game')``."""
    if not isinstance(game, str) or game not in _BY_NAME:
        raise Rejected("unknown_game", f"Unknown game {game!r}; this server plays {', '.join(_BY_NAME)}.")
    return _BY_NAME[game]


def table_for(game: object) -> Table:
    """The table Decider of a game by its public name, or ``Rejected('unknown_game')``."""
    return _table(spec(game).name)


@cache
def _table(name: str) -> Table:
    return Table(_BY_NAME[name].rules)
