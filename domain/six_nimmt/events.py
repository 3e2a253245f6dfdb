"""6 nimmt! events: every fact of a game, past tense, with stable snake_case tags.

Hidden facts are optional fields that ``redact`` blanks to ``None`` for seats that may not see them:
the other seats' hands and the unused cards in ``cards_dealt``, the card in ``card_selected``.
"""

from __future__ import annotations

from domain.kernel import Event


class CardsDealt(Event, tag="cards_dealt", frozen=True):
    """Round ``round`` was dealt from ``shuffle(round, "deal", 1..104)`` (see ``cards``).

    ``hands[s]`` is seat s's hand, sorted (``None`` when hidden from the viewer); ``rows`` are the
    four starting cards, public; ``unused`` is the rest of the shuffle in shuffled order, hidden
    from every seat until the game is over, so that an auditor can compare the whole shuffle.
    """

    round: int
    hands: tuple[tuple[int, ...] | None, ...]
    rows: tuple[int, ...]
    unused: tuple[int, ...] | None


class DraftOpened(Event, tag="draft_opened", frozen=True):
    """Tactical round ``round``: ``cards`` lie face up and ``first_drafter`` picks first.

    Round 1's first drafter comes from ``uniform(1, "first-drafter", players)``; each later round
    starts one seat further clockwise.
    """

    round: int
    first_drafter: int
    cards: tuple[int, ...]


class CardDrafted(Event, tag="card_drafted", frozen=True):
    """A seat took a face-up card into its (public) hand."""

    seat: int
    card: int


class DraftCompleted(Event, tag="draft_completed", frozen=True):
    """Every hand holds 10 cards; the four cards left start rows 0-3 in ascending order."""

    rows: tuple[int, ...]


class CardSelected(Event, tag="card_selected", frozen=True):
    """A seat put a card face down; ``card`` is ``None`` for every other seat until the reveal."""

    seat: int
    card: int | None


class CardsRevealed(Event, tag="cards_revealed", frozen=True):
    """The last selection came in: turn ``turn``'s cards, by seat, turned face up at once."""

    turn: int
    cards: tuple[int, ...]


class CardPlaced(Event, tag="card_placed", frozen=True):
    """A revealed card joined the end of ``row`` (rules 1 and 2)."""

    seat: int
    card: int
    row: int


class RowChoiceAwaited(Event, tag="row_choice_awaited", frozen=True):
    """``card`` is lower than every row's end: resolution waits for ``seat`` to choose a row."""

    seat: int
    card: int


class RowTaken(Event, tag="row_taken", frozen=True):
    """``seat`` took ``row``'s cards into its penalty pile and ``card`` now starts that row.

    ``chosen`` tells rule 4 (the seat chose the row) from rule 3 (the card was the sixth).
    """

    seat: int
    row: int
    card: int
    taken: tuple[int, ...]
    bullheads: int
    chosen: bool


class RoundScored(Event, tag="round_scored", frozen=True):
    """Round ``round`` is over: per seat its bullheads this round and the new totals.

    ``final`` records the end-of-game decision (score limit or the fixed number of rounds).
    """

    round: int
    penalties: tuple[int, ...]
    totals: tuple[int, ...]
    final: bool


SixNimmtEvent = (
    CardsDealt
    | DraftOpened
    | CardDrafted
    | DraftCompleted
    | CardSelected
    | CardsRevealed
    | CardPlaced
    | RowChoiceAwaited
    | RowTaken
    | RoundScored
)
