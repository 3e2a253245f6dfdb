"""Who is awaited, and every command a seat may send now, fully spelled out.

The random-game tests hold the rules to this list both ways: each command here is accepted, and
commands outside it are rejected.
"""

from __future__ import annotations

from domain.kernel import Seat
from domain.six_nimmt.cards import ROW_COUNT, bullheads_of
from domain.six_nimmt.commands import ChooseRow, DraftCard, SelectCard, SixNimmtCommand
from domain.six_nimmt.state import SixNimmtState


def to_act(state: SixNimmtState) -> list[Seat]:
    """Every seat yet to select a card this turn, the seat choosing a row, or the drafter."""
    if state.phase == "selecting":
        return [seat for seat in range(state.players) if state.selected[seat] is None and state.hands[seat]]
    if state.phase == "choosing_row" and state.awaiting is not None:
        return [state.awaiting]
    if state.phase == "drafting" and state.drafter is not None:
        return [state.drafter]
    return []


def legal_commands(state: SixNimmtState, seat: Seat) -> list[SixNimmtCommand]:
    if seat not in to_act(state):
        return []
    if state.phase == "selecting":
        return [SelectCard(card=card) for card in state.hands[seat]]
    if state.phase == "choosing_row":
        return [ChooseRow(row=row) for row in range(ROW_COUNT)]
    return [DraftCard(card=card) for card in state.pool]


def default_command(state: SixNimmtState, seat: Seat) -> SixNimmtCommand | None:
    """On timeout: a row choice takes the row with the fewest bullheads, the lowest index on a tie;
    a tactical draft takes the lowest card of the pool. A card selection has no default (the bot's)."""
    if seat not in to_act(state):
        return None
    if state.phase == "choosing_row":
        return ChooseRow(row=min(range(ROW_COUNT), key=lambda row: (bullheads_of(state.rows[row]), row)))
    if state.phase == "drafting":
        return DraftCard(card=min(state.pool))
    return None
