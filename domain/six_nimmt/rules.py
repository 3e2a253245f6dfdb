"""The rules of 6 nimmt! (shared/RULES.md) as a pure Decider; ``RULES`` is the instance the table uses.

Each command has one small function that checks phase, turn and content, raising ``Rejected`` with a
specific code, then lets a ``flow.Batch`` unfold every consequence in the same batch: the reveal
when the last card is selected, the placements, a pause for a row choice, the round's scoring and
the next deal. Rejection messages only mention what the seat may already know.
"""

from __future__ import annotations

from msgspec.structs import replace

from domain.fairness import Chance
from domain.kernel import Rejected, Rules, Seat
from domain.six_nimmt.cards import ROW_COUNT
from domain.six_nimmt.commands import ChooseRow, DraftCard, SelectCard, SixNimmtCommand
from domain.six_nimmt.events import CardDrafted, CardsDealt, CardSelected, CardsRevealed, SixNimmtEvent
from domain.six_nimmt.evolve import evolve
from domain.six_nimmt.flow import Batch, close_draft_if_done, open_round, resolve, take_row
from domain.six_nimmt.options import MAX_END_SCORE, MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState, fresh_state

_PHASE_SENTENCES = {
    "drafting": "Cards are being drafted; selecting starts once every hand holds 10 cards.",
    "selecting": "Cards are being selected for this turn.",
    "resolving": "The turn's cards are being placed.",
    "choosing_row": "A row choice is awaited before the turn can go on.",
    "scoring": "The round is being scored.",
    "finished": "The game is over.",
    "waiting": "The game has not started yet.",
}


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
    batch = Batch(state)
    batch.add(CardSelected(seat=seat, card=command.card))
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
    batch = Batch(state)
    take_row(batch, seat, command.row, state.pending[0], chosen=True)
    resolve(batch, chance)
    return batch.events


def _draft_card(state: SixNimmtState, command: DraftCard, seat: Seat) -> list[SixNimmtEvent]:
    if not state.options.tactical:
        raise Rejected("wrong_phase", "This table does not draft: cards are dealt outside the tactical mode.")
    if state.phase != "drafting" or state.drafter is None:
        raise _wrong_phase(state, "draft a card")
    if seat != state.drafter:
        raise Rejected("not_your_turn", f"Seat {state.drafter} drafts now, not you.")
    if command.card not in state.pool:
        raise Rejected("card_not_available", f"Card {command.card} is not on the table to be drafted.")
    batch = Batch(state)
    batch.add(CardDrafted(seat=seat, card=command.card))
    close_draft_if_done(batch)
    return batch.events


class SixNimmtRules:
    """6 nimmt! for 2-10 players, standard or tactical; see the module docstring."""

    name = "six-nimmt"
    options_type = SixNimmtOptions
    command_type = SixNimmtCommand
    event_type = SixNimmtEvent
    state_type = SixNimmtState

    def check_options(self, options: SixNimmtOptions, players: int) -> None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise Rejected("bad_player_count", f"6 nimmt! is for {MIN_PLAYERS} to {MAX_PLAYERS} players.")
        if not 1 <= options.end_score <= MAX_END_SCORE:
            raise Rejected("invalid_options", f"end_score must be between 1 and {MAX_END_SCORE}.")
        if options.rounds is not None and not 1 <= options.rounds <= MAX_ROUNDS:
            raise Rejected("invalid_options", f"rounds must be between 1 and {MAX_ROUNDS}, or null.")

    def initial_state(self, options: SixNimmtOptions, players: int) -> SixNimmtState:
        return fresh_state(options, players)

    def start(self, state: SixNimmtState, chance: Chance) -> list[SixNimmtEvent]:
        batch = Batch(state)
        open_round(batch, chance)
        return batch.events

    def decide(
        self, state: SixNimmtState, command: SixNimmtCommand, seat: Seat, chance: Chance
    ) -> list[SixNimmtEvent]:
        if isinstance(command, SelectCard):
            return _select_card(state, command, seat, chance)
        if isinstance(command, ChooseRow):
            return _choose_row(state, command, seat, chance)
        return _draft_card(state, command, seat)

    def evolve(self, state: SixNimmtState, event: SixNimmtEvent) -> SixNimmtState:
        return evolve(state, event)

    def is_terminal(self, state: SixNimmtState) -> bool:
        return state.phase == "finished"

    def current_round(self, state: SixNimmtState) -> int:
        """The round last dealt (the next deal happens in the batch that scores a round); 1 at first."""
        return max(state.round, 1)

    def rounds_completed(self, state: SixNimmtState) -> int:
        """Scored rounds: once ``round_scored`` is recorded, that round's seed may be revealed."""
        return state.rounds_completed()

    def withheld_rounds(self, state: SixNimmtState) -> frozenset[int]:
        """None: every hand is played out and the rows are public by the end of a round; the unused cards
        a seed would expose are hidden by no rule."""
        return frozenset()

    def phase(self, state: SixNimmtState) -> str:
        return state.phase

    def to_act(self, state: SixNimmtState) -> list[Seat]:
        if state.phase == "selecting":
            return [
                seat for seat in range(state.players) if state.selected[seat] is None and state.hands[seat]
            ]
        if state.phase == "choosing_row" and state.awaiting is not None:
            return [state.awaiting]
        if state.phase == "drafting" and state.drafter is not None:
            return [state.drafter]
        return []

    def legal_commands(self, state: SixNimmtState, seat: Seat) -> list[SixNimmtCommand]:
        if seat not in self.to_act(state):
            return []
        if state.phase == "selecting":
            return [SelectCard(card=card) for card in state.hands[seat]]
        if state.phase == "choosing_row":
            return [ChooseRow(row=row) for row in range(ROW_COUNT)]
        return [DraftCard(card=card) for card in state.pool]

    def redact(self, event: SixNimmtEvent, viewer: Seat | None) -> SixNimmtEvent:
        """Other seats' dealt hands, the undealt rest and face-down cards stay hidden."""
        if isinstance(event, CardsDealt):
            hands = tuple(hand if seat == viewer else None for seat, hand in enumerate(event.hands))
            return replace(event, hands=hands, unused=None)
        if isinstance(event, CardSelected) and event.seat != viewer:
            return replace(event, card=None)
        return event

    def scores(self, state: SixNimmtState) -> list[int]:
        """Bullheads taken so far, the round in play included (lower is better)."""
        return list(state.totals)

    def winners(self, state: SixNimmtState) -> list[Seat]:
        """The lowest total wins; equal lowest totals share the victory."""
        if state.phase != "finished":
            return []
        best = min(state.totals)
        return [seat for seat, total in enumerate(state.totals) if total == best]


RULES: Rules[SixNimmtState, SixNimmtCommand, SixNimmtEvent, SixNimmtOptions] = SixNimmtRules()
