"""The 6 nimmt! cards: numbers 1..104, their bullheads, the decks, and where a card must go.

Cards are plain ints on the wire, in events and in state, as printed on the paper cards.

Canonical deck order (the starting order of every shuffle, docs/fairness.md): ascending, 1..104. The
standard round shuffles all 104 with ``chance.shuffle(round, "deal", [1, 2, ..., 104])`` and deals
from the shuffled list ``d``: seat i gets ``d[10*i : 10*i+10]``, row k starts with ``d[10*n + k]``
(k = 0..3), and ``d[10*n + 4 :]`` stays unused. The tactical deck is 1..10n+4 ascending, laid face
up, so it is never shuffled.
"""

from __future__ import annotations

from collections.abc import Sequence

DECK_SIZE = 104
HAND_SIZE = 10
ROW_COUNT = 4
ROW_LIMIT = 5  # a sixth card takes the row (rule 3)
TOTAL_BULLHEADS = 171


def _printed_bullheads(card: int) -> int:
    """Penalty points printed on a card.

    55 is both a double and ends in 5 (7); doubles 11..99 (5); multiples of 10 (3); other cards
    ending in 5 (2, the seed's "containing 5" read as "ending in 5"); everything else (1).
    """
    if card == 55:
        return 7
    if card % 11 == 0 and card < 100:
        return 5
    if card % 10 == 0:
        return 3
    if card % 10 == 5:
        return 2
    return 1


# by card number (index 0 unused): the bots' searches ask for bullheads millions of times a minute
_BULLHEADS: tuple[int, ...] = (0, *(_printed_bullheads(card) for card in range(1, DECK_SIZE + 1)))


def bullheads(card: int) -> int:
    """Penalty points printed on a card (1..104)."""
    return _BULLHEADS[card]


def bullheads_of(cards: Sequence[int]) -> int:
    return sum(map(_BULLHEADS.__getitem__, cards))


def standard_deck() -> tuple[int, ...]:
    """All 104 cards in canonical (ascending) order."""
    return tuple(range(1, DECK_SIZE + 1))


def tactical_deck(players: int) -> tuple[int, ...]:
    """The advanced mode keeps only 1..10n+4, so that every card is in play and known."""
    return tuple(range(1, HAND_SIZE * players + ROW_COUNT + 1))


def deal_slices(
    shuffled: Sequence[int], players: int
) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...], tuple[int, ...]]:
    """Split a shuffled deck as documented above: (hands sorted ascending, row starts, unused).

    Hands are recorded sorted because order in a hand means nothing; the unused rest keeps its
    shuffled order so that an auditor can compare the whole shuffle as drawn.
    """
    hands = tuple(tuple(sorted(shuffled[HAND_SIZE * i : HAND_SIZE * (i + 1)])) for i in range(players))
    dealt = HAND_SIZE * players
    return hands, tuple(shuffled[dealt : dealt + ROW_COUNT]), tuple(shuffled[dealt + ROW_COUNT :])


def target_row(card: int, rows: Sequence[Sequence[int]]) -> int | None:
    """The row a card must join: the one whose last card is the highest below it (rules 1 and 2).

    ``None`` when the card is lower than every row's end (rule 4: its owner picks a row to take).
    """
    best: int | None = None
    for index, row in enumerate(rows):
        if row[-1] < card and (best is None or row[-1] > rows[best][-1]):
            best = index
    return best
