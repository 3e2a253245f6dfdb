"""Who is awaited, and every command a seat may send now."""

from __future__ import annotations

from domain.kernel import Seat
from tests.games.high_card.rules.commands import HighCardCommand, PlayCard
from tests.games.high_card.rules.state import HighCardState


def to_act(state: HighCardState) -> list[Seat]:
    turn = state.turn()
    return [] if turn is None else [turn]


def legal_commands(state: HighCardState, seat: Seat) -> list[HighCardCommand]:
    if state.turn() != seat:
        return []
    return [PlayCard(card=card) for card in state.hands[seat]]
