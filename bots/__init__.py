"""Bots: each picks a command from its own seat's view only (never the hidden state).

A bot module (``bots/<package>.py`` of the game's ``GameSpec`` in ``domain.games``) exposes
``choose(view, rng) -> command dict``; ``view`` is exactly what the API's
``GET /games/{id}/view`` returns for the bot's seat, and the choice is one of ``view["legal"]``.
"""

from __future__ import annotations

import copy
import importlib
import random
from functools import cache
from typing import Any, Protocol, runtime_checkable

from domain.fairness import DrawStream
from domain.games import spec


class BotRandom(random.Random):
    """A ``random.Random`` whose every bit is read from a keyed HMAC-SHA256 stream
    (``domain.fairness.DrawStream``), not from a Mersenne Twister: a bot's chance is as
    unpredictable as its key (``SecretSeeds.bot_key``), however many of its draws a seat sees."""

    def __init__(self, key: bytes) -> None:
        self._stream = DrawStream(key, "bot")
        super().__init__(0)

    def seed(self, *args: Any, **kwargs: Any) -> None:
        """Ignored: the stream is fixed by its key (``random.Random.__init__`` calls this)."""

    def random(self) -> float:
        return (int.from_bytes(self._stream.take(7), "big") >> 3) / (1 << 53)

    def getrandbits(self, k: int) -> int:
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        return int.from_bytes(self._stream.take((k + 7) // 8), "big") >> (-k % 8)

    def getstate(self) -> Any:
        """Where the stream stands (a copy of it): ``setstate`` of it repeats the draws from there."""
        return copy.copy(self._stream)

    def setstate(self, state: Any) -> None:
        if not isinstance(state, DrawStream):
            raise TypeError("a bot's chance restores only a state its getstate gave")
        self._stream = copy.copy(state)


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
