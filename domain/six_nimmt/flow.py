"""How one command's batch of events unfolds: opening rounds, resolving a turn, scoring a round.

``decide`` checks a command, then hands its ``Unfolding`` (``domain.kernel``) to these functions. It
applies each event to a working copy of the state as it is added, so every later decision in the
same batch (the next card to place, the end of the round, the next deal) reads exactly the state the
events record.
"""

from __future__ import annotations

from domain.fairness import Chance
from domain.kernel import Unfolding
from domain.six_nimmt.cards import (
    ROW_COUNT,
    ROW_LIMIT,
    bullheads_of,
    deal_slices,
    standard_deck,
    tactical_deck,
    target_row,
)
from domain.six_nimmt.events import (
    CardPlaced,
    CardsDealt,
    DraftCompleted,
    DraftOpened,
    RoundScored,
    RowChoiceAwaited,
    RowTaken,
    SixNimmtEvent,
)
from domain.six_nimmt.options import SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState

DEAL_LABEL = "deal"
FIRST_DRAFTER_LABEL = "first-drafter"


Batch = Unfolding[SixNimmtState, SixNimmtEvent]
"""The events of one command so far and the state they lead to."""


def open_round(batch: Batch, chance: Chance) -> None:
    """Deal (standard) or lay out the draft (tactical) for the next round."""
    state = batch.state
    round_number = state.round + 1
    if state.options.tactical:
        if state.first_drafter is None:
            first = chance.uniform(round_number, FIRST_DRAFTER_LABEL, state.players)
        else:
            first = (state.first_drafter + 1) % state.players
        batch.add(DraftOpened(round=round_number, first_drafter=first, cards=tactical_deck(state.players)))
        return
    shuffled = chance.shuffle(round_number, DEAL_LABEL, list(standard_deck()))
    hands, rows, unused = deal_slices(shuffled, state.players)
    batch.add(CardsDealt(round=round_number, hands=hands, rows=rows, unused=unused))


def close_draft_if_done(batch: Batch) -> None:
    """Once every hand is full, the cards left on the table start the rows, lowest in row 0."""
    pool = batch.state.pool
    if len(pool) == ROW_COUNT:
        batch.add(DraftCompleted(rows=tuple(sorted(pool))))


def take_row(batch: Batch, seat: int, row: int, card: int, chosen: bool) -> None:
    taken = batch.state.rows[row]
    batch.add(
        RowTaken(seat=seat, row=row, card=card, taken=taken, bullheads=bullheads_of(taken), chosen=chosen)
    )


def resolve(batch: Batch, chance: Chance) -> None:
    """Place the revealed cards lowest first until one needs its owner's row choice or none is left.

    A finished turn with empty hands ends the round in the same batch.
    """
    while batch.state.pending:
        state = batch.state
        card = state.pending[0]
        seat = state.owner_of_revealed(card)
        row = target_row(card, state.rows)
        if row is None:
            batch.add(RowChoiceAwaited(seat=seat, card=card))
            return
        if len(state.rows[row]) >= ROW_LIMIT:
            take_row(batch, seat, row, card, chosen=False)
        else:
            batch.add(CardPlaced(seat=seat, card=card, row=row))
    if batch.state.phase == "scoring":
        score_round(batch, chance)


def is_final(options: SixNimmtOptions, round_number: int, totals: tuple[int, ...]) -> bool:
    """The end condition, checked after each round: a fixed number of rounds, or the score limit."""
    if options.rounds is not None:
        return round_number >= options.rounds
    if options.end_compare == "ge":
        return any(total >= options.end_score for total in totals)
    return any(total > options.end_score for total in totals)


def score_round(batch: Batch, chance: Chance) -> None:
    """Record the round's penalties; deal the next round unless the game is over."""
    state = batch.state
    penalties = tuple(bullheads_of(pile) for pile in state.piles)
    final = is_final(state.options, state.round, state.totals)
    batch.add(RoundScored(round=state.round, penalties=penalties, totals=state.totals, final=final))
    if not final:
        open_round(batch, chance)
