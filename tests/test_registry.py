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
from domain.fairness import Chance
from domain.games import GameSpec, game_names, spec, specs, table_for
from domain.kernel import Command, Deciders, Event, Evolvers, Options, Rejected, Rules
from domain.table import TABLE_EVENTS
from projections.narration import narrate
from projections.registry import (
    GameNarration,
    GameViews,
    glossary_dir,
    narration_for,
    projections_package,
    views_for,
)
from projections.say import Say
from projections.views import seat_view
from projections.words import GLOSSARY_PATH, LANGUAGES, glossary_files, merge, read_file
from services.cli import demo
from services.history.records import CommandRecord
from tests.support.online import online_game
from tests.support.play import new_game
from tests.support.samples import command_samples, event_samples, option_variants

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
            draws={},
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


# -- narration and words: projections/<package>/narration.py and glossary/<lang>.json --------------

RULES_SUMMARY = ("lead", "material", "goal", "play.1", "hidden")  # and "end" or "end.1": the rules page


def own_key(game: str, key: str) -> bool:
    """Whether a glossary key is one of ``game``'s own: its title, its sentences, its rules summary,
    the replay's words for its steps, its board's words (``play.<game>.*``)."""
    return key == f"game.{game}" or key.startswith(
        (f"log.{game}.", f"rules.{game}.", f"replay.{game}.", f"play.{game}.")
    )


def glossary_problems(game: GameSpec) -> list[str]:
    """What the game's own glossary files lack, each naming the game and the part."""
    folder = glossary_dir(game.name)
    keys: dict[str, set[str]] = {}
    problems = []
    for lang in LANGUAGES:
        path = folder / f"{lang}.json"
        if not path.is_file():
            problems.append(f"{game.name}: no {lang} glossary file {path}")
            continue
        keys[lang] = set(read_file(path))
        foreign = sorted(key for key in keys[lang] if not own_key(game.name, key))
        if foreign:
            problems.append(f"{game.name}: its {lang} glossary has keys not its own: {', '.join(foreign)}")
    english = keys.get("en", set())
    for lang, found in keys.items():
        if found != english:
            problems.append(
                f"{game.name}: its {lang} glossary lacks {sorted(english - found)} "
                f"and has {sorted(found - english)} beyond English"
            )
    wanted = [f"game.{game.name}", *(f"rules.{game.name}.{part}" for part in RULES_SUMMARY)]
    missing = [key for key in wanted if key not in english]
    if not {f"rules.{game.name}.end", f"rules.{game.name}.end.1"} & english:
        missing.append(f"rules.{game.name}.end")
    if missing:
        problems.append(f"{game.name}: its glossary lacks {', '.join(missing)}")
    return problems


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_each_game_has_its_own_words_in_every_language_in_its_projections_package(game: GameSpec) -> None:
    assert glossary_problems(game) == []


def test_no_game_keeps_its_own_words_in_the_common_glossary() -> None:
    for lang in LANGUAGES:
        common = read_file(GLOSSARY_PATH / f"{lang}.json")
        kept = {(name, key) for name in game_names() for key in common if own_key(name, key)}
        assert kept == set(), f"{lang}: move these to each game's glossary: {sorted(kept)}"


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_each_game_has_a_narration_with_a_sentence_for_each_of_its_events(game: GameSpec) -> None:
    narration = narration_for(game.name)
    assert isinstance(narration, GameNarration)
    assert getattr(narration, "__name__", None) == f"{projections_package(game.name)}.narration"
    events = {kind.__struct_config__.tag for kind in members(game.rules.event_type)}
    assert sorted(events - set(narration.SENTENCES)) == [], f"{game.name}: events without a sentence"
    assert sorted(set(narration.SENTENCES) - events) == [], f"{game.name}: sentences of no event of it"


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_each_game_says_its_played_events_and_commands_in_every_language(game: GameSpec) -> None:
    names = [f"Seat {n}" for n in range(game.max_players_with_options or game.max_players)]
    for lang in LANGUAGES:
        for event in event_samples(game.name, per_tag=1):
            try:
                sentence = narrate(game.name, msgspec.to_builtins(event), names, lang)
            except KeyError as missing:
                raise AssertionError(f"{game.name}: its {lang} glossary lacks {missing}") from None
            assert sentence != event.__struct_config__.tag, f"{game.name}: no sentence for {event}"
        for command in command_samples(game.name):
            said = narration_for(game.name).describe_command(Say(lang, game.name, names), command)
            assert said, f"{game.name}: describe_command does not say {command} in {lang}"


def _register_renamed_skull(monkeypatch: pytest.MonkeyPatch, name: str, **changes: Any) -> None:
    """Skull's rules under another name (registered until the test ends), with ``changes`` to its spec."""
    import dataclasses

    from domain import games

    monkeypatch.setattr(games, "GAMES", list(games.GAMES))  # undone after the test: no game stays
    monkeypatch.setattr(games, "_BY_NAME", dict(games._BY_NAME))
    skull = spec("skull")
    rules = type("Renamed", (type(skull.rules),), {"name": name})()
    games.register(dataclasses.replace(skull, name=name, rules=rules, **changes))


