"""The one registry of playable games: a ``GameSpec`` per game, and the table Decider around it.

Every game lives in one package name, ``<package>``, in three places: its rules in
``domain/<package>/``, its views in ``projections/<package>.py``, its bot in
``workers/bots/<package>.py``. ``domain`` imports neither projections nor workers, so a spec names
those two by module path; ``projections.registry.views_for`` and ``workers.bots.bot_for`` import
them and check them against their protocols. Adding a game is one entry in ``GAMES``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from domain import six_nimmt, skull, skull_king
from domain.kernel import Rejected, Rules
from domain.six_nimmt import options as six_nimmt_options
from domain.skull import options as skull_options
from domain.skull_king import options as skull_king_options
from domain.table import Table


@dataclass(frozen=True, kw_only=True)
class GameSpec:
    """One playable game.

    ``min_players`` and ``max_players`` are the range without options (options may widen it, as
    Skull's ``two_sets`` does; ``rules.check_options`` has the last word). ``default_players`` is
    the table size the demo and the CLI use when none is given.
    """

    name: str  # the public name, in URLs and stored events: "six-nimmt"
    title: str  # how people write it: "6 nimmt!"
    package: str  # the module name shared by its rules, views and bot: "six_nimmt"
    rules: Rules[Any, Any, Any, Any]
    min_players: int
    max_players: int
    default_players: int

    def __post_init__(self) -> None:
        if self.rules.name != self.name:
            raise ValueError(f"the rules of {self.name!r} call themselves {self.rules.name!r}")
        if not self.min_players <= self.default_players <= self.max_players:
            raise ValueError(f"{self.name}: default_players is outside min_players..max_players")

    @property
    def rules_module(self) -> str:
        return f"domain.{self.package}"

    @property
    def views_module(self) -> str:
        """Where ``projections.registry`` finds ``view``, ``player_public`` and ``scoreboard``."""
        return f"projections.{self.package}"

    @property
    def bot_module(self) -> str:
        """Where ``workers.bots`` finds ``choose(view, rng)``."""
        return f"workers.bots.{self.package}"


GAMES: tuple[GameSpec, ...] = (
    GameSpec(
        name="skull",
        title="Skull",
        package="skull",
        rules=skull.RULES,
        min_players=skull_options.MIN_PLAYERS,
        max_players=skull_options.MAX_PLAYERS,
        default_players=4,
    ),
    GameSpec(
        name="six-nimmt",
        title="6 nimmt!",
        package="six_nimmt",
        rules=six_nimmt.RULES,
        min_players=six_nimmt_options.MIN_PLAYERS,
        max_players=six_nimmt_options.MAX_PLAYERS,
        default_players=4,
    ),
    GameSpec(
        name="skull-king",
        title="Skull King",
        package="skull_king",
        rules=skull_king.RULES,
        min_players=skull_king_options.MIN_PLAYERS,
        max_players=skull_king_options.MAX_PLAYERS,
        default_players=3,
    ),
)

_BY_NAME = {game.name: game for game in GAMES}


def specs() -> list[GameSpec]:
    """Every playable game, in the order the server lists them."""
    return list(GAMES)


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
