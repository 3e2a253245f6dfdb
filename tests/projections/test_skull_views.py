"""Skull views: the public facts for everyone, one's own discs for oneself, nothing else."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from projections import skull as views
from projections.views import seat_view
from tests.domain.test_skull_support import (
    F,
    S,
    challenge,
    do,
    place,
    random_options,
    scramble,
    skull_game,
    st,
)
from tests.support.play import Game


def test_a_seat_sees_its_own_hand_and_stack_but_only_the_sizes_of_others() -> None:
    g = skull_game(3)
    place(g, [S, F, F])
    do(g, 0, "place_disc", disc=F)
    mine = views.view(st(g), 0)
    assert mine["hand"] == {"flower": 2, "skull": 0, "last_chance": 0}
    assert mine["own_stack"] == [S, F]
    assert mine["stacks"] == [
        {"seat": 0, "size": 2, "turned": 0, "discs": [S, F]},
        {"seat": 1, "size": 1, "turned": 0, "discs": [None]},
        {"seat": 2, "size": 1, "turned": 0, "discs": [None]},
    ]
    theirs = views.view(st(g), 1)
    assert theirs["stacks"][0] == {"seat": 0, "size": 2, "turned": 0, "discs": [None, None]}
    assert theirs["hand"] == {"flower": 2, "skull": 1, "last_chance": 0}
    assert (mine["disc_counts"], mine["hand_sizes"], mine["discs_on_mats"]) == ([4, 4, 4], [2, 3, 3], 4)


def test_a_spectator_sees_no_hand_no_stack_content_and_no_loss() -> None:
    g = skull_game(3)
    place(g, [S, F, F])
    seen = views.view(st(g), None)
    assert (seen["hand"], seen["own_stack"], seen["lost"]) == (None, None, None)
    assert all(disc is None for stack in seen["stacks"] for disc in stack["discs"])


def test_turned_discs_the_auction_and_the_flips_are_public() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=3)
    do(g, 0, "flip", seat=2)
    seen = views.view(st(g), None)
    assert seen["stacks"][0]["discs"] == [F]
    assert seen["stacks"][2] == {"seat": 2, "size": 2, "turned": 1, "discs": [None, F]}
    assert (seen["bid"], seen["bidder"], seen["challenger"], seen["passed"]) == (3, 0, 0, [1, 2])
    assert seen["flips"] == [{"seat": 0, "disc": F}, {"seat": 2, "disc": F}]
    assert seen["flips_left"] == 1


def test_the_pending_blind_draw_shows_how_many_positions_the_skull_owner_chooses_from() -> None:
    g = skull_game(3)
    challenge(g, [[F, F], [F, F], [S]], challenger=0, bid=4)
    do(g, 0, "flip", seat=2)
    for viewer in (0, 2, None):
        assert views.view(st(g), viewer)["discard"] == {"seat": 0, "picker": 2, "positions": 4, "blind": True}
    do(g, 2, "discard_pick", position=0)
    assert views.view(st(g), 0)["lost"] in ([F], [S])
    assert views.view(st(g), 2)["lost"] == []
    assert views.view(st(g), 1)["disc_counts"] == [3, 4, 4]


def test_player_public_and_the_scoreboard_hold_only_public_counters() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=2)
    do(g, 0, "flip", seat=2)
    assert views.player_public(st(g), 0) == {
        "discs": 4,
        "hand": 4,
        "stack": 0,
        "points": 1,
        "eliminated": False,
        "passed": False,
        "last_chance": False,
    }
    assert views.scoreboard(st(g)) == {
        "rounds": [{"round": 1, "challenger": 0, "bid": 2, "outcome": "success", "points": [1, 0, 0]}],
        "totals": [1, 0, 0],
    }


def test_the_envelope_carries_the_skull_fields_and_the_legal_commands() -> None:
    g = skull_game(3)
    full = seat_view(g.state, len(g.events), 1)
    assert full["game"] == "skull" and full["phase"] == "placement" and full["seat"] == 1
    assert full["seats"] == 3 and full["to_act"] == [0, 1, 2]
    assert full["legal"] == [{"type": "place_disc", "disc": F}, {"type": "place_disc", "disc": S}]
    assert full["players"][1]["discs"] == 4 and full["hand"] == {"flower": 3, "skull": 1, "last_chance": 0}


def check_views(g: Game, rng: random.Random, viewers: list[int | None]) -> None:
    """Each viewer's view is JSON and does not change when what it may not know changes."""
    state = st(g)
    board = views.scoreboard(state)
    public = [views.player_public(state, s) for s in range(state.players)]
    for viewer in viewers:
        seen = views.view(state, viewer)
        assert msgspec.json.decode(msgspec.json.encode(seen)) == seen
        other = scramble(state, viewer, rng)
        assert views.view(other, viewer) == seen
        assert views.scoreboard(other) == board
        assert [views.player_public(other, s) for s in range(state.players)] == public
        rules = g.table.rules
        assert rules.to_act(other) == rules.to_act(state)
        if viewer is not None:
            assert rules.legal_commands(other, viewer) == rules.legal_commands(state, viewer)


@pytest.mark.thorough
@settings(max_examples=80, deadline=None, derandomize=True)
@given(players=hs.integers(3, 6), two_sets=hs.booleans(), seed=hs.integers(0, 2**32))
def test_no_view_ever_shows_another_seats_hidden_discs_and_spectators_see_no_hidden_fact(
    players: int, two_sets: bool, seed: int
) -> None:
    rng = random.Random(seed)
    players += 4 * two_sets
    g = skull_game(players, seed=seed, **random_options(rng, two_sets=two_sets))
    everyone: list[int | None] = [None, *range(players)]
    while g.state.status != "finished":
        seat = rng.choice(g.table.to_act(g.state))
        check_views(g, rng, [None, seat, rng.randrange(players)])  # the spectator, the actor, anyone
        g.act(seat, rng.choice(g.legal(seat)))
    check_views(g, rng, everyone)
