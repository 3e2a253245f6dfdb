"""Skull round steps 1-3: the simultaneous opening placement, the turns, the auction."""

from __future__ import annotations

import msgspec
import pytest

from domain.skull.commands import Bid
from domain.skull.events import BidMade, ChallengeStarted, DiscPlaced, PlayerPassed
from tests.domain.test_skull_support import do, of_type, place, rejected, skull_events, skull_game, st


def test_opening_placement_is_simultaneous_and_awaits_every_unplaced_seat() -> None:
    g = skull_game(4, first_player=2)
    do(g, 3, "place_disc", disc="skull")
    do(g, 1, "place_disc", disc="flower")
    assert g.table.to_act(g.state) == [0, 2]
    assert st(g).phase == "placement"


def test_nobody_may_bid_before_everyone_has_placed() -> None:
    g = skull_game(4)
    do(g, 1, "place_disc", disc="flower")
    assert rejected(g, 0, "bid", count=1) == "wrong_phase"


def test_a_seat_places_only_one_opening_disc() -> None:
    g = skull_game(4)
    do(g, 1, "place_disc", disc="flower")
    assert rejected(g, 1, "place_disc", disc="flower") == "already_placed"


def test_the_last_opening_disc_hands_the_turn_to_the_first_player() -> None:
    g = skull_game(4, first_player=2)
    place(g, ["flower", "flower", "skull", "flower"])
    assert st(g).phase == "turns"
    assert g.table.to_act(g.state) == [2]


def test_a_placed_disc_is_recorded_with_its_kind_and_taken_from_the_hand() -> None:
    g = skull_game(3)
    events = do(g, 0, "place_disc", disc="skull")
    assert skull_events(events) == [DiscPlaced(seat=0, disc="skull")]
    assert st(g).seats[0].hand == ("flower", "flower", "flower")
    assert st(g).seats[0].stack == ("skull",)


def test_one_cannot_place_a_disc_one_does_not_hold() -> None:
    g = skull_game(3)
    do(g, 0, "place_disc", disc="skull")
    assert rejected(g, 1, "place_disc", disc="last_chance") == "no_such_disc"
    place(g, [None, "flower", "flower"])
    assert rejected(g, 0, "place_disc", disc="skull") == "no_such_disc"


def test_turns_go_clockwise_placing_one_disc_each_on_top_of_the_own_stack() -> None:
    g = skull_game(3, first_player=1)
    place(g, ["flower", "flower", "flower"])
    do(g, 1, "place_disc", disc="skull")
    assert g.table.to_act(g.state) == [2]
    do(g, 2, "place_disc", disc="flower")
    assert g.table.to_act(g.state) == [0]
    assert st(g).seats[1].stack == ("flower", "skull")


def test_only_the_seat_in_turn_may_place_or_bid() -> None:
    g = skull_game(3)
    place(g, ["flower", "flower", "flower"])
    assert rejected(g, 1, "place_disc", disc="flower") == "not_your_turn"
    assert rejected(g, 2, "bid", count=1) == "not_your_turn"


def test_passing_is_not_possible_before_the_auction_opens() -> None:
    g = skull_game(3)
    place(g, ["flower", "flower", "flower"])
    assert rejected(g, 0, "pass") == "wrong_phase"


def test_a_player_with_an_empty_hand_must_open_the_auction() -> None:
    g = skull_game(3)
    place(g, ["flower", "flower", "flower"])
    for _ in range(3):  # three full turns: everyone empties the hand
        for seat, disc in enumerate(["flower", "flower", "flower"]):
            do(g, seat, "place_disc", disc=disc if _ < 2 else "skull")
    assert st(g).seats[0].hand == ()
    assert rejected(g, 0, "place_disc", disc="flower") == "must_bid"
    legal = [c for c in g.legal(0)]
    assert {type(c).__name__ for c in legal} == {"Bid"}
    assert [c.count for c in legal] == list(range(1, 13))  # type: ignore[attr-defined]


def test_the_opening_bid_is_between_one_and_the_discs_on_the_mats() -> None:
    g = skull_game(3)
    place(g, ["flower", "skull", "flower"])
    assert rejected(g, 0, Bid(count=0)) == "illegal_bid"
    with pytest.raises(msgspec.ValidationError):  # off the wire, a bid below one is malformed
        do(g, 0, "bid", count=0)
    assert rejected(g, 0, "bid", count=4) == "illegal_bid"
    events = do(g, 0, "bid", count=2)
    assert skull_events(events) == [BidMade(seat=0, count=2)]
    assert st(g).phase == "auction"


