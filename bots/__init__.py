"""Bots: each picks a command from its own seat's view only (never the hidden state).

A game's bot module (``spec.bot_module`` of its ``GameSpec``: ``bots.<package>``, e.g.
``bots/skull_king/``) provides the whole ``Bot`` protocol: the ``normal`` level's
``choose(view, rng) -> command dict`` and the ``strong`` level's hooks ``sample``, ``light_view``
and ``value``; optionally ``reason`` (``Explains``). ``view`` is exactly what the API's
``GET /games/{id}/view`` returns for the bot's seat, and the choice is one of ``view["legal"]``.
``bot_for`` checks the module and names the game and the missing parts; ``bots.levels``,
``bots.search`` and ``bots.determinise`` then know no game by name.
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
    """What a game's bot module provides: the ``normal`` policy and the ``strong`` search's hooks."""

    def choose(self, view: dict[str, Any], rng: random.Random, /) -> dict[str, Any]:
        """One of ``view["legal"]``, chosen from ``view`` alone; ``rng`` is its only chance."""

    def sample(self, view: dict[str, Any], rng: random.Random, /) -> Any:
        """A whole rules state of the game that shows ``view`` to its seat: what the view shows
        copied as it is, what it hides drawn with ``rng`` among what the view leaves possible (the
        same view and ``rng`` give the same state, whatever the real hidden state)."""

    def light_view(self, state: Any, seat: int, /) -> dict[str, Any]:
        """The part of ``seat``'s view of ``state`` that ``choose`` reads (without ``legal``, which
        the search adds), built cheaply for the search's rollouts."""

    def value(self, rules: Any, before: Any, after: Any, seat: int, /) -> float:
        """How the rollout from state ``before`` to state ``after`` went for ``seat`` (higher is
        better), against the other seats."""


# the parts of ``Bot``, checked by ``bot_for`` (a runtime protocol names no missing part)
BOT_PARTS = ("choose", "sample", "light_view", "value")


@runtime_checkable
class Explains(Protocol):
    """Optional in a bot module: why its ``choose`` played ``command``."""

    def reason(self, view: dict[str, Any], command: dict[str, Any], /) -> tuple[str, dict[str, Any]] | None:
        """A glossary key (``bot.reason.*``) and its placeholders, or ``None`` when it has none."""


def bot_for(game: str) -> Bot:
    """The bot of a game by its public name; ``Rejected('unknown_game')`` for no such game, a
    ``TypeError`` naming the game and the missing parts for a bot module without the whole ``Bot``."""
    known = spec(game)
    return _bot(known.name, known.bot_module)


def choose(game: str, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return bot_for(game).choose(view, rng)


@cache
def _bot(game: str, path: str) -> Bot:
    module = importlib.import_module(path)
    missing = [part for part in BOT_PARTS if not callable(getattr(module, part, None))]
    if missing or not isinstance(module, Bot):
        raise TypeError(
            f"the bot of {game} ({path}) lacks {', '.join(missing)}: a game's bot module provides "
            "choose(view, rng), sample(view, rng), light_view(state, seat) and "
            "value(rules, before, after, seat) (docs/bots.md)"
        )
    return module
