"""The Skull bot: always legal, from its own view only, and better than chance."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from bots import choose as choose_for_game
from bots.skull import choose
from projections.views import seat_view
from tests.domain.test_skull_support import F, S, challenge, do, place, random_options, skull_game, st
from tests.support.play import Game


def view_of(g: Game, seat: int) -> dict[str, Any]:
    """Exactly what ``GET /games/{id}/view`` returns to the seat, through JSON."""
    view: dict[str, Any] = msgspec.json.decode(msgspec.json.encode(seat_view(g.state, len(g.events), seat)))
    return view


def bot_move(g: Game, seat: int, rng: random.Random) -> dict[str, Any]:
    view = view_of(g, seat)
    command = choose(view, rng)
    assert command in view["legal"]
    return command


@pytest.mark.thorough
def test_bots_in_every_seat_finish_games_with_every_option_and_table_size() -> None:
    for number in range(60):
        rng = random.Random(number)
        two_sets = number % 6 == 0
        players = rng.randint(3, 12 if two_sets else 6)
        g = skull_game(players, seed=number, first_player=None, **random_options(rng, two_sets))
        for _ in range(5_000):
            if g.state.status == "finished":
                break
            seat = rng.choice(g.table.to_act(g.state))
            g.act(seat, bot_move(g, seat, rng))
        assert g.state.status == "finished" and len(g.state.winners) == 1


def test_the_bot_is_registered_for_skull() -> None:
    g = skull_game(3)
    view = view_of(g, 0)
    assert choose_for_game("skull", view, random.Random(1)) in view["legal"]


@pytest.mark.thorough
def test_a_bot_beats_random_players_more_often_than_its_fair_share() -> None:
    wins, games = 0, 150
    for number in range(games):
        rng = random.Random(number)
        g = skull_game(3, seed=number, first_player=None)
        while g.state.status != "finished":
            seat = rng.choice(g.table.to_act(g.state))
            move = bot_move(g, seat, rng) if seat == 0 else msgspec.to_builtins(rng.choice(g.legal(seat)))
            g.act(seat, move)
        wins += g.state.winners == (0,)
    assert wins / games > 0.38  # a third is chance; measured about 0.46


def test_the_bot_plays_the_last_chance_disc_first_since_everyone_knows_it_is_a_flower() -> None:
    view = {"legal": [{"type": "place_disc", "disc": S}, {"type": "place_disc", "disc": "last_chance"}]}
    assert all(choose(view, random.Random(n)) == view["legal"][1] for n in range(20))


def test_the_bot_does_not_open_the_auction_on_top_of_its_own_skull_while_it_can_place() -> None:
    g = skull_game(3)
    place(g, [S, F, F])
    for n in range(30):
        assert bot_move(g, 0, random.Random(n))["type"] == "place_disc"


def test_the_bot_passes_a_bid_beyond_what_it_believes_safe() -> None:
    g = skull_game(3, first_player=1)
    place(g, [S, F, F])
    do(g, 1, "place_disc", disc=F)
    do(g, 2, "place_disc", disc=F)
    do(g, 0, "place_disc", disc=F)
    do(g, 1, "bid", count=3)
    do(g, 2, "pass")
    assert bot_move(g, 0, random.Random(0)) == {"type": "pass"}  # its skull lies under one flower


def test_the_bot_raises_by_one_when_its_own_stack_is_clean() -> None:
    g = skull_game(3, first_player=1)
    place(g, [F, F, F])
    do(g, 1, "bid", count=1)
    do(g, 2, "pass")
    assert bot_move(g, 0, random.Random(0)) == {"type": "bid", "count": 2}


def test_on_its_own_skull_the_bot_gives_up_a_flower_and_keeps_its_skull() -> None:
    g = skull_game(3)
    challenge(g, [[F, S], [F, F], [F]], challenger=0, bid=3)
    assert bot_move(g, 0, random.Random(0)) == {"type": "discard_own", "disc": F}


def test_the_bot_flips_the_tallest_face_down_stack() -> None:
    g = skull_game(3, first_player=1)
    challenge(g, [[F], [F, F], [F, F]], challenger=0, bid=3)
    do(g, 0, "flip", seat=2)
    assert st(g).phase == "reveal"
    assert bot_move(g, 0, random.Random(0)) == {"type": "flip", "seat": 1}
