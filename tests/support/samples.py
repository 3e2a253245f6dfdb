"""Samples of any registered game taken from its own rules, for the suites about every game.

Instead of hand-written events and commands per game, a suite asks here: seeded games are played to
their end with random legal commands (``rules.legal_commands``), at the game's default table, with
its default options and with each other value of each of its boolean and choice options that the
rules accept there (``option_variants``), until every event type and every command type of the game
has been seen, or the budget of games is spent. Everything is seeded: the same samples every run.
"""

from __future__ import annotations

import random
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import msgspec

from domain.games import spec
from domain.kernel import Command, Event, Rejected
from tests.support.play import Game, new_game

GAMES_PER_VARIANT = 12  # the budget: at most this many seeded games of each option variant


def tag(kind: type[Any] | Any) -> str:
    """The wire tag of an event or command class (or of an instance)."""
    cls = kind if isinstance(kind, type) else type(kind)
    return str(cls.__struct_config__.tag)


def event_tags(game: str) -> set[str]:
    return {
        tag(kind) for kind in typing.get_args(spec(game).rules.event_type) or (spec(game).rules.event_type,)
    }


def command_tags(game: str) -> set[str]:
    rules = spec(game).rules
    return {tag(kind) for kind in typing.get_args(rules.command_type) or (rules.command_type,)}


def option_variants(game: str) -> list[dict[str, Any]]:
    """The default options, then one variant per other value of each boolean or choice option, each
    one the rules accept at the game's default table."""
    game_spec = spec(game)
    rules = game_spec.rules
    variants: list[dict[str, Any]] = [{}]
    for field in msgspec.structs.fields(rules.options_type):
        values: tuple[Any, ...] = ()
        if field.type is bool:
            values = (True, False)
        elif typing.get_origin(field.type) is typing.Literal:
            values = typing.get_args(field.type)
        for value in values:
            if value == field.default:
                continue
            try:
                rules.check_options(rules.options_type(**{field.name: value}), game_spec.default_players)
            except Rejected:
                continue
            variants.append({field.name: value})
    return variants


@dataclass(frozen=True)
class Step:
    """One batch of a played game: the seat whose command made it (``None``: the table's join and
    start), that command as builtins, and its events."""

    seat: int | None
    command: dict[str, Any] | None
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Played:
    """One seeded game played to its end, batch by batch."""

    options: dict[str, Any]
    seed: int
    game: Game
    steps: tuple[Step, ...]


def play(game: str, options: dict[str, Any], seed: int) -> Played:
    """A seeded game at the default table with ``options``, random legal commands to its end."""
    g = new_game(game, spec(game).default_players, options, seed=f"sample-{seed}")
    steps = [Step(None, None, tuple(g.events))]
    rng = random.Random(seed)
    for _ in range(20_000):
        if g.state.status == "finished":
            return Played(options, seed, g, tuple(steps))
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        command: Command = rng.choice(g.legal(seat))
        steps.append(Step(seat, msgspec.to_builtins(command), tuple(g.act(seat, command))))
    raise AssertionError(f"{game} with {options} (seed {seed}) did not finish")


@cache
def played(game: str) -> tuple[Played, ...]:
    """Seeded games of every option variant, until every event and command type was seen (or the
    budget ran out: ``event_samples`` and ``command_samples`` then lack those types)."""
    wanted_events, wanted_commands = event_tags(game), command_tags(game)
    games: list[Played] = []
    seen_events: set[str] = set()
    seen_commands: set[str] = set()
    for seed in range(GAMES_PER_VARIANT):
        for options in option_variants(game):
            one = play(game, options, seed)
            games.append(one)
            seen_events |= {tag(event) for step in one.steps for event in step.events}
            seen_commands |= {str(step.command["type"]) for step in one.steps if step.command}
        if wanted_events <= seen_events and wanted_commands <= seen_commands:
            break
    return tuple(games)


def steps(game: str) -> Iterator[Step]:
    for one in played(game):
        yield from one.steps


def event_samples(game: str, per_tag: int = 3) -> list[Event]:
    """Up to ``per_tag`` different events of each of the game's own event types (the table's left
    out), in the order they were first played."""
    own = event_tags(game)
    found: dict[str, list[Event]] = {}
    for step in steps(game):
        for event in step.events:
            kind = tag(event)
            if kind in own and event not in found.setdefault(kind, []) and len(found[kind]) < per_tag:
                found[kind].append(event)
    return [event for events in found.values() for event in events]


def command_samples(game: str) -> list[dict[str, Any]]:
    """One legal command (builtins) of each of the game's command types, as first played."""
    found: dict[str, dict[str, Any]] = {}
    for step in steps(game):
        if step.command is not None:
            found.setdefault(str(step.command["type"]), step.command)
    return list(found.values())
