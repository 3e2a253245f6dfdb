"""Bots: each picks a command from its own seat's view only (never the hidden state).

A bot module (``workers/bots/<package>.py`` of the game's ``GameSpec`` in ``domain.games``) exposes
``choose(view, rng) -> command dict``; ``view`` is exactly what the API's
``GET /games/{id}/view`` returns for the bot's seat, and the choice is one of ``view["legal"]``.
"""

from __future__ import annotations

import importlib
import random
from functools import cache
from typing import Any, Protocol, runtime_checkable

from domain.games import spec


@runtime_checkable
class Bot(Protocol):
    def choose(self, view: dict[str, Any], rng: random.Random, /) -> dict[str, Any]:
        """One of ``view["legal"]``, chosen from ``view`` alone; ``rng`` is its only chance."""


def bot_for(game: str) -> Bot:
    """The bot of a game by its public name; ``Rejected('unknown_game')`` for no such game."""
    return _bot(spec(game).bot_module)


def choose(game: str, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return bot_for(game).choose(view, rng)


@cache
def _bot(path: str) -> Bot:
    module = importlib.import_module(path)
    if not isinstance(module, Bot):
        raise TypeError(f"{path} is not a game's bot: it needs choose(view, rng)")
    return module
