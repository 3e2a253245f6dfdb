"""The FR variant's Last chance disc: from the trigger to its return."""

from __future__ import annotations

from domain.skull import RULES
from domain.skull.events import (
    ChallengeFailed,
    ChallengeSucceeded,
    DiscFlipped,
    DiscLost,
    DiscPlaced,
    FirstPlayerChoiceRequested,
    LastChanceGiven,
    LastChanceReturned,
    PlayerEliminated,
    RoundEnded,
    RoundStarted,
)
from tests.domain.test_skull_support import (
    F,
    S,
    do,
    of_type,
    own_skull_round,
    rejected,
    skull_events,
    skull_game,
    st,
)
from tests.support.play import Game

LC = "last_chance"


def down_to_one(g: Game, seat: int, keep: str) -> list[object]:
    """``seat`` loses, on his own skull, every disc but one ``keep``; returns the last loss's events."""
    losses = [F, F, F, S]
    losses.remove(keep)
    events: list[object] = []
    for lose in sorted(losses, key=lambda d: d == S):  # the skull goes last: it makes the loss possible
        events = own_skull_round(g, seat, lose)
    return events


def test_the_challenger_who_loses_his_second_to_last_disc_receives_the_last_chance_disc() -> None:
    g = skull_game(3, last_chance=True)
    own_skull_round(g, 0, F)
    own_skull_round(g, 0, F)
    events = own_skull_round(g, 0, F)
    assert skull_events(events)[1:] == [
        RoundEnded(round=3, challenger=0, bid=1, outcome="failure", points=(0, 0, 0)),
        LastChanceGiven(seat=0),
        RoundStarted(round=4, first_player=0, reason="challenger"),
    ]
    state = st(g)
    assert state.seats[0].hand == (S, LC)
    assert state.seats[0].owned == (S,)
    assert state.last_chance_holder == 0


def test_without_the_option_nobody_receives_the_last_chance_disc() -> None:
    g = skull_game(3)
    events = down_to_one(g, 0, keep=S)
    assert of_type(events, LastChanceGiven) == []
    assert st(g).seats[0].hand == (S,)


def test_placing_the_last_chance_disc_is_public_and_it_counts_towards_the_bid_ceiling() -> None:
    g = skull_game(3, last_chance=True)
    down_to_one(g, 0, keep=S)
    assert [c.disc for c in g.legal(0)] == [S, LC]  # type: ignore[attr-defined]
    (placed,) = of_type(do(g, 0, "place_disc", disc=LC), DiscPlaced)
    assert RULES.redact(placed, 1) == DiscPlaced(seat=0, disc=LC)
    assert RULES.redact(placed, None) == DiscPlaced(seat=0, disc=LC)
    (placed,) = of_type(do(g, 1, "place_disc", disc=F), DiscPlaced)
    assert RULES.redact(placed, 0) == DiscPlaced(seat=1, disc=None)
    do(g, 2, "place_disc", disc=F)
    do(g, 0, "place_disc", disc=S)
    assert st(g).on_mats() == 4
    assert rejected(g, 1, "bid", count=5) == "illegal_bid"


def test_the_last_chance_disc_turns_up_as_a_flower_for_another_challenger() -> None:
    g = skull_game(3, last_chance=True)
    down_to_one(g, 0, keep=S)
    for seat, disc in ((0, S), (1, F), (2, F)):
        do(g, seat, "place_disc", disc=disc)
    do(g, 0, "place_disc", disc=LC)
    do(g, 1, "bid", count=3)
    do(g, 2, "pass")
    do(g, 0, "pass")
    assert skull_events(do(g, 1, "flip", seat=0)) == [DiscFlipped(seat=0, disc=LC)]
    events = do(g, 1, "flip", seat=2)
    assert skull_events(events)[1:4] == [
        ChallengeSucceeded(seat=1, points=1),
        RoundEnded(round=4, challenger=1, bid=3, outcome="success", points=(0, 1, 0)),
        LastChanceReturned(seat=0),
    ]
    assert st(g).seats[0].hand == (S,) and st(g).last_chance_holder is None


def test_a_holder_who_fails_as_challenger_on_his_own_skull_is_eliminated_at_once() -> None:
    g = skull_game(3, last_chance=True)
    down_to_one(g, 0, keep=S)
    for seat, disc in ((0, S), (1, F), (2, F)):
        do(g, seat, "place_disc", disc=disc)
    do(g, 0, "place_disc", disc=LC)
    do(g, 1, "place_disc", disc=F)
    do(g, 2, "place_disc", disc=F)
    events = do(g, 0, "bid", count=6)
    assert [f.disc for f in of_type(events, DiscFlipped)] == [LC, S]
    assert skull_events(events)[-6:] == [
        ChallengeFailed(seat=0, skull_owner=0),
        DiscLost(seat=0, reason="last_chance", disc=S),
        PlayerEliminated(seat=0),
        RoundEnded(round=4, challenger=0, bid=6, outcome="failure", points=(0, 0, 0)),
        LastChanceReturned(seat=0),
        FirstPlayerChoiceRequested(seat=0),
    ]
    assert st(g).seats[0].lost == (F, F, F, S) and st(g).seats[0].hand == ()


def test_a_holder_who_fails_on_another_skull_is_eliminated_without_a_draw() -> None:
    g = skull_game(3, last_chance=True)
    down_to_one(g, 0, keep=F)
    for seat, disc in ((0, F), (1, S), (2, F)):
        do(g, seat, "place_disc", disc=disc)
    do(g, 0, "bid", count=2)
    do(g, 1, "pass")
    do(g, 2, "pass")
    events = do(g, 0, "flip", seat=1)
    assert skull_events(events)[1:] == [
        ChallengeFailed(seat=0, skull_owner=1),
        DiscLost(seat=0, reason="last_chance", disc=F),
        PlayerEliminated(seat=0),
        RoundEnded(round=4, challenger=0, bid=2, outcome="failure", points=(0, 0, 0)),
        LastChanceReturned(seat=0),
        RoundStarted(round=5, first_player=1, reason="skull_owner"),
    ]


def test_a_holder_who_succeeds_scores_and_still_returns_the_disc() -> None:
    g = skull_game(3, last_chance=True)
    down_to_one(g, 0, keep=S)
    for seat, disc in ((0, LC), (1, F), (2, F)):
        do(g, seat, "place_disc", disc=disc)
    do(g, 0, "bid", count=2)
    do(g, 1, "pass")
    do(g, 2, "pass")
    events = do(g, 0, "flip", seat=2)
    assert of_type(events, LastChanceReturned) == [LastChanceReturned(seat=0)]
    assert st(g).seats[0].points == 1
    assert st(g).seats[0].hand == (S,)


def test_the_disc_is_held_for_one_round_only_and_once_per_game() -> None:
    g = skull_game(3, last_chance=True)
    down_to_one(g, 0, keep=S)
    for seat, disc in ((0, S), (1, F), (2, F)):
        do(g, seat, "place_disc", disc=disc)
    do(g, 0, "place_disc", disc=LC)
    do(g, 1, "bid", count=1)
    do(g, 2, "pass")
    events = do(g, 0, "pass")  # seat 1 turns his own flower: success
    assert of_type(events, LastChanceReturned) == [LastChanceReturned(seat=0)]
    assert of_type(events, LastChanceGiven) == []
    assert st(g).last_chance_given == (0,)
    assert st(g).last_chance_holder is None
    assert all(LC not in seat.hand for seat in st(g).seats)