def test_the_legal_commands_of_a_turn_spell_out_every_disc_and_every_bid() -> None:
    g = skull_game(3)
    place(g, ["skull", "flower", "flower"])
    assert [msgspec_dict(c) for c in g.legal(0)] == [
        {"type": "place_disc", "disc": "flower"},
        {"type": "bid", "count": 1},
        {"type": "bid", "count": 2},
        {"type": "bid", "count": 3},
    ]
    assert g.legal(1) == []


def test_no_disc_may_be_placed_once_the_auction_is_open() -> None:
    g = skull_game(3)
    place(g, ["flower", "flower", "flower"])
    do(g, 0, "bid", count=1)
    assert rejected(g, 1, "place_disc", disc="flower") == "wrong_phase"


def test_a_raise_must_be_higher_than_the_bid_and_at_most_the_discs_on_the_mats() -> None:
    g = skull_game(4)
    place(g, ["flower", "flower", "flower", "flower"])
    do(g, 0, "bid", count=2)
    assert rejected(g, 1, "bid", count=2) == "illegal_bid"
    assert rejected(g, 1, "bid", count=5) == "illegal_bid"
    do(g, 1, "bid", count=3)  # any raise, not only by one
    assert (st(g).bid, st(g).bidder) == (3, 1)


def test_the_auction_goes_clockwise_and_skips_seats_that_passed() -> None:
    g = skull_game(4)
    place(g, ["flower", "flower", "flower", "flower"])
    do(g, 0, "bid", count=1)
    do(g, 1, "pass")
    do(g, 2, "bid", count=2)
    do(g, 3, "pass")
    assert g.table.to_act(g.state) == [0]
    do(g, 0, "bid", count=3)
    assert g.table.to_act(g.state) == [2]
    assert rejected(g, 1, "bid", count=4) == "not_your_turn"


def test_a_pass_is_final_for_the_round() -> None:
    g = skull_game(4)
    place(g, ["flower", "flower", "flower", "flower"])
    for seat in range(4):
        do(g, seat, "place_disc", disc="flower")
    do(g, 0, "bid", count=1)
    do(g, 1, "pass")
    turns = []
    for count in (2, 3, 4, 5):
        turns.append(g.table.to_act(g.state)[0])
        do(g, turns[-1], "bid", count=count)
    assert turns == [2, 3, 0, 2]
    assert g.legal(1) == []
    assert rejected(g, 1, "bid", count=6) == "not_your_turn"


def test_when_all_but_one_have_passed_the_highest_bidder_is_the_challenger() -> None:
    g = skull_game(4)
    place(g, ["flower", "flower", "flower", "flower"])
    do(g, 0, "bid", count=1)
    do(g, 1, "bid", count=2)
    do(g, 2, "pass")
    do(g, 3, "pass")
    events = do(g, 0, "pass")
    assert of_type(events, PlayerPassed) == [PlayerPassed(seat=0)]
    assert of_type(events, ChallengeStarted) == [ChallengeStarted(seat=1, bid=2)]
    assert st(g).challenger == 1


def test_a_bid_of_all_discs_ends_the_auction_at_once() -> None:
    g = skull_game(4)
    place(g, ["flower", "flower", "flower", "flower"])
    do(g, 0, "bid", count=2)
    events = do(g, 1, "bid", count=4)
    assert of_type(events, ChallengeStarted) == [ChallengeStarted(seat=1, bid=4)]
    assert not any(seat.passed for seat in st(g).seats)


def test_an_opening_bid_of_all_discs_makes_the_opener_challenger_at_once() -> None:
    g = skull_game(3)
    place(g, ["flower", "flower", "flower"])
    events = do(g, 0, "bid", count=3)
    assert of_type(events, ChallengeStarted) == [ChallengeStarted(seat=0, bid=3)]


def test_the_auction_offers_every_raise_and_the_pass() -> None:
    g = skull_game(3)
    place(g, ["flower", "flower", "flower"])
    do(g, 0, "bid", count=1)
    assert [msgspec_dict(c) for c in g.legal(1)] == [
        {"type": "bid", "count": 2},
        {"type": "bid", "count": 3},
        {"type": "pass"},
    ]


def msgspec_dict(command: object) -> object:
    return msgspec.to_builtins(command)
