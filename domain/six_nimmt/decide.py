"""One small function per 6 nimmt! command: check phase, turn and content, then unfold the batch.

Each raises ``Rejected`` with a specific code, then lets ``flow`` unfold every consequence in the
same batch: the reveal when the last card is selected, the placements, a pause for a row choice,
the round's scoring and the next deal. Rejection messages only mention what the seat may already
know.
"""

from __future__ import annotations

from domain.fairness import Chance
from domain.kernel import Deciders, Rejected, Seat, Unfolding
from domain.six_nimmt.cards import ROW_COUNT
from domain.six_nimmt.commands import ChooseRow, DraftCard, SelectCard
from domain.six_nimmt.events import CardDrafted, CardSelected, CardsRevealed, SixNimmtEvent
from domain.six_nimmt.evolve import EVOLVERS
from domain.six_nimmt.flow import close_draft_if_done, open_round, resolve, take_row
from domain.six_nimmt.state import SixNimmtState

_PHASE_SENTENCES = {
    "drafting": "Cards are being drafted; selecting starts once every hand holds 10 cards.",
    "selecting": "Cards are being selected for this turn.",
    "resolving": "The turn's cards are being placed.",
    "choosing_row": "A row choice is awaited before the turn can go on.",
    "scoring": "The round is being scored.",
    "finished": "The game is over.",
    "waiting": "The game has not started yet.",
}


def start(state: SixNimmtState, chance: Chance) -> list[SixNimmtEvent]:
    """The first deal (standard) or the first draft (tactical)."""
    batch = Unfolding(EVOLVERS, state)
    open_round(batch, chance)
    return batch.events


def _wrong_phase(state: SixNimmtState, wanted: str) -> Rejected:
    return Rejected("wrong_phase", f"{_PHASE_SENTENCES[state.phase]} You cannot {wanted} now.")


def _select_card(
    state: SixNimmtState, command: SelectCard, seat: Seat, chance: Chance
) -> list[SixNimmtEvent]:
    if state.phase != "selecting":
        raise _wrong_phase(state, "select a card")
    if state.selected[seat] is not None:
        raise Rejected(
            "already_selected", "You have already selected your card this turn; a selection is final."
        )
    if command.card not in state.hands[seat]:
        raise Rejected("card_not_in_hand", f"Card {command.card} is not in your hand.")
    batch = Unfolding(EVOLVERS, state).add(CardSelected(seat=seat, card=command.card))
    chosen = batch.state.selected
    if all(card is not None for card in chosen):
        batch.add(
            CardsRevealed(turn=state.turn + 1, cards=tuple(card for card in chosen if card is not None))
        )
        resolve(batch, chance)
    return batch.events


def _choose_row(state: SixNimmtState, command: ChooseRow, seat: Seat, chance: Chance) -> list[SixNimmtEvent]:
    if state.phase != "choosing_row" or state.awaiting is None:
        raise _wrong_phase(state, "choose a row")
    if seat != state.awaiting:
        raise Rejected("not_your_choice", f"Seat {state.awaiting} chooses the row to take, not you.")
    if not 0 <= command.row < ROW_COUNT:
        raise Rejected(
            "no_such_row", f"There is no row {command.row}; rows are numbered 0 to {ROW_COUNT - 1}."
        )
    batch = Unfolding(EVOLVERS, state)
    take_row(batch, seat, command.row, state.pending[0], chosen=True)
    resolve(batch, chance)
    return batch.events


def _draft_card(state: SixNimmtState, command: DraftCard, seat: Seat, chance: Chance) -> list[SixNimmtEvent]:
    if not state.options.tactical:
        raise Rejected("wrong_phase", "This table does not draft: cards are dealt outside the tactical mode.")
    if state.phase != "drafting" or state.drafter is None:
        raise _wrong_phase(state, "draft a card")
    if seat != state.drafter:
        raise Rejected("not_your_turn", f"Seat {state.drafter} drafts now, not you.")
    if command.card not in state.pool:
        raise Rejected("card_not_available", f"Card {command.card} is not on the table to be drafted.")
    batch = Unfolding(EVOLVERS, state).add(CardDrafted(seat=seat, card=command.card))
    close_draft_if_done(batch)
    return batch.events


DECIDERS: Deciders[SixNimmtState, SixNimmtEvent] = Deciders(
    "6 nimmt!",
    {
        SelectCard: _select_card,
        ChooseRow: _choose_row,
        DraftCard: _draft_card,
    },
)
