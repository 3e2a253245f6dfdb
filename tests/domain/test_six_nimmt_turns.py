"""One turn of 6 nimmt!: hidden selection, the reveal, and placing cards by rules 1-4.

The three rulebook turns of docs/rules.md "Worked examples" are played from states built by folding a
``cards_dealt`` event (rows set directly where a turn starts mid-round).
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.fairness import Chance, player_mix
from domain.kernel import fold
from domain.six_nimmt import RULES
from domain.six_nimmt.commands import ChooseRow, SelectCard
from domain.six_nimmt.events import (
    CardPlaced,
    CardsDealt,
    CardSelected,
    CardsRevealed,
    RowChoiceAwaited,
    RowTaken,
    SixNimmtEvent,
)
from domain.six_nimmt.options import SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState
from tests.support.play import seeds_from

CHANCE = Chance(seeds_from("six-nimmt-turns"), player_mix("turns", ["a", "b", "c", "d"]))
# Each seat keeps a spare high card so that the round never ends inside a scenario.
SPARE = (101, 102, 103, 104)


def dealt(hands: list[list[int]], rows: list[list[int]], **options: Any) -> SixNimmtState:
    """A round-1 state with these hands (plus a spare each) and these rows."""
    state = RULES.initial_state(SixNimmtOptions(**options), len(hands))
    full = tuple(tuple(sorted((*hand, SPARE[seat]))) for seat, hand in enumerate(hands))
    state = RULES.evolve(state, CardsDealt(round=1, hands=full, rows=tuple(r[0] for r in rows), unused=()))
    return msgspec.structs.replace(state, rows=tuple(tuple(row) for row in rows))


def play_turn(state: SixNimmtState, cards: list[int]) -> tuple[SixNimmtState, list[SixNimmtEvent]]:
    """Every seat selects its card, seat 0 first."""
    events: list[SixNimmtEvent] = []
    for seat, card in enumerate(cards):
        batch = RULES.decide(state, SelectCard(card=card), seat, CHANCE)
        state = fold(RULES, state, batch)
        events.extend(batch)
    return state, events


def rows_of(state: SixNimmtState) -> list[list[int]]:
    return [list(row) for row in state.rows]


RULEBOOK_TURNS = [[14, 15, 44, 61], [21, 26, 30, 36], [3, 9, 68, 83]]


def rulebook_hands(first_turn: int) -> list[list[int]]:
    """Seat i holds the i-th card of every rulebook turn from ``first_turn`` (1-based) on."""
    return [[turn[seat] for turn in RULEBOOK_TURNS[first_turn - 1 :]] for seat in range(4)]


def test_rulebook_turn_1_cards_join_the_rows_with_the_smallest_difference() -> None:
    state = dealt(rulebook_hands(1), [[12], [37], [43], [58]])
    state, events = play_turn(state, [14, 15, 44, 61])
    assert rows_of(state) == [[12, 14, 15], [37], [43, 44], [58, 61]]
    assert [e for e in events if isinstance(e, CardPlaced)] == [
        CardPlaced(seat=0, card=14, row=0),
        CardPlaced(seat=1, card=15, row=0),
        CardPlaced(seat=2, card=44, row=2),
        CardPlaced(seat=3, card=61, row=3),
    ]
    assert state.phase == "selecting" and state.totals == (0, 0, 0, 0)


def test_rulebook_turn_2_the_sixth_card_takes_the_five_and_starts_the_row() -> None:
    state = dealt(rulebook_hands(2), [[12, 14, 15], [37], [43, 44], [58, 61]])
    state, events = play_turn(state, [21, 26, 30, 36])
    assert RowTaken(seat=2, row=0, card=30, taken=(12, 14, 15, 21, 26), bullheads=6, chosen=False) in events
    assert rows_of(state) == [[30, 36], [37], [43, 44], [58, 61]]
    assert state.piles[2] == (12, 14, 15, 21, 26)
    assert state.totals == (0, 0, 6, 0)


def test_rulebook_turn_3_the_lowest_card_waits_for_its_owner_to_choose_a_row() -> None:
    state = dealt(rulebook_hands(3), [[30, 36], [37], [43, 44], [58, 61]])
    state, events = play_turn(state, [3, 9, 68, 83])
    assert events[-1] == RowChoiceAwaited(seat=0, card=3)
    assert state.phase == "choosing_row"
    assert RULES.to_act(state) == [0]
    assert RULES.legal_commands(state, 0) == [ChooseRow(row=r) for r in range(4)]
    assert rows_of(state) == [[30, 36], [37], [43, 44], [58, 61]]  # nothing placed yet

    events = RULES.decide(state, ChooseRow(row=1), 0, CHANCE)
    state = fold(RULES, state, events)
    assert events == [
        RowTaken(seat=0, row=1, card=3, taken=(37,), bullheads=1, chosen=True),
        CardPlaced(seat=1, card=9, row=1),
        CardPlaced(seat=2, card=68, row=3),
        CardPlaced(seat=3, card=83, row=3),
    ]
    assert rows_of(state) == [[30, 36], [3, 9], [43, 44], [58, 61, 68, 83]]
    assert state.totals == (1, 0, 0, 0)
    assert state.phase == "selecting"


def test_the_three_rulebook_turns_in_a_row_end_as_the_rulebook_shows() -> None:
    state = dealt(rulebook_hands(1), [[12], [37], [43], [58]])
    for cards in RULEBOOK_TURNS:
        state, _ = play_turn(state, cards)
    state = fold(RULES, state, RULES.decide(state, ChooseRow(row=1), 0, CHANCE))
    assert rows_of(state) == [[30, 36], [3, 9], [43, 44], [58, 61, 68, 83]]
    assert state.totals == (1, 0, 6, 0)
    assert state.hands == ((101,), (102,), (103,), (104,))


def test_a_selection_is_hidden_until_every_seat_has_selected() -> None:
    state = dealt(rulebook_hands(1), [[12], [37], [43], [58]])
    events = RULES.decide(state, SelectCard(card=14), 0, CHANCE)
    assert events == [CardSelected(seat=0, card=14)]
    assert RULES.redact(events[0], 1) == CardSelected(seat=0, card=None)
    assert RULES.redact(events[0], None) == CardSelected(seat=0, card=None)
    assert RULES.redact(events[0], 0) == events[0]
    state = fold(RULES, state, events)
    assert RULES.to_act(state) == [1, 2, 3]
    assert RULES.legal_commands(state, 0) == []
    assert 14 not in state.hands[0]


def test_the_last_selection_reveals_every_card_in_one_public_event() -> None:
    state = dealt(rulebook_hands(1), [[12], [37], [43], [58]])
    _, events = play_turn(state, [14, 15, 44, 61])
    reveal = next(e for e in events if isinstance(e, CardsRevealed))
    assert reveal == CardsRevealed(turn=1, cards=(14, 15, 44, 61))
    assert all(RULES.redact(reveal, viewer) == reveal for viewer in (None, 0, 1, 2, 3))
    assert events.index(reveal) == 4  # right after the fourth selection, in that batch


def test_resolution_continues_after_a_row_choice_with_a_sixth_card_in_the_same_batch() -> None:
    state = dealt([[2, 50], [60, 51]], [[10, 20, 30, 40, 45], [70], [80], [90]])
    state, _ = play_turn(state, [2, 60])
    assert state.awaiting == 0
    events = RULES.decide(state, ChooseRow(row=2), 0, CHANCE)
    assert events == [
        RowTaken(seat=0, row=2, card=2, taken=(80,), bullheads=3, chosen=True),
        RowTaken(seat=1, row=0, card=60, taken=(10, 20, 30, 40, 45), bullheads=14, chosen=False),
    ]


def test_taken_cards_go_to_the_penalty_pile_never_to_the_hand() -> None:
    state = dealt(rulebook_hands(2), [[12, 14, 15], [37], [43, 44], [58, 61]])
    state, _ = play_turn(state, [21, 26, 30, 36])
    assert state.hands[2] == (68, 103)  # 30 was played, nothing came back
    assert state.piles[2] == (12, 14, 15, 21, 26)
