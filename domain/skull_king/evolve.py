"""How each Skull King event changes the state. Only recording: no validation, no draws, no failures."""

from __future__ import annotations

import msgspec

from domain.kernel import Evolvers
from domain.skull_king.events import (
    BidPlaced,
    BidsRevealed,
    CardPlayed,
    CardsDealt,
    FirstDealerChosen,
    RoundScored,
    SkullKingEvent,
    TrickWon,
)
from domain.skull_king.options import ROUNDS
from domain.skull_king.state import Play, SkullKingState, TakenTrick

replace = msgspec.structs.replace


def _set(values: tuple[int, ...], seat: int, value: int) -> tuple[int, ...]:
    return (*values[:seat], value, *values[seat + 1 :])


def _first_dealer_chosen(state: SkullKingState, event: FirstDealerChosen) -> SkullKingState:
    return replace(state, dealer=event.seat)


def _dealt(state: SkullKingState, event: CardsDealt) -> SkullKingState:
    zeros = (0,) * state.players
    return replace(
        state,
        phase="bidding",
        round=event.round,
        dealer=event.dealer,
        leader=event.leader,
        hands=tuple(hand or () for hand in event.hands),
        unused=event.unused or (),
        bids=(None,) * state.players,
        bids_revealed=False,
        trick=(),
        taken=(),
        won=zeros,
        bonuses=zeros,
    )


def _bid_placed(state: SkullKingState, event: BidPlaced) -> SkullKingState:
    bids = tuple(event.tricks if s == event.seat else bid for s, bid in enumerate(state.bids))
    return replace(state, bids=bids)


def _bids_revealed(state: SkullKingState, event: BidsRevealed) -> SkullKingState:
    return replace(state, bids=tuple(event.bids), bids_revealed=True, phase="playing")


def _played(state: SkullKingState, event: CardPlayed) -> SkullKingState:
    seat, card = event.seat, event.card
    held = tuple(c for c in state.hands[seat] if c != card)
    hands = (*state.hands[:seat], held, *state.hands[seat + 1 :])  # the others' hands stay as they are
    return replace(
        state, hands=hands, trick=(*state.trick, Play(seat=event.seat, card=event.card, as_=event.as_))
    )


def _taken(state: SkullKingState, event: TrickWon) -> SkullKingState:
    taken = TakenTrick(leader=state.leader, plays=state.trick, winner=event.winner, bonus=event.bonus)
    return replace(
        state,
        taken=(*state.taken, taken),
        trick=(),
        leader=event.winner,
        won=_set(state.won, event.winner, state.won[event.winner] + 1),
        bonuses=_set(state.bonuses, event.winner, state.bonuses[event.winner] + event.bonus),
    )


def _scored(state: SkullKingState, event: RoundScored) -> SkullKingState:
    phase = "finished" if event.round >= ROUNDS else "scoring"
    return replace(state, history=(*state.history, event), totals=event.totals, phase=phase)


EVOLVERS: Evolvers[SkullKingState, SkullKingEvent] = Evolvers(
    {
        FirstDealerChosen: _first_dealer_chosen,
        CardsDealt: _dealt,
        BidPlaced: _bid_placed,
        BidsRevealed: _bids_revealed,
        CardPlayed: _played,
        TrickWon: _taken,
        RoundScored: _scored,
    }
)
