"""High Card's events; the hidden facts are the fields ``redact`` blanks."""

from __future__ import annotations

from domain.kernel import Event


class CardsDealt(Event, frozen=True, tag="cards_dealt"):
    """Round ``round`` was dealt by ``shuffle(round, "deal", 1..24)``: ``hands[s]`` is seat s's hand,
    ``set_aside`` the rest of the shuffled deck; each ``None`` where the viewer may not see it."""

    round: int
    leader: int
    hands: tuple[tuple[int, ...] | None, ...]
    set_aside: tuple[int, ...] | None


class CardPlayed(Event, frozen=True, tag="card_played"):
    seat: int
    card: int


class TrickWon(Event, frozen=True, tag="trick_won"):
    seat: int
    card: int


class RoundScored(Event, frozen=True, tag="round_scored"):
    round: int
    points: tuple[int, ...]
    totals: tuple[int, ...]


HighCardEvent = CardsDealt | CardPlayed | TrickWon | RoundScored
