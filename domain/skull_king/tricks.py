"""Following and taking tricks (docs/rules.md "Skull King"): pure functions over the plays so far.

These read only what lies on the table, so the bot and the views use them too.
"""

from __future__ import annotations

from collections.abc import Sequence

from domain.skull_king.cards import (
    SCARY_MARY,
    SKULL_KING,
    TRUMP,
    Kind,
    Suit,
    effective_kind,
    is_special,
    rank_of,
    suit_of,
)
from domain.skull_king.options import SkullKingOptions
from domain.skull_king.state import Play

PIRATE_BONUS = 30
MERMAID_BONUS = 50


def lead_suit(trick: Sequence[Play], options: SkullKingOptions) -> Suit | None:
    """The suit to follow, or ``None`` when there is none (yet, or at all).

    By default it is the suit of the first numbered card, whatever specials came before (seed). With
    ``character_lead_no_suit`` a Pirate, Mermaid or Skull King (or Scary Mary as Pirate) that leads
    means no suit; an Escape led passes the lead to the next card, as in the edition that introduced
    the option, so an Escape followed by a character also means no suit.
    """
    for play in trick:
        kind = effective_kind(play.card, play.as_)
        if kind == "number":
            return suit_of(play.card)
        if kind != "escape" and options.character_lead_no_suit:
            return None
    return None


def may_play(hand: Sequence[str], card: str, trick: Sequence[Play], options: SkullKingOptions) -> bool:
    """Specials always; a numbered card if it follows the lead suit or the hand holds none of it."""
    if is_special(card):
        return True
    suit = lead_suit(trick, options)
    if suit is None or suit_of(card) == suit:
        return True
    return all(suit_of(held) != suit for held in hand)


def playable(hand: Sequence[str], trick: Sequence[Play], options: SkullKingOptions) -> tuple[str, ...]:
    """The cards of ``hand`` that may go to ``trick`` now, in hand order."""
    return tuple(card for card in hand if may_play(hand, card, trick, options))


def _kinds(trick: Sequence[Play]) -> list[Kind]:
    return [effective_kind(play.card, play.as_) for play in trick]


def _first(kinds: Sequence[Kind], kind: Kind) -> int | None:
    return next((i for i, k in enumerate(kinds) if k == kind), None)


def _highest(trick: Sequence[Play], indices: Sequence[int]) -> int:
    """The index of the highest rank among ``indices``; equal ranks cannot occur within one suit."""
    return max(indices, key=lambda i: rank_of(trick[i].card))


def winning_index(trick: Sequence[Play]) -> int:
    """Which play takes a complete trick: the first rule of docs/rules.md "Who takes a trick" that applies."""
    kinds = _kinds(trick)
    skull_king = _first(kinds, "skull-king")
    mermaid = _first(kinds, "mermaid")
    pirate = _first(kinds, "pirate")
    if skull_king is not None:
        return mermaid if mermaid is not None else skull_king
    if pirate is not None:
        return pirate
    if mermaid is not None:
        return mermaid
    numbered = [i for i, kind in enumerate(kinds) if kind == "number"]
    blacks = [i for i in numbered if suit_of(trick[i].card) == TRUMP]
    if blacks:
        return _highest(trick, blacks)
    if numbered:
        suit = suit_of(trick[numbered[0]].card)
        return _highest(trick, [i for i in numbered if suit_of(trick[i].card) == suit])
    return 0  # only Escapes: the first card played takes the trick


def _counts_as_pirate(play: Play, options: SkullKingOptions) -> bool:
    kind = effective_kind(play.card, play.as_)
    if kind == "pirate":
        return True
    return play.card == SCARY_MARY and options.scary_mary_escape_counts_as_pirate


def trick_bonus(trick: Sequence[Play], winner: int, options: SkullKingOptions) -> int:
    """What the trick is worth to its winner if the winner's bid is exact.

    +30 per Pirate taken by the Skull King (Scary Mary as Escape only with the option); +50 when a
    Mermaid takes a trick holding the Skull King.
    """
    kind = effective_kind(trick[winner].card, trick[winner].as_)
    if kind == "skull-king":
        return PIRATE_BONUS * sum(1 for play in trick if _counts_as_pirate(play, options))
    if kind == "mermaid" and any(play.card == SKULL_KING for play in trick):
        return MERMAID_BONUS
    return 0
