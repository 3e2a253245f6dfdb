"""The Skull King deck: 66 card ids (docs/api.md "Commands"), their canonical order, and what each card is.

Cards are plain strings on the wire, in events and in state, so that a stored game reads like the
paper game. The canonical order below is the starting order of every shuffle (docs/fairness.md): the
auditor rebuilds it from this documentation alone, so it must never change.

Canonical deck order (index 0 first):
  yellow-1 .. yellow-13, red-1 .. red-13, blue-1 .. blue-13, black-1 .. black-13,
  escape-1 .. escape-5, pirate-1 .. pirate-5, mermaid-1, mermaid-2, scary-mary, skull-king.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Suit = Literal["yellow", "red", "blue", "black"]
Kind = Literal["number", "escape", "pirate", "mermaid", "scary-mary", "skull-king"]
Declaration = Literal["pirate", "escape"]

SUITS: tuple[Suit, ...] = ("yellow", "red", "blue", "black")
PLAIN_SUITS: tuple[Suit, ...] = ("yellow", "red", "blue")
TRUMP: Suit = "black"
RANKS = range(1, 14)
SCARY_MARY = "scary-mary"
SKULL_KING = "skull-king"
DECLARATIONS: tuple[Declaration, ...] = ("pirate", "escape")


class CardInfo(msgspec.Struct, frozen=True):
    """What a card id means: its kind, and for numbered cards its suit and rank."""

    kind: Kind
    suit: Suit | None = None
    rank: int = 0


def _deck() -> dict[str, CardInfo]:
    cards: dict[str, CardInfo] = {}
    for suit in SUITS:
        for rank in RANKS:
            cards[f"{suit}-{rank}"] = CardInfo("number", suit, rank)
    for i in range(1, 6):
        cards[f"escape-{i}"] = CardInfo("escape")
    for i in range(1, 6):
        cards[f"pirate-{i}"] = CardInfo("pirate")
    cards["mermaid-1"] = CardInfo("mermaid")
    cards["mermaid-2"] = CardInfo("mermaid")
    cards[SCARY_MARY] = CardInfo("scary-mary")
    cards[SKULL_KING] = CardInfo("skull-king")
    return cards


CARDS: dict[str, CardInfo] = _deck()
DECK: tuple[str, ...] = tuple(CARDS)  # the canonical order documented above
assert len(DECK) == 66


def is_card(card: str) -> bool:
    return card in CARDS


def info(card: str) -> CardInfo:
    return CARDS[card]


def suit_of(card: str) -> Suit | None:
    """The suit of a numbered card; ``None`` for every special card."""
    return CARDS[card].suit


def rank_of(card: str) -> int:
    return CARDS[card].rank


def is_special(card: str) -> bool:
    """Special cards (Escape, Pirate, Mermaid, Scary Mary, Skull King) may always be played."""
    return CARDS[card].kind != "number"


def effective_kind(card: str, declared: Declaration | None) -> Kind:
    """The kind a played card counts as: Scary Mary counts as what she was declared."""
    kind = CARDS[card].kind
    if kind == "scary-mary":
        return "escape" if declared == "escape" else "pirate"
    return kind
