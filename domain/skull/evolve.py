"""How each Skull event changes the state. Only recording: no validation, no draws, no failures.

The derived bookkeeping (whose turn comes next, when the opening placement is complete, whether the
game is over) is computed here from facts already decided, so that replaying the events alone
rebuilds exactly the state the rules decided on.
"""

from __future__ import annotations

from typing import Any

from msgspec.structs import replace

from domain.kernel import Evolvers
from domain.skull.events import (
    BidMade,
    ChallengeFailed,
    ChallengeStarted,
    ChallengeSucceeded,
    DiscFlipped,
    DiscLost,
    DiscPlaced,
    DiscsShuffled,
    FirstPlayerChoiceRequested,
    LastChanceGiven,
    LastChanceReturned,
    PlayerEliminated,
    PlayerPassed,
    RoundEnded,
    RoundStarted,
    SkullEvent,
)
from domain.skull.state import Flipped, RoundRecord, SeatState, SkullState, canonical, without


def _seat(state: SkullState, seat: int, **changes: Any) -> tuple[SeatState, ...]:
    seats = list(state.seats)
    seats[seat] = replace(seats[seat], **changes)
    return tuple(seats)


def _round_started(state: SkullState, e: RoundStarted) -> SkullState:
    return replace(
        state,
        round=e.round,
        first_player=e.first_player,
        phase="placement",
        turn=None,
        bid=0,
        bidder=None,
        challenger=None,
        flips=(),
        skull_owner=None,
        discard_order=None,
        chooser=None,
    )


def _disc_placed(state: SkullState, e: DiscPlaced) -> SkullState:
    assert e.disc is not None, "the rules fold unredacted events only"
    seat = state.seats[e.seat]
    state = replace(
        state, seats=_seat(state, e.seat, hand=without(seat.hand, e.disc), stack=(*seat.stack, e.disc))
    )
    if state.phase == "placement":
        if all(state.seats[s].stack for s in state.active()):
            return replace(state, phase="turns", turn=state.first_player)
        return state
    return replace(state, turn=state.next_active(e.seat))


def _bid_made(state: SkullState, e: BidMade) -> SkullState:
    state = replace(state, phase="auction", bid=e.count, bidder=e.seat)
    return replace(state, turn=state.next_bidder(e.seat))


def _player_passed(state: SkullState, e: PlayerPassed) -> SkullState:
    state = replace(state, seats=_seat(state, e.seat, passed=True))
    return replace(state, turn=state.next_bidder(e.seat))


def _challenge_started(state: SkullState, e: ChallengeStarted) -> SkullState:
    return replace(state, phase="reveal", challenger=e.seat, bid=e.bid, bidder=e.seat, turn=None)


def _disc_flipped(state: SkullState, e: DiscFlipped) -> SkullState:
    seats = _seat(state, e.seat, turned=state.seats[e.seat].turned + 1)
    return replace(state, seats=seats, flips=(*state.flips, Flipped(e.seat, e.disc)))


def _challenge_succeeded(state: SkullState, e: ChallengeSucceeded) -> SkullState:
    return replace(state, seats=_seat(state, e.seat, points=e.points))


def _challenge_failed(state: SkullState, e: ChallengeFailed) -> SkullState:
    phase = "discard_own" if e.skull_owner == e.seat else "discard_pick"
    return replace(state, phase=phase, skull_owner=e.skull_owner)


def _discs_shuffled(state: SkullState, e: DiscsShuffled) -> SkullState:
    return replace(state, discard_order=e.order, blind_draw_rounds=(*state.blind_draw_rounds, state.round))


def _disc_lost(state: SkullState, e: DiscLost) -> SkullState:
    """The loser gathers his discs (the round is over for him) and one leaves the game."""
    assert e.disc is not None, "the rules fold unredacted events only"
    seat = state.seats[e.seat]
    hand = without(canonical((*seat.hand, *seat.stack)), e.disc)
    seats = _seat(state, e.seat, hand=hand, stack=(), turned=0, lost=(*seat.lost, e.disc))
    return replace(state, seats=seats, discard_order=None)


def _player_eliminated(state: SkullState, e: PlayerEliminated) -> SkullState:
    return replace(state, seats=_seat(state, e.seat, eliminated=True))


def _round_ended(state: SkullState, e: RoundEnded) -> SkullState:
    """Everyone takes back the discs of their mat; the round joins the scoreboard."""
    seats = tuple(
        replace(seat, hand=canonical((*seat.hand, *seat.stack)), stack=(), turned=0, passed=False)
        for seat in state.seats
    )
    record = RoundRecord(
        round=e.round, challenger=e.challenger, bid=e.bid, outcome=e.outcome, points=e.points
    )
    state = replace(
        state,
        seats=seats,
        rounds_completed=state.rounds_completed + 1,
        history=(*state.history, record),
        turn=None,
    )
    return replace(state, phase="finished" if state.game_over() else "between_rounds")


def _last_chance_returned(state: SkullState, e: LastChanceReturned) -> SkullState:
    seat = state.seats[e.seat]
    hand = without(seat.hand, "last_chance") if "last_chance" in seat.hand else seat.hand
    return replace(state, seats=_seat(state, e.seat, hand=hand), last_chance_holder=None)


def _last_chance_given(state: SkullState, e: LastChanceGiven) -> SkullState:
    seats = _seat(state, e.seat, hand=canonical((*state.seats[e.seat].hand, "last_chance")))
    return replace(
        state,
        seats=seats,
        last_chance_holder=e.seat,
        last_chance_given=(*state.last_chance_given, e.seat),
    )


def _first_player_choice_requested(state: SkullState, e: FirstPlayerChoiceRequested) -> SkullState:
    return replace(state, phase="choose_first_player", chooser=e.seat)


EVOLVERS: Evolvers[SkullState, SkullEvent] = Evolvers(
    {
        RoundStarted: _round_started,
        DiscPlaced: _disc_placed,
        BidMade: _bid_made,
        PlayerPassed: _player_passed,
        ChallengeStarted: _challenge_started,
        DiscFlipped: _disc_flipped,
        ChallengeSucceeded: _challenge_succeeded,
        ChallengeFailed: _challenge_failed,
        DiscsShuffled: _discs_shuffled,
        DiscLost: _disc_lost,
        PlayerEliminated: _player_eliminated,
        RoundEnded: _round_ended,
        LastChanceReturned: _last_chance_returned,
        LastChanceGiven: _last_chance_given,
        FirstPlayerChoiceRequested: _first_player_choice_requested,
    }
)
