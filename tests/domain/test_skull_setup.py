"""Skull tables: player counts, options, the first player, the opening state."""

from __future__ import annotations

import pytest

from domain.fairness import Chance
from domain.games import table_for
from domain.kernel import Rejected
from domain.skull.events import RoundStarted
from domain.skull.options import SkullOptions
from tests.domain.test_skull_support import of_type, skull_game, st
from tests.support.play import new_game

TABLE = table_for("skull")


def create(players: object, **options: object) -> None:
    TABLE.create("g", players, dict(options), "00" * 32, practice=False)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_three_to_six_players_may_sit_at_a_one_box_table(players: int) -> None:
    create(players)


@pytest.mark.parametrize("players", [0, 1, 2, 7, 12])
def test_other_player_counts_are_refused_without_two_sets(players: int) -> None:
    with pytest.raises(Rejected) as caught:
        create(players)
    assert caught.value.code == "bad_player_count"


@pytest.mark.parametrize("players", [3, 7, 10, 12])
def test_two_sets_allow_three_to_twelve_players(players: int) -> None:
    create(players, two_sets=True)


@pytest.mark.parametrize("players", [2, 13])
def test_two_sets_still_refuse_fewer_than_three_or_more_than_twelve(players: int) -> None:
    with pytest.raises(Rejected) as caught:
        create(players, two_sets=True)
    assert caught.value.code == "bad_player_count"


def test_every_player_of_a_two_set_table_still_has_four_discs() -> None:
    g = skull_game(12, two_sets=True)
    assert all(seat.hand == ("flower", "flower", "flower", "skull") for seat in st(g).seats)


@pytest.mark.parametrize(
    "options",
    [
        {"first_player": 4},
        {"first_player": -1},
        {"first_player": True},
        {"first_after_elimination": "dealer"},
        {"last_chance": "yes"},
        {"unknown": 1},
    ],
)
def test_bad_options_are_refused_as_invalid_options(options: dict[str, object]) -> None:
    with pytest.raises(Rejected) as caught:
        create(4, **options)
    assert caught.value.code == "invalid_options"


def test_the_defaults_follow_the_fr_seed_and_the_official_rules() -> None:
    assert SkullOptions() == SkullOptions(
        two_sets=False,
        reveal_all_own_first=False,
        first_after_elimination="eliminated_chooses",
        last_chance=False,
        first_player=None,
    )


def test_the_table_may_name_the_first_player() -> None:
    g = skull_game(5, first_player=3)
    (started,) = of_type(g.events, RoundStarted)
    assert started == RoundStarted(round=1, first_player=3, reason="table")


def test_otherwise_the_first_player_is_a_fair_draw_of_round_one() -> None:
    g = skull_game(6, seed="draw", first_player=None)
    (started,) = of_type(g.events, RoundStarted)
    assert started.reason == "draw"
    mix = bytes.fromhex(g.state.mix or "")
    assert started.first_player == Chance(g.seeds, mix).uniform(1, "first-player", 6)


def test_the_drawn_first_player_is_the_same_for_the_same_seeds_and_varies_with_them() -> None:
    def first(seed: int) -> int:
        g = skull_game(6, seed=seed, first_player=None)
        return int(of_type(g.events, RoundStarted)[0].first_player)

    assert first(7) == first(7)
    assert len({first(seed) for seed in range(30)}) > 1


def test_round_one_opens_with_every_seat_placing_at_once() -> None:
    g = skull_game(4)
    state = st(g)
    assert (state.phase, state.round, state.rounds_completed) == ("placement", 1, 0)
    assert g.table.to_act(g.state) == [0, 1, 2, 3]
    assert all(len(seat.hand) == 4 and not seat.stack for seat in state.seats)


def test_the_options_are_recorded_in_the_created_event() -> None:
    g = new_game("skull", 3, {"last_chance": True, "first_after_elimination": "left_neighbour"})
    created = g.events[0]
    assert created.options["last_chance"] is True  # type: ignore[attr-defined]
    assert created.options["first_after_elimination"] == "left_neighbour"  # type: ignore[attr-defined]
