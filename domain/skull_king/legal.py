"""Who is awaited, and every command a seat may send now, fully spelled out."""

from __future__ import annotations

from domain.kernel import Seat
from domain.skull_king.cards import DECLARATIONS, SCARY_MARY
from domain.skull_king.commands import Bid, PlayCard, SkullKingCommand
from domain.skull_king.state import SkullKingState
from domain.skull_king.tricks import playable


def to_act(state: SkullKingState) -> list[Seat]:
    """Every seat yet to bid while bids are made; the seat whose card is awaited while playing."""
    if state.phase == "bidding":
        return [seat for seat, bid in enumerate(state.bids) if bid is None]
    turn = state.turn()
    return [] if turn is None else [turn]


def legal_commands(state: SkullKingState, seat: Seat) -> list[SkullKingCommand]:
    """Every bid 0..r while the seat has not bid; on its turn every playable card, Scary Mary twice."""
    if state.phase == "bidding" and state.bids[seat] is None:
        return [Bid(tricks=n) for n in range(state.round + 1)]
    if state.turn() != seat:
        return []
    commands: list[SkullKingCommand] = []
    for card in playable(state.hands[seat], state.trick, state.options):
        if card == SCARY_MARY:
            commands.extend(PlayCard(card=card, as_=declared) for declared in DECLARATIONS)
        else:
            commands.append(PlayCard(card=card))
    return commands
