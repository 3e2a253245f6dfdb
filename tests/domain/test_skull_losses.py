"""Skull round steps 6-8: failure, the blind draw, the own-skull choice, elimination, next first player."""

from __future__ import annotations

import msgspec

from domain.fairness import Chance
from domain.skull.commands import DiscardPick
from domain.skull.events import (
    ChallengeFailed,
    DiscLost,
    DiscsShuffled,
    FirstPlayerChoiceRequested,
    PlayerEliminated,
    RoundEnded,
    RoundStarted,
)
from domain.table import GameFinished
from tests.domain.test_skull_support import (
    challenge,
    do,
    of_type,
    opponents_skull_round,
    own_skull_round,
    rejected,
    skull_events,
    skull_game,
    st,
)
from tests.support.play import Game

F, S = "flower", "skull"


def fail_on_opponents_skull(g: Game) -> list[object]:
    """Seat 0 has two discs on its mat, two in hand, and runs into seat 2's skull."""
    challenge(g, [[F, F], [F, F], [S]], challenger=0, bid=4)
    return do(g, 0, "flip", seat=2)


def test_on_an_opponents_skull_all_the_challengers_discs_are_shuffled_in_the_documented_order() -> None:
    g = skull_game(3, seed="blind")
    events = fail_on_opponents_skull(g)
    (shuffled,) = of_type(events, DiscsShuffled)
    mix = bytes.fromhex(g.state.mix or "")
    expected = Chance(g.seeds, mix).shuffle(1, "discard", [F, F, F, S])  # hand and mat, flowers first
    assert shuffled == DiscsShuffled(seat=0, picker=2, count=4, order=tuple(expected))
    assert (st(g).phase, g.table.to_act(g.state)) == ("discard_pick", [2])
    assert [msgspec.to_builtins(c) for c in g.legal(2)] == [
        {"type": "discard_pick", "position": p} for p in range(4)
    ]


def test_the_blind_draw_is_the_same_for_the_same_seeds_and_varies_with_them() -> None:
    def order(seed: int) -> tuple[str, ...]:
        g = skull_game(3, seed=seed)
        (shuffled,) = of_type(fail_on_opponents_skull(g), DiscsShuffled)
        return tuple(shuffled.order)

    assert order(11) == order(11)
    assert len({order(seed) for seed in range(40)}) == 4  # the skull lands in every position


def test_the_skull_owner_draws_a_position_and_that_disc_leaves_the_game() -> None:
    g = skull_game(3, seed="blind")
    order = of_type(fail_on_opponents_skull(g), DiscsShuffled)[0].order
    events = do(g, 2, "discard_pick", position=3)
    assert skull_events(events) == [
        DiscLost(seat=0, reason="drawn", position=3, disc=order[3]),
        RoundEnded(round=1, challenger=0, bid=4, outcome="failure", points=(0, 0, 0)),
        RoundStarted(round=2, first_player=0, reason="challenger"),
    ]
    seat = st(g).seats[0]
    assert seat.lost == (order[3],)
    assert len(seat.hand) == 3 and not seat.stack


def test_the_blind_draw_refuses_positions_outside_the_shuffle_and_other_seats() -> None:
    g = skull_game(3)
    fail_on_opponents_skull(g)
    assert rejected(g, 2, "discard_pick", position=4) == "illegal_position"
    assert rejected(g, 2, DiscardPick(position=-1)) == "illegal_position"
    assert rejected(g, 0, "discard_pick", position=0) == "not_your_turn"
    assert rejected(g, 0, "discard_own", disc=F) == "wrong_phase"
    assert rejected(g, 0, "flip", seat=1) == "wrong_phase"


def test_no_blind_draw_outside_a_failure() -> None:
    g = skull_game(3)
    assert rejected(g, 0, "discard_pick", position=0) == "wrong_phase"


def test_the_round_is_completed_only_once_the_lost_disc_is_settled() -> None:
    g = skull_game(3)
    fail_on_opponents_skull(g)
    assert g.table.rules.rounds_completed(st(g)) == 0
    do(g, 2, "discard_pick", position=0)
    assert g.table.rules.rounds_completed(st(g)) == 1


def test_on_his_own_skull_the_challenger_chooses_the_disc_he_loses() -> None:
    g = skull_game(3)
    events = challenge(g, [[F, S], [F, F], [F]], challenger=0, bid=3)
    assert of_type(events, ChallengeFailed) == [ChallengeFailed(seat=0, skull_owner=0)]
    assert of_type(events, DiscsShuffled) == []
    assert (st(g).phase, g.table.to_act(g.state)) == ("discard_own", [0])
    assert [msgspec.to_builtins(c) for c in g.legal(0)] == [
        {"type": "discard_own", "disc": F},
        {"type": "discard_own", "disc": S},
    ]
    events = do(g, 0, "discard_own", disc=S)
    assert skull_events(events)[0] == DiscLost(seat=0, reason="chosen", disc=S)
    assert st(g).seats[0].hand == (F, F, F)
    assert st(g).seats[0].lost == (S,)


def test_the_own_skull_choice_is_refused_for_a_disc_one_does_not_own_and_to_other_seats() -> None:
    g = skull_game(3)
    challenge(g, [[F, S], [F, F], [F]], challenger=0, bid=3)
    assert rejected(g, 0, "discard_own", disc="last_chance") == "no_such_disc"
    assert rejected(g, 1, "discard_own", disc=F) == "not_your_turn"
    assert rejected(g, 2, "discard_pick", position=0) == "wrong_phase"


