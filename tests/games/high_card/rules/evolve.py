"""High Card's evolvers: they only record what ``decide`` decided."""

from __future__ import annotations

from msgspec.structs import replace

from domain.kernel import Evolvers
from tests.games.high_card.rules.events import CardPlayed, CardsDealt, HighCardEvent, RoundScored, TrickWon
from tests.games.high_card.rules.state import HighCardState


def _dealt(state: HighCardState, event: CardsDealt) -> HighCardState:
    return replace(
        state,
        round=event.round,
        phase="playing",
        hands=tuple(hand or () for hand in event.hands),
        set_aside=event.set_aside or (),
        leader=event.leader,
        trick=(),
        taken=(0,) * state.players,
    )


def _played(state: HighCardState, event: CardPlayed) -> HighCardState:
    hands = tuple(
        tuple(card for card in hand if card != event.card) if seat == event.seat else hand
        for seat, hand in enumerate(state.hands)
    )
    return replace(state, hands=hands, trick=(*state.trick, (event.seat, event.card)))


def _won(state: HighCardState, event: TrickWon) -> HighCardState:
    taken = tuple(n + (seat == event.seat) for seat, n in enumerate(state.taken))
    return replace(state, trick=(), leader=event.seat, taken=taken)


def _scored(state: HighCardState, event: RoundScored) -> HighCardState:
    finished = event.round >= state.options.rounds
    return replace(
        state,
        totals=event.totals,
        scored=event.round,
        history=(*state.history, event.points),
        phase="finished" if finished else "playing",
    )


EVOLVERS: Evolvers[HighCardState, HighCardEvent] = Evolvers(
    {CardsDealt: _dealt, CardPlayed: _played, TrickWon: _won, RoundScored: _scored}
)