@pytest.mark.parametrize("part", ["narration", "SENTENCES", "describe_command"])
def test_a_registered_game_whose_narration_lacks_a_part_is_refused_naming_the_game_and_the_part(
    part: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game whose projections package has no narration module, or one without ``part``."""
    import sys

    package = types.ModuleType(f"mute_{part.lower()}_views")
    package.__path__ = []  # a package: its narration is package.narration
    for function in ("view", "public", "own", "player_public", "scoreboard"):
        setattr(package, function, getattr(views_for("skull"), function))
    monkeypatch.setitem(sys.modules, package.__name__, package)
    if part != "narration":
        narration = types.ModuleType(f"{package.__name__}.narration")
        skull = narration_for("skull")
        for hook in ("SENTENCES", "describe_command"):
            if hook != part:
                setattr(narration, hook, getattr(skull, hook))
        monkeypatch.setitem(sys.modules, narration.__name__, narration)
    name = f"mute-{part.lower().replace('_', '-')}"
    _register_renamed_skull(monkeypatch, name, views_module=package.__name__)
    assert isinstance(views_for(name), GameViews)
    with pytest.raises(TypeError) as refused:
        narration_for(name)
    expected = "has no narration" if part == "narration" else f"lacks {part}"
    assert re.search(rf"\b{name}\b.*{expected}", str(refused.value)), refused.value


def test_a_game_whose_glossary_is_another_games_is_named_with_the_words_it_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _register_renamed_skull(monkeypatch, "wordless-skull")  # its projections: Skull's, and their words
    problems = glossary_problems(spec("wordless-skull"))
    assert any(
        p.startswith("wordless-skull: its en glossary has keys not its own: game.skull") for p in problems
    )
    assert any(p.startswith("wordless-skull: its glossary lacks game.wordless-skull") for p in problems)
    with pytest.raises(ValueError, match="is in both"):  # two games, one glossary: refused at load
        merge(glossary_files("en"))


# -- draws: every label a game draws with is declared, with its words, in its spec --------------------


@pytest.mark.parametrize("game", SPECS, ids=by_name)
def test_every_draw_a_game_makes_is_declared_in_its_spec_with_its_words(
    game: GameSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Seeded random games of every option variant and table size, their timeouts' defaults too."""
    drawn: set[str] = set()
    stream = Chance.stream

    def recorded(chance: Chance, round_number: int, label: str) -> Any:
        drawn.add(label)
        return stream(chance, round_number, label)

    monkeypatch.setattr(Chance, "stream", recorded)
    for seed in range(12):
        rng = random.Random(f"draws-{game.name}-{seed}")
        variants = option_variants(game.name)
        options = variants[seed % len(variants)]
        # the default options at every table size; a variant at the table the rules accept it at
        players = rng.randint(game.min_players, game.max_players) if not options else game.default_players
        timers = {"turn_seconds": 60, "expire_minutes": 30, "takeover_after": 100}  # no bot takes over
        g = online_game(game.name, players, options, seed=seed, timers=timers)
        while g.state.status == "playing":
            seat = rng.choice(sorted(g.table.to_act(g.state)))
            default = g.table.default_command(g.state, seat, g.seeds)
            if default is not None and rng.random() < 0.3:
                g.record(
                    CommandRecord(id=f"t{len(g.entries)}", kind="timeout", seat=seat, body={}),
                    g.table.timeout(g.state, seat, default, g.seeds),
                )
            else:
                g.act(seat, rng.choice(g.legal(seat)))
    undeclared = sorted(drawn - set(game.draws))
    assert undeclared == [], f"{game.name} draws with {undeclared} but its spec's draws do not say so"
    assert all(words.strip() for words in game.draws.values())


# -- every part of the kernel's Rules, scramble included, named when missing -------------------------


def rules_parts() -> list[str]:
    """Every attribute and method of the kernel's ``Rules`` protocol."""
    return sorted({name for name in vars(Rules) if not name.startswith("_")} | set(Rules.__annotations__))


def missing_rules_parts(game: str, rules: object) -> str | None:
    """``None`` when ``rules`` has every part of ``Rules``, else a sentence naming the game and each
    missing part (``isinstance(rules, Rules)`` says only yes or no)."""
    missing = [part for part in rules_parts() if not hasattr(rules, part)]
    return f"{game}: its rules lack {', '.join(missing)}" if missing else None


@pytest.mark.parametrize("name", game_names())
def test_each_game_s_rules_have_every_part_of_the_kernel_s_rules_scramble_included(name: str) -> None:
    assert "scramble" in rules_parts()
    assert missing_rules_parts(name, spec(name).rules) is None


def test_a_game_whose_rules_have_no_scramble_is_named_by_game_and_part() -> None:
    rules = spec("skull").rules
    without = types.SimpleNamespace(
        **{part: getattr(rules, part) for part in rules_parts() if part != "scramble"}
    )
    assert not isinstance(without, Rules)
    assert missing_rules_parts("skull-queen", without) == "skull-queen: its rules lack scramble"
