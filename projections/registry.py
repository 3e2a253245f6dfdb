"""Each game's projections, found through the one games registry (``domain.games``).

A game's projections live in one package, ``projections/<package>/`` of its ``GameSpec`` (the
``views_module``, or the package it is in: ``projections.packages``):

- the package itself is the views module: the functions of ``GameViews``;
- ``narration.py``: its events and commands in words, the ``GameNarration`` protocol;
- ``glossary/<lang>.json``: the game's own words, one file per language (``projections.words``
  merges them with the common glossary): its title ``game.<name>``, its sentences ``log.<name>.*``
  and its rules summary ``rules.<name>.*``.

``views_for`` and ``narration_for`` import a module once and check it has the protocol's parts.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol, runtime_checkable

from domain.games import spec
from projections.packages import glossary_dir, projections_package
from projections.say import Say, Sentence

__all__ = [
    "GameNarration",
    "GameViews",
    "glossary_dir",
    "narration_for",
    "projections_package",
    "views_for",
]


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


@runtime_checkable
class GameNarration(Protocol):
    """What one game adds to the log's sentences (``projections.narration``), in its glossary's
    ``log.<name>.*`` words; the table's own events are said centrally.

    ``SENTENCES``: one function per event type of the game (its wire tag), saying the event as the
    viewer received it (a hidden field is ``None`` and the sentence then stays vague).
    """

    SENTENCES: Mapping[str, Sentence]

    def describe_command(self, say: Say, command: Mapping[str, Any], /) -> str | None:
        """A command of the game as the predicate of the event it would make ("bids 2 tricks"),
        for hints and reviews; ``None`` for a command the game does not know."""


def views_for(game: str) -> GameViews:
    """The view module of a game by its public name; ``Rejected('unknown_game')`` for no such game."""
    return _views(spec(game).views_module)


def narration_for(game: str) -> GameNarration:
    """The narration module of a game (``<projections package>.narration``); ``Rejected
    ('unknown_game')`` for no such game, ``TypeError`` naming the game and the part it lacks."""
    return _narration(spec(game).name, f"{projections_package(game)}.narration")


@cache
def _views(path: str) -> GameViews:
    module = importlib.import_module(path)
    if not isinstance(module, GameViews):
        raise TypeError(
            f"{path} is not a game's views: it needs view, public, own, player_public and scoreboard"
        )
    return module


@cache
def _narration(game: str, path: str) -> GameNarration:
    try:
        module = importlib.import_module(path)
    except ModuleNotFoundError as missing:
        if missing.name != path:
            raise
        raise TypeError(f"{game} has no narration: no module {path}") from None
    lacking = [part for part in ("SENTENCES", "describe_command") if not hasattr(module, part)]
    if lacking or not isinstance(module, GameNarration):
        raise TypeError(f"{game}'s narration ({path}) lacks {' and '.join(lacking) or 'its parts'}")
    return module
