"""Folding 6 nimmt! events into the state: it only records what ``decide`` decided.

Nothing here validates or draws. The only reasoning is bookkeeping that follows from the facts: a
placement that empties ``pending`` ends the turn (``selecting`` again, or ``scoring`` when the hands
are empty), and the next drafter is the next seat clockwise.
"""

from __future__ import annotations

from msgspec.structs import replace

from domain.kernel import Evolvers
from domain.six_nimmt.events import (
    CardDrafted,
    CardPlaced,
    CardsDealt,
    CardSelected,
    CardsRevealed,
    DraftCompleted,
    DraftOpened,
    RoundScored,
    RowChoiceAwaited,
    RowTaken,
    SixNimmtEvent,
)
from domain.six_nimmt.state import SixNimmtState


def _with(
    items: tuple[tuple[int, ...], ...], index: int, value: tuple[int, ...]
) -> tuple[tuple[int, ...], ...]:
    return (*items[:index], value, *items[index + 1 :])


def _without(cards: tuple[int, ...], card: int) -> tuple[int, ...]:
    return tuple(c for c in cards if c != card)


def _new_round(state: SixNimmtState, round_number: int) -> SixNimmtState:
    empty: tuple[tuple[int, ...], ...] = ((),) * state.players
    return replace(
        state,
        round=round_number,
        turn=0,
        hands=empty,
        rows=(),
        unused=(),
        pool=(),
        drafter=None,
        selected=(None,) * state.players,
        revealed=(),
        pending=(),
        awaiting=None,
        piles=empty,
    )


def _after_placement(state: SixNimmtState) -> SixNimmtState:
    """The turn is over once no revealed card waits; the round once the hands are empty too."""
    if state.pending:
        return replace(state, phase="resolving")
    return replace(state, phase="selecting" if any(state.hands) else "scoring")


def _dealt(state: SixNimmtState, event: CardsDealt) -> SixNimmtState:
    hands = tuple(hand or () for hand in event.hands)
    return replace(
        _new_round(state, event.round),
        phase="selecting",
        hands=hands,
        rows=tuple((card,) for card in event.rows),
        unused=event.unused or (),
    )


def _draft_opened(state: SixNimmtState, event: DraftOpened) -> SixNimmtState:
    return replace(
        _new_round(state, event.round),
        phase="drafting",
        pool=event.cards,
        first_drafter=event.first_drafter,
        drafter=event.first_drafter,
    )


def _drafted(state: SixNimmtState, event: CardDrafted) -> SixNimmtState:
    hand = tuple(sorted((*state.hands[event.seat], event.card)))
    return replace(
        state,
        pool=_without(state.pool, event.card),
        hands=_with(state.hands, event.seat, hand),
        drafter=(event.seat + 1) % state.players,
    )


def _draft_completed(state: SixNimmtState, event: DraftCompleted) -> SixNimmtState:
    rows = tuple((card,) for card in event.rows)
    return replace(state, phase="selecting", pool=(), drafter=None, rows=rows)


def _selected(state: SixNimmtState, event: CardSelected) -> SixNimmtState:
    hands = state.hands
    if event.card is not None:
        hands = _with(hands, event.seat, _without(hands[event.seat], event.card))
    selected = (*state.selected[: event.seat], event.card, *state.selected[event.seat + 1 :])
    return replace(state, hands=hands, selected=selected)


def _revealed(state: SixNimmtState, event: CardsRevealed) -> SixNimmtState:
    return replace(
        state,
        phase="resolving",
        turn=event.turn,
        selected=(None,) * state.players,
        revealed=event.cards,
        pending=tuple(sorted(event.cards)),
    )


def _placed(state: SixNimmtState, event: CardPlaced) -> SixNimmtState:
    rows = _with(state.rows, event.row, (*state.rows[event.row], event.card))
    return _after_placement(replace(state, rows=rows, pending=_without(state.pending, event.card)))


def _choice_awaited(state: SixNimmtState, event: RowChoiceAwaited) -> SixNimmtState:
    return replace(state, phase="choosing_row", awaiting=event.seat)


def _taken(state: SixNimmtState, event: RowTaken) -> SixNimmtState:
    seat = event.seat
    totals = (*state.totals[:seat], state.totals[seat] + event.bullheads, *state.totals[seat + 1 :])
    return _after_placement(
        replace(
            state,
            rows=_with(state.rows, event.row, (event.card,)),
            piles=_with(state.piles, seat, (*state.piles[seat], *event.taken)),
            totals=totals,
            pending=_without(state.pending, event.card),
            awaiting=None,
        )
    )


def _scored(state: SixNimmtState, event: RoundScored) -> SixNimmtState:
    return replace(
        state,
        phase="finished" if event.final else "scoring",
        history=(*state.history, event.penalties),
        totals=event.totals,
    )


EVOLVERS: Evolvers[SixNimmtState, SixNimmtEvent] = Evolvers(
    {
        CardsDealt: _dealt,
        DraftOpened: _draft_opened,
        CardDrafted: _drafted,
        DraftCompleted: _draft_completed,
        CardSelected: _selected,
        CardsRevealed: _revealed,
        CardPlaced: _placed,
        RowChoiceAwaited: _choice_awaited,
        RowTaken: _taken,
        RoundScored: _scored,
    }
)
