"""Each game's view module, found through the one games registry (``domain.games``).

A view module is ``projections/<package>.py`` of the game's ``GameSpec``; it must provide the
functions of ``GameViews``. ``views_for`` imports it once and checks it has them.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any, Protocol, runtime_checkable

from domain.games import spec


@runtime_checkable
class GameViews(Protocol):
    """What one game adds to the generic read models of ``projections.views``.

    Each function takes the game's folded state and returns JSON builtins; none may depend on
    anything ``viewer`` is not allowed to see.
    """

    def view(self, state: Any, viewer: int | None, /) -> dict[str, Any]:
        """The game's own fields of ``viewer``'s view (``None``: a spectator): ``public`` and
        ``own`` together."""

    def public(self, state: Any, /) -> dict[str, Any]:
        """The game's own fields that every viewer sees alike (built once per version)."""

    def own(self, state: Any, viewer: int | None, /) -> dict[str, Any]:
        """The game's own fields that depend on ``viewer``; no key of ``public``."""

    def player_public(self, state: Any, seat: int, /) -> dict[str, Any]:
        """What everyone sees of ``seat`` in the players list."""

    def scoreboard(self, state: Any, /) -> dict[str, Any]:
        """The game's score pad: its ``rounds`` and ``totals`` at least."""


def views_for(game: str) -> GameViews:
    """The view module of a game by its public name; ``Rejected('unknown_game')`` for no such game."""
    return _views(spec(game).views_module)


@cache
def _views(path: str) -> GameViews:
    module = importlib.import_module(path)
    if not isinstance(module, GameViews):
        raise TypeError(
            f"{path} is not a game's views: it needs view, public, own, player_public and scoreboard"
        )
    return module
