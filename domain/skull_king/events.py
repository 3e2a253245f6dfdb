"""Skull King events: every fact of a game, past tense, with stable snake_case tags.

Hidden facts are optional fields that ``redact`` blanks to ``None`` for seats that may not see them:
the other seats' hands and the unused cards in ``cards_dealt``, the amount in ``bid_placed``.
"""

from __future__ import annotations

import msgspec

from domain.kernel import Event
from domain.skull_king.cards import Declaration


class FirstDealerChosen(Event, frozen=True, tag="first_dealer_chosen"):
    """The fair draw ``uniform(1, "first-dealer", players)`` picked the dealer of round 1."""

    seat: int


class CardsDealt(Event, frozen=True, tag="cards_dealt"):
    """Round ``round`` was dealt: ``hands[s]`` is seat s's hand (``None`` when hidden from the viewer).

    ``unused`` is the rest of the shuffled deck, in shuffled order, hidden from every seat until the
    game is over; with the hands it is the whole shuffle, so an auditor can compare it as drawn.
    """

    round: int
    dealer: int
    leader: int
    hands: tuple[tuple[str, ...] | None, ...]
    unused: tuple[str, ...] | None


class BidPlaced(Event, frozen=True, tag="bid_placed"):
    """A seat bid; ``tricks`` is ``None`` for every other seat until ``bids_revealed``."""

    seat: int
    tricks: int | None


class BidsRevealed(Event, frozen=True, tag="bids_revealed"):
    """The last bid came in: every bid, by seat, made public at once."""

    bids: tuple[int, ...]


class CardPlayed(Event, frozen=True, tag="card_played"):
    """A card went to the trick in progress; ``as`` is Scary Mary's declaration, else ``None``."""

    seat: int
    card: str
    as_: Declaration | None = msgspec.field(default=None, name="as")


class TrickWon(Event, frozen=True, tag="trick_won"):
    """The trick in progress is complete and taken by ``winner`` with ``card``.

    ``bonus`` is what the trick is worth to its winner if the winner's bid turns out exact (+30 per
    Pirate captured by the Skull King, +50 for a Mermaid capturing the Skull King).
    """

    trick: int  # 1-based within the round
    winner: int
    card: str
    bonus: int


class RoundScored(Event, frozen=True, tag="round_scored"):
    """Round ``round`` is over: per seat its bid, tricks, bonus counted, round score and new total."""

    round: int
    bids: tuple[int, ...]
    tricks: tuple[int, ...]
    bonuses: tuple[int, ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]


SkullKingEvent = (
    FirstDealerChosen | CardsDealt | BidPlaced | BidsRevealed | CardPlayed | TrickWon | RoundScored
)
