"""The one games registry: every registered game has the whole shape, and its parts work together."""

from __future__ import annotations

import argparse
import importlib
import inspect
import random
import re
import types
import typing
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from bots import Bot, bot_for, choose
from domain.games import GameSpec, game_names, spec, specs, table_for
from domain.kernel import Command, Deciders, Event, Evolvers, Options, Rejected, Rules
from domain.table import TABLE_EVENTS
from projections.registry import GameViews, views_for
from projections.views import seat_view
from services.cli import demo
from tests.support.play import new_game

SPECS = specs()
GAME_MODULES = ("options", "commands", "events", "state", "decide", "evolve", "legal", "rules")


def by_name(game: GameSpec) -> str:
    return game.name


def members(union: Any) -> set[type[Any]]:
    return set(typing.get_args(union) or (union,))


def dispatched_type(function: Any) -> Any:
    """The annotated type of a dispatch function's second parameter (the command or the event)."""
    second = list(inspect.signature(function).parameters)[1]
    return typing.get_type_hints(function)[second]


def test_the_registry_lists_each_game_once_under_its_public_name() -> None:
    names = game_names()
    assert names == [game.name for game in SPECS]
    assert {"skull", "six-nimmt", "skull-king"} <= set(names)
    assert len(set(names)) == len({game.package for game in SPECS}) == len(SPECS)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) for name in names)
    assert all(spec(name).name == name and spec(name).title for name in names)


def test_an_unknown_game_is_rejected_by_every_lookup_with_unknown_game() -> None:
    lookups: list[Callable[[Any], object]] = [spec, table_for, views_for, bot_for]
    for lookup in lookups:
        for name in ("chess", 3, None):
            with pytest.raises(Rejected) as refused:
                lookup(name)
            assert refused.value.code == "unknown_game"
            assert ", ".join(game_names()) in refused.value.message


def test_a_spec_whose_rules_go_by_another_name_is_refused() -> None:
    with pytest.raises(ValueError, match="call themselves"):
        GameSpec(
            name="skull-queen",
            title="Skull Queen",
            blurb="♛",
            package="skull_queen",
            rules=spec("skull-king").rules,
            min_players=2,
            max_players=6,
            default_players=3,
            replay_cut=spec("skull-king").replay_cut,
            option_notes={},
        )


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_each_game_has_rules_with_the_kernel_shape(game: GameSpec) -> None:
    rules = game.rules
    assert isinstance(rules, Rules)
    assert rules.name == game.name
    assert issubclass(rules.options_type, Options)
    assert all(issubclass(kind, Command) for kind in members(rules.command_type))
    assert all(issubclass(kind, Event) for kind in members(rules.event_type))
    assert isinstance(rules.initial_state(rules.options_type(), game.default_players), rules.state_type)
    assert table_for(game.name).rules is rules
    assert importlib.import_module(game.rules_module).RULES is rules


def test_the_rules_shape_check_has_teeth() -> None:
    hollow = types.SimpleNamespace(name="hollow", decide=lambda *args: [], evolve=lambda *args: None)
    assert not isinstance(hollow, Rules)


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_each_game_package_has_the_one_shape(game: GameSpec) -> None:
    for module in GAME_MODULES:
        importlib.import_module(f"{game.rules_module}.{module}")


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_decide_has_one_function_per_command_typed_for_that_command(game: GameSpec) -> None:
    deciders = importlib.import_module(f"{game.rules_module}.decide").DECIDERS
    assert isinstance(deciders, Deciders)
    assert set(deciders.by_type) == members(game.rules.command_type)
    for kind, decide in deciders.by_type.items():
        assert dispatched_type(decide) is kind, decide.__name__


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_evolve_has_one_function_per_event_typed_for_that_event(game: GameSpec) -> None:
    evolvers = importlib.import_module(f"{game.rules_module}.evolve").EVOLVERS
    assert isinstance(evolvers, Evolvers)
    assert set(evolvers.by_type) == members(game.rules.event_type)
    for kind, evolve in evolvers.by_type.items():
        assert dispatched_type(evolve) is kind, evolve.__name__


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_event_tags_are_unique_and_distinct_from_the_table_events(game: GameSpec) -> None:
    tags = [kind.__struct_config__.tag for kind in members(game.rules.event_type)]
    table_tags = {kind.__struct_config__.tag for kind in TABLE_EVENTS}
    assert len(set(tags)) == len(tags)
    assert not table_tags & set(tags)


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_an_unknown_command_is_rejected_with_a_sentence_naming_the_game(game: GameSpec) -> None:
    class Dance(Command, tag="dance", frozen=True):
        pass

    g = new_game(game.name, game.default_players)
    with pytest.raises(Rejected) as refused:
        game.rules.decide(g.rules_state, Dance(), 0, g.seeds)  # type: ignore[arg-type]
    assert refused.value.code == "unknown_command"
    assert refused.value.message.startswith(f"{game.title} knows only the commands ")


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_the_player_counts_of_a_spec_are_the_ones_its_rules_accept(game: GameSpec) -> None:
    rules, options = game.rules, game.rules.options_type()
    for players in (game.min_players, game.default_players, game.max_players):
        rules.check_options(options, players)
    for players in (game.min_players - 1, game.max_players + 1):
        with pytest.raises(Rejected) as refused:
            rules.check_options(options, players)
        assert refused.value.code == "bad_player_count"


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_each_game_has_views_and_a_bot_with_the_protocols_shape(game: GameSpec) -> None:
    views, bot = views_for(game.name), bot_for(game.name)
    assert isinstance(views, GameViews)
    assert isinstance(bot, Bot)
    assert getattr(views, "__name__", None) == game.views_module
    assert getattr(bot, "__name__", None) == game.bot_module