def test_a_challenger_left_with_his_skull_alone_cannot_choose_to_lose_a_flower() -> None:
    g = skull_game(3)
    for _ in range(3):
        own_skull_round(g, 0, F)
    challenge(g, [[S], [F], [F]], challenger=0, bid=1)
    assert rejected(g, 0, "discard_own", disc=F) == "no_such_disc"
    assert [msgspec.to_builtins(c) for c in g.legal(0)] == [{"type": "discard_own", "disc": S}]


def test_a_challenger_who_lost_his_skull_can_no_longer_place_or_lose_one() -> None:
    g = skull_game(3)
    own_skull_round(g, 0, S)
    assert rejected(g, 0, "place_disc", disc=S) == "no_such_disc"
    assert [msgspec.to_builtins(c) for c in g.legal(0)] == [{"type": "place_disc", "disc": F}]


def test_a_player_without_discs_is_eliminated_and_the_skull_owner_starts_next() -> None:
    g = skull_game(3)
    own_skull_round(g, 0, S)
    opponents_skull_round(g, 0, 2)
    opponents_skull_round(g, 0, 2)
    events = opponents_skull_round(g, 0, 2)
    assert skull_events(events)[1:] == [
        PlayerEliminated(seat=0),
        RoundEnded(round=4, challenger=0, bid=2, outcome="failure", points=(0, 0, 0)),
        RoundStarted(round=5, first_player=2, reason="skull_owner"),
    ]
    assert st(g).seats[0].eliminated and len(st(g).seats[0].lost) == 4
    assert g.table.to_act(g.state) == [1, 2]
    assert rejected(g, 0, "place_disc", disc=F) == "eliminated"


def test_with_left_neighbour_the_seat_left_of_the_eliminated_challenger_starts() -> None:
    g = skull_game(3, first_after_elimination="left_neighbour")
    own_skull_round(g, 0, S)
    opponents_skull_round(g, 0, 2)
    opponents_skull_round(g, 0, 2)
    events = opponents_skull_round(g, 0, 2)
    assert of_type(events, RoundStarted) == [RoundStarted(round=5, first_player=1, reason="left_neighbour")]


def test_eliminated_by_his_own_skull_the_challenger_names_the_first_player() -> None:
    g = skull_game(3)
    for _ in range(3):
        own_skull_round(g, 0, F)
    events = own_skull_round(g, 0, S)
    assert skull_events(events)[-1] == FirstPlayerChoiceRequested(seat=0)
    assert (st(g).phase, g.table.to_act(g.state)) == ("choose_first_player", [0])
    assert [msgspec.to_builtins(c) for c in g.legal(0)] == [
        {"type": "choose_first_player", "seat": 1},
        {"type": "choose_first_player", "seat": 2},
    ]
    assert g.table.rules.current_round(st(g)) == 5
    assert rejected(g, 1, "choose_first_player", seat=1) == "not_eliminated_chooser"
    assert rejected(g, 0, "choose_first_player", seat=0) == "not_in_game"
    assert rejected(g, 0, "choose_first_player", seat=3) == "not_in_game"
    assert rejected(g, 1, "place_disc", disc=F) == "wrong_phase"
    events = do(g, 0, "choose_first_player", seat=2)
    assert skull_events(events) == [RoundStarted(round=5, first_player=2, reason="named")]
    assert rejected(g, 0, "choose_first_player", seat=1) == "eliminated"


def test_with_left_neighbour_nobody_is_asked_after_an_own_skull_elimination() -> None:
    g = skull_game(4, first_after_elimination="left_neighbour")
    for _ in range(3):
        own_skull_round(g, 3, F)
    events = own_skull_round(g, 3, S)
    assert of_type(events, FirstPlayerChoiceRequested) == []
    assert of_type(events, RoundStarted) == [RoundStarted(round=5, first_player=0, reason="left_neighbour")]


def test_the_left_neighbour_is_counted_among_the_remaining_seats() -> None:
    g = skull_game(4, first_player=1, first_after_elimination="left_neighbour")
    for _ in range(3):
        own_skull_round(g, 1, F)
    own_skull_round(g, 1, S)  # seat 1 is out; seat 2 starts
    for _ in range(3):
        own_skull_round(g, 0, F)
    events = own_skull_round(g, 0, S)
    assert of_type(events, RoundStarted) == [RoundStarted(round=9, first_player=2, reason="left_neighbour")]


def test_eliminated_seats_place_nothing_and_are_skipped_in_turns_and_auctions() -> None:
    g = skull_game(4)
    for _ in range(3):
        own_skull_round(g, 0, F)
    own_skull_round(g, 0, S)
    do(g, 0, "choose_first_player", seat=3)
    assert g.table.to_act(g.state) == [1, 2, 3]
    for seat in (1, 2, 3):
        do(g, seat, "place_disc", disc=F)
    do(g, 3, "place_disc", disc=F)
    assert g.table.to_act(g.state) == [1]
    do(g, 1, "bid", count=1)
    do(g, 2, "pass")
    assert g.table.to_act(g.state) == [3]
    assert g.legal(0) == []


def test_the_last_player_with_discs_wins() -> None:
    g = skull_game(3)
    for _ in range(3):
        own_skull_round(g, 0, F)
    own_skull_round(g, 0, S)
    do(g, 0, "choose_first_player", seat=1)
    for _ in range(3):
        own_skull_round(g, 1, F)
    events = own_skull_round(g, 1, S)
    assert of_type(events, PlayerEliminated) == [PlayerEliminated(seat=1)]
    assert of_type(events, FirstPlayerChoiceRequested) == []
    assert of_type(events, GameFinished) == [GameFinished(scores=[0, 0, 0], winners=[2])]
    assert st(g).phase == "finished"
