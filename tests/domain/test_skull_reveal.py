"""Skull round steps 4-5: the reveal, success and the winning second point."""

from __future__ import annotations

import msgspec

from domain.skull.commands import Flip
from domain.skull.events import (
    ChallengeFailed,
    ChallengeStarted,
    ChallengeSucceeded,
    DiscFlipped,
    RoundEnded,
    RoundStarted,
)
from domain.table import GameFinished
from tests.domain.test_skull_support import challenge, do, of_type, rejected, skull_events, skull_game, st

F, S = "flower", "skull"


def test_the_server_turns_the_challengers_own_stack_top_down_in_the_batch_that_ends_the_auction() -> None:
    g = skull_game(3)
    events = challenge(g, [[S, F, F], [F, F], [F, F]], challenger=0, bid=3)
    flips = of_type(events, DiscFlipped)
    assert flips == [DiscFlipped(seat=0, disc=F, automatic=True)] * 2 + [
        DiscFlipped(seat=0, disc=S, automatic=True)
    ]
    assert of_type(events, ChallengeFailed) == [ChallengeFailed(seat=0, skull_owner=0)]


def test_by_default_the_challenger_turns_exactly_his_bid_even_from_his_own_stack() -> None:
    g = skull_game(3)
    events = challenge(g, [[S, F, F], [F, F], [F, F]], challenger=0, bid=2)
    assert len(of_type(events, DiscFlipped)) == 2
    assert of_type(events, ChallengeSucceeded) == [ChallengeSucceeded(seat=0, points=1)]


def test_with_reveal_all_own_first_the_whole_own_stack_is_turned_beyond_the_bid() -> None:
    g = skull_game(3, reveal_all_own_first=True)
    events = challenge(g, [[S, F, F], [F, F], [F, F]], challenger=0, bid=2)
    assert [f.disc for f in of_type(events, DiscFlipped)] == [F, F, S]
    assert of_type(events, ChallengeFailed) == [ChallengeFailed(seat=0, skull_owner=0)]


def test_with_reveal_all_own_first_a_clean_own_stack_beyond_the_bid_is_a_success() -> None:
    g = skull_game(3, reveal_all_own_first=True)
    events = challenge(g, [[F, F, F], [F, F], [F, F]], challenger=0, bid=2)
    assert len(of_type(events, DiscFlipped)) == 3
    assert of_type(events, ChallengeSucceeded) == [ChallengeSucceeded(seat=0, points=1)]


def test_after_his_own_stack_the_challenger_flips_opponents_one_disc_per_command() -> None:
    g = skull_game(3)
    challenge(g, [[F, F], [F, F], [F]], challenger=0, bid=4)
    state = st(g)
    assert (state.phase, state.challenger, len(state.flips)) == ("reveal", 0, 2)
    assert g.table.to_act(g.state) == [0]
    assert [msgspec.to_builtins(c) for c in g.legal(0)] == [
        {"type": "flip", "seat": 1},
        {"type": "flip", "seat": 2},
    ]
    events = do(g, 0, "flip", seat=2)
    assert skull_events(events) == [DiscFlipped(seat=2, disc=F)]
    assert st(g).seats[2].turned == 1


def test_each_flip_turns_the_top_most_face_down_disc_and_stacks_may_be_switched_freely() -> None:
    g = skull_game(3, first_player=1)
    challenge(g, [[F], [F, F], [S, F]], challenger=0, bid=4)
    assert skull_events(do(g, 0, "flip", seat=2)) == [DiscFlipped(seat=2, disc=F)]
    assert skull_events(do(g, 0, "flip", seat=1)) == [DiscFlipped(seat=1, disc=F)]
    events = do(g, 0, "flip", seat=2)
    assert of_type(events, DiscFlipped) == [DiscFlipped(seat=2, disc=S)]
    assert of_type(events, ChallengeFailed) == [ChallengeFailed(seat=0, skull_owner=2)]


def test_the_challenger_cannot_flip_his_own_stack_again() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=3)
    assert rejected(g, 0, "flip", seat=0) == "cannot_flip_own"


def test_an_exhausted_stack_cannot_be_flipped() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=3)
    do(g, 0, "flip", seat=1)
    assert rejected(g, 0, "flip", seat=1) == "stack_exhausted"
    assert [msgspec.to_builtins(c) for c in g.legal(0)] == [{"type": "flip", "seat": 2}]


def test_flipping_a_seat_that_does_not_exist_is_refused() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=3)
    assert rejected(g, 0, "flip", seat=3) == "no_such_seat"
    assert rejected(g, 0, Flip(seat=-1)) == "no_such_seat"


def test_only_the_challenger_flips_and_only_during_the_reveal() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=3)
    assert rejected(g, 1, "flip", seat=2) == "not_your_turn"
    assert rejected(g, 0, "bid", count=4) == "wrong_phase"
    h = skull_game(3)
    assert rejected(h, 0, "flip", seat=1) == "wrong_phase"


def test_passed_players_discs_stay_flippable() -> None:
    g = skull_game(3)
    challenge(g, [[F], [F], [F]], challenger=0, bid=2)
    assert all(st(g).seats[s].passed for s in (1, 2))
    assert len(g.legal(0)) == 2


def test_a_success_scores_a_point_ends_the_round_and_the_challenger_starts_the_next() -> None:
    g = skull_game(3, first_player=2)
    challenge(g, [[F], [F], [F, F]], challenger=0, bid=2)
    events = do(g, 0, "flip", seat=2)
    assert skull_events(events) == [
        DiscFlipped(seat=2, disc=F),
        ChallengeSucceeded(seat=0, points=1),
        RoundEnded(round=1, challenger=0, bid=2, outcome="success", points=(1, 0, 0)),
        RoundStarted(round=2, first_player=0, reason="challenger"),
    ]
    state = st(g)
    assert (state.phase, state.round, state.rounds_completed) == ("placement", 2, 1)
    assert all(len(seat.hand) == 4 and not seat.stack for seat in state.seats)


def test_the_success_of_a_challenger_who_is_not_the_first_player_hands_him_the_next_round() -> None:
    g = skull_game(4, first_player=2)
    challenge(g, [[F], [F], [F], [F]], challenger=1, bid=2)
    do(g, 1, "flip", seat=0)
    assert of_type(g.events, RoundStarted)[-1] == RoundStarted(round=2, first_player=1, reason="challenger")


def test_the_second_point_wins_the_game_at_once() -> None:
    g = skull_game(3)
    challenge(g, [[F], [F], [F]], challenger=1, bid=2)
    do(g, 1, "flip", seat=0)
    assert st(g).seats[1].points == 1
    events = challenge(g, [[F], [F], [F]], challenger=1, bid=3)
    assert of_type(events, ChallengeStarted) == [ChallengeStarted(seat=1, bid=3)]
    events = do(g, 1, "flip", seat=2) + do(g, 1, "flip", seat=0)
    assert of_type(events, ChallengeSucceeded)[-1] == ChallengeSucceeded(seat=1, points=2)
    assert of_type(events, RoundStarted) == []
    assert of_type(events, GameFinished) == [GameFinished(scores=[0, 2, 0], winners=[1])]
    assert g.table.rules.winners(st(g)) == [1]
    assert g.state.status == "finished"
    assert rejected(g, 0, "place_disc", disc=F) == "game_over"
