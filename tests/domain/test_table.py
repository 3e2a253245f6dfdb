"""The table around every game: creation, seats, start, fairness bookkeeping, refusals."""

from __future__ import annotations

import random

import msgspec
import pytest

from domain.fairness import chain_position, verify_reveal
from domain.games import game_names, spec, table_for
from domain.kernel import Conflict, Rejected
from domain.table import GameFinished, GameStarted, PlayerJoined, SeedRevealed
from tests.support.play import new_game, play_random, seeds_from


def test_creation_records_the_full_options_with_their_defaults() -> None:
    table = table_for("six-nimmt")
    [created] = table.create("g", 4, {"tactical": True}, "00" * 32, practice=False)
    assert created.options["tactical"] is True
    assert created.options["end_score"] == 66


@pytest.mark.parametrize(
    ("players", "options", "code"),
    [
        (2, {}, "bad_player_count"),
        (3, {"nope": 1}, "invalid_options"),
        (3, {"two_sets": "x"}, "invalid_options"),
    ],
)
def test_creation_refuses_what_the_rules_refuse(players: int, options: dict, code: str) -> None:
    with pytest.raises(Rejected) as refused:
        table_for("skull").create("g", players, options, "00" * 32, practice=False)
    assert refused.value.code == code


def test_the_last_join_starts_the_game_in_the_same_batch() -> None:
    table = table_for("skull")
    seeds = seeds_from(1)
    state = table.fold(None, table.create("g", 3, {}, seeds.chain_commitment(0), practice=False))
    for seat in range(2):
        events = table.join(state, f"P{seat}", "", seeds)
        assert [type(e) for e in events] == [PlayerJoined]
        state = table.fold(state, events)
    events = table.join(state, "P2", "", seeds)
    assert isinstance(events[1], GameStarted)
    assert table.fold(state, events).status == "playing"
    with pytest.raises(Conflict) as full:
        table.join(table.fold(state, events), "Late", "", seeds)
    assert full.value.code == "table_full"


@pytest.mark.parametrize(
    ("name", "seed", "code"),
    [("", "", "invalid_name"), ("x" * 41, "", "invalid_name"), ("Ok", "s" * 65, "invalid_client_seed")],
)
def test_a_bad_name_or_client_seed_is_refused(name: str, seed: str, code: str) -> None:
    table = table_for("skull")
    state = table.fold(None, table.create("g", 3, {}, "00" * 32, practice=False))
    with pytest.raises(Rejected) as refused:
        table.join(state, name, seed, seeds_from(0))
    assert refused.value.code == code


def test_commands_before_the_start_and_after_the_end_are_conflicts() -> None:
    table = table_for("skull")
    seeds = seeds_from(2)
    waiting = table.fold(None, table.create("g", 3, {}, seeds.chain_commitment(0), practice=False))
    with pytest.raises(Conflict, match="not started"):
        table.decide(waiting, msgspec.convert({"type": "bid", "count": 1}, table.command_type), 0, seeds)
    game = play_random(new_game("skull", 3, seed=2), random.Random(2))
    assert isinstance(game.events[-1], GameFinished)
    with pytest.raises(Conflict) as over:
        game.act(0, {"type": "pass"})
    assert over.value.code == "game_over"


@pytest.mark.parametrize("game", game_names())
def test_every_seed_is_revealed_by_the_end_and_checks_against_the_commitment(game: str) -> None:
    players = spec(game).default_players
    g = play_random(new_game(game, players, seed=5), random.Random(5))
    reveals = [e for e in g.events if isinstance(e, SeedRevealed)]
    assert sorted(e.round for e in reveals) == list(
        range(1, g.table.rules.rounds_completed(g.rules_state) + 1)
    )
    for reveal in reveals:
        chain, index = chain_position(reveal.round)
        assert verify_reveal(bytes.fromhex(reveal.seed), index, g.state.commitments[chain])


def test_practice_tables_with_the_same_seed_and_client_seeds_deal_the_same_at_any_table() -> None:
    def first_deal(game_id: str, practice: bool) -> object:
        table = table_for("six-nimmt")
        seeds = seeds_from("practice")
        state = table.fold(None, table.create(game_id, 3, {}, seeds.chain_commitment(0), practice=practice))
        for seat in range(3):
            events = table.join(state, f"P{seat}", f"c{seat}", seeds)
            state = table.fold(state, events)
        return state.game_state.hands

    assert first_deal("table-a", practice=True) == first_deal("table-b", practice=True)
    assert first_deal("table-a", practice=False) != first_deal("table-b", practice=False)
