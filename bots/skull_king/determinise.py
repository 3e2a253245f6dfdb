"""Skull King's determinisation for the ``strong`` level: a whole ``SkullKingState`` from one seat's
view (``sample``), and the light view its ``normal`` policy reads in a rollout (``light_view``).

The view's hand, trick, taken tricks, bids, scores and options are copied as they are; the other
hands and the undealt cards are drawn among the cards the view has not shown, and a bid made but not
yet revealed is guessed with the ``normal`` policy's own bid for the sampled hand.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from bots.skull_king.heuristic import choose_bid
from domain.skull_king.cards import DECK
from domain.skull_king.options import SkullKingOptions
from domain.skull_king.state import Play, SkullKingState, TakenTrick

View = dict[str, Any]


def _play(play: dict[str, Any]) -> Play:
    return Play(seat=play["seat"], card=play["card"], as_=play.get("as"))


def sample(view: View, rng: random.Random) -> SkullKingState:
    """A whole state that shows ``view`` to its seat, its hidden parts drawn with ``rng``."""
    me: int = view["seat"]
    players = len(view["hand_sizes"])
    hand = tuple(view["hand"] or ())
    trick = tuple(_play(p) for p in view["trick"])
    taken = tuple(
        TakenTrick(
            leader=t["leader"],
            plays=tuple(_play(p) for p in t["plays"]),
            winner=t["winner"],
            bonus=t["bonus"],
        )
        for t in view["completed_tricks"]
    )
    seen = set(hand) | {p.card for p in trick} | {p.card for t in taken for p in t.plays}
    unseen = [card for card in DECK if card not in seen]
    rng.shuffle(unseen)
    hands: list[tuple[str, ...]] = []
    for seat, size in enumerate(view["hand_sizes"]):
        if seat == me:
            hands.append(hand)
        else:
            hands.append(tuple(unseen[:size]))
            del unseen[:size]
    if view["bids"] is not None:
        bids: tuple[int | None, ...] = tuple(view["bids"])
    else:
        legal_bids = [{"type": "bid", "tricks": n} for n in range(view["round"] + 1)]
        sampled: list[int | None] = []
        for seat in range(players):
            if seat == me:
                sampled.append(view["own_bid"])
            elif view["has_bid"][seat]:
                guess = {"hand": list(hands[seat]), "tricks_won": [0] * players}
                sampled.append(choose_bid(guess, legal_bids, rng)["tricks"])
            else:
                sampled.append(None)
        bids = tuple(sampled)
    bonuses = [0] * players
    for t in taken:
        bonuses[t.winner] += t.bonus
    return SkullKingState(
        options=msgspec.convert(view["options"], SkullKingOptions),
        players=players,
        phase=view["phase"],
        round=view["round"],
        dealer=view["dealer"],
        leader=view["leader"],
        hands=tuple(hands),
        unused=tuple(unseen),
        bids=bids,
        bids_revealed=view["bids"] is not None,
        trick=trick,
        taken=taken,
        won=tuple(view["tricks_won"]),
        bonuses=tuple(bonuses),
        totals=tuple(view["scores"]),
    )


def light_view(state: SkullKingState, seat: int) -> View:
    """What ``bots.skull_king.heuristic.choose`` reads of ``seat``'s view, built from ``state``."""
    return {
        "seat": seat,
        "hand": list(state.hands[seat]),
        "own_bid": state.bids[seat] if seat < len(state.bids) else None,
        "tricks_won": list(state.won),
        "trick": [{"seat": p.seat, "card": p.card, "as": p.as_} for p in state.trick],
    }
