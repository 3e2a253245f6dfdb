"""A Skull King state as one viewer cannot tell it from the true one: everything hidden from it re-drawn.

What a viewer sees (``projections/skull_king.py``): the trick in progress, the round's completed
tricks, every hand's size, who has bid, the tricks won, the score pad; its own hand and bid; every
bid once they are revealed. So the other seats' hands and the undealt cards (``unused``) are one
pool of cards to deal again, and the other seats' bids, while they are not revealed, are bids again
among the legal ones (0 to the round's number).

The cards are not always dealt again blindly: a seat that played a numbered card of another suit
than the one led showed that it holds none of the suit led (``domain.skull_king.tricks.may_play``),
and stays without it for the rest of the round. Once a seat has shown that, the cards are moved by
random swaps between two places instead, each swap kept only when neither card lands in the hand
of a seat known to lack its suit: starting from the true deal, which keeps every such void, every
state drawn keeps them too.
"""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.kernel import Seat
from domain.skull_king.cards import Suit, suit_of
from domain.skull_king.state import Play, SkullKingState
from domain.skull_king.tricks import lead_suit

SWAPS_PER_CARD = 3  # swap attempts per hidden card: enough to move every card a few times
UNUSED = -1  # the place of the undealt cards among the seats


def scramble(state: SkullKingState, viewer: Seat | None, rng: random.Random) -> SkullKingState:
    """``state`` with what ``viewer`` (``None``: a spectator) may not see drawn again at random."""
    others = [seat for seat in range(len(state.hands)) if seat != viewer]
    cards = [card for seat in others for card in state.hands[seat]] + list(state.unused)
    owners = [seat for seat in others for _ in state.hands[seat]] + [UNUSED] * len(state.unused)
    voids = {seat: suits for seat, suits in _voids(state).items() if seat in others}
    if not voids:
        rng.shuffle(cards)
    elif len(cards) > 1:
        for _ in range(SWAPS_PER_CARD * len(cards)):
            one, other = rng.randrange(len(cards)), rng.randrange(len(cards))
            if _fits(cards[one], owners[other], voids) and _fits(cards[other], owners[one], voids):
                cards[one], cards[other] = cards[other], cards[one]
    hands = list(state.hands)
    for seat in others:
        size = len(hands[seat])
        hands[seat], cards = tuple(cards[:size]), cards[size:]
    bids = state.bids
    if not state.bids_revealed:
        bids = tuple(
            bid if seat == viewer or bid is None else rng.randrange(state.round + 1)
            for seat, bid in enumerate(state.bids)
        )
    return replace(state, hands=tuple(hands), unused=tuple(cards), bids=bids)


def _fits(card: str, place: int, voids: dict[int, set[Suit]]) -> bool:
    """Whether ``card`` may lie at ``place`` (a seat, or ``UNUSED``): not in a seat lacking its suit."""
    return place not in voids or suit_of(card) not in voids[place]


def _voids(state: SkullKingState) -> dict[int, set[Suit]]:
    """The suits each seat showed it lacks this round: a numbered card of another suit than the one
    led, played to one of the round's tricks."""
    voids: dict[int, set[Suit]] = {}
    tricks: list[tuple[Play, ...]] = [trick.plays for trick in state.taken] + [state.trick]
    for plays in tricks:
        for number, play in enumerate(plays):
            led = lead_suit(plays[:number], state.options)
            suit = suit_of(play.card)
            if led is not None and suit is not None and suit != led:
                voids.setdefault(play.seat, set()).add(led)
    return voids