def test_the_views_and_bot_shape_checks_have_teeth() -> None:
    assert not isinstance(types.SimpleNamespace(view=print, player_public=print), GameViews)
    assert not isinstance(types.SimpleNamespace(pick=print), Bot)


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_on_a_fresh_table_the_bot_chooses_a_legal_command_from_the_view(game: GameSpec) -> None:
    g = new_game(game.name, game.default_players)
    seat = sorted(g.table.to_act(g.state))[0]
    view: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(seat_view(g.state, len(g.events), seat)))
    assert view["game"] == game.name and view["seat"] == seat
    command = bot_for(game.name).choose(view, random.Random(0))
    assert command in view["legal"]
    assert choose(game.name, view, random.Random(0)) == command
    assert g.act(seat, command)


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_bots_of_the_registry_play_a_default_table_to_its_end(game: GameSpec) -> None:
    rng = random.Random(game.name)
    g = new_game(game.name, game.default_players, seed=game.name)
    for _ in range(5_000):
        if g.state.status == "finished":
            break
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        view = msgspec.json.decode(msgspec.json.encode(seat_view(g.state, len(g.events), seat)))
        g.act(seat, choose(game.name, view, rng))
    assert g.state.status == "finished" and g.state.winners
    assert views_for(game.name).scoreboard(g.rules_state)["totals"] == game.rules.scores(g.rules_state)


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_the_demo_offers_every_registered_game_with_its_default_table(game: GameSpec) -> None:
    """The demo reads its games and seat counts from the registry (the CLI test plays them all)."""
    parser = argparse.ArgumentParser()
    demo.add_arguments(parser)
    args = parser.parse_args(["--game", game.name])
    assert args.game == game.name
    table_for(game.name).create("demo", game.default_players, {}, "", practice=False)


@pytest.mark.parametrize("part", ["choose", "sample", "light_view", "value"])
def test_a_registered_game_whose_bot_module_lacks_a_part_is_refused_naming_the_game_and_the_part(
    part: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Skull's rules registered under other names, one with Skull's bot module whole and one with
    it but for ``part``: ``bot_for`` takes the whole one and refuses the other naming game and part."""
    import dataclasses
    import sys

    from domain import games

    monkeypatch.setattr(games, "GAMES", list(games.GAMES))  # both undone after the test: no game stays
    monkeypatch.setattr(games, "_BY_NAME", dict(games._BY_NAME))
    skull = spec("skull")
    skull_bot = importlib.import_module(skull.bot_module)
    for name in ("whole-skull", "botless-skull"):
        module = types.ModuleType(f"{name.replace('-', '_')}_bot")
        for hook in ("choose", "sample", "light_view", "value"):
            if name == "whole-skull" or hook != part:
                setattr(module, hook, getattr(skull_bot, hook))
        monkeypatch.setitem(sys.modules, module.__name__, module)
        rules = type("Renamed", (type(skull.rules),), {"name": name})()
        games.register(dataclasses.replace(skull, name=name, rules=rules, bot_module=module.__name__))
    assert isinstance(bot_for("whole-skull"), Bot)
    with pytest.raises(TypeError) as refused:
        bot_for("botless-skull")
    assert re.search(rf"\bbotless-skull\b.* lacks {part}:", str(refused.value)), refused.value
