"""Bullheads of every card, the decks, and which row a card must join (docs/rules.md "6 nimmt!")."""

from __future__ import annotations

import pytest

from domain.six_nimmt.cards import (
    TOTAL_BULLHEADS,
    bullheads,
    bullheads_of,
    deal_slices,
    standard_deck,
    tactical_deck,
    target_row,
)

# Written out by hand from the rulebook, independently of the function under test.
SEVEN = {55}
FIVE = {11, 22, 33, 44, 66, 77, 88, 99}
THREE = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
TWO = {5, 15, 25, 35, 45, 65, 75, 85, 95}


def printed_bullheads(card: int) -> int:
    for points, cards in ((7, SEVEN), (5, FIVE), (3, THREE), (2, TWO)):
        if card in cards:
            return points
    return 1


@pytest.mark.parametrize("card", range(1, 105))
def test_every_card_carries_the_bullheads_printed_on_it(card: int) -> None:
    assert bullheads(card) == printed_bullheads(card)


def test_the_104_cards_total_171_bullheads() -> None:
    assert bullheads_of(standard_deck()) == TOTAL_BULLHEADS == 171
    assert standard_deck() == tuple(range(1, 105))


@pytest.mark.parametrize(
    ("players", "total"),
    # By decade: 1-10 -> 13, 51-60 -> 18, every other full decade -> 17, a 4-card tail x1..x4 -> 4
    # (8 when it holds a double: 22, 33, 44).
    [(2, 38), (3, 55), (4, 72), (5, 85), (6, 103), (7, 120), (8, 137), (9, 154), (10, 171)],
)
def test_a_tactical_deck_is_1_to_10n_plus_4_with_its_bullheads(players: int, total: int) -> None:
    deck = tactical_deck(players)
    assert deck == tuple(range(1, 10 * players + 5))
    assert bullheads_of(deck) == sum(printed_bullheads(card) for card in deck) == total


def test_a_deal_gives_seat_i_the_cards_10i_to_10i_plus_9_and_the_next_four_start_the_rows() -> None:
    shuffled = list(range(104, 0, -1))
    hands, rows, unused = deal_slices(shuffled, 3)
    assert hands[0] == tuple(range(95, 105))
    assert hands[2] == tuple(range(75, 85))
    assert rows == (74, 73, 72, 71)
    assert unused == tuple(range(70, 0, -1))


def test_a_card_joins_the_row_ending_in_the_highest_value_below_it() -> None:
    rows = ((12,), (37,), (43,), (58,))
    assert target_row(14, rows) == 0
    assert target_row(44, rows) == 2
    assert target_row(61, rows) == 3
    assert target_row(40, rows) == 1


def test_a_card_below_every_row_end_has_no_row() -> None:
    assert target_row(3, ((12,), (37,), (43,), (58,))) is None
