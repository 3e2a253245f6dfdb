"""A 6 nimmt! state as one viewer cannot tell it from the true one: everything hidden from it re-drawn.

What a viewer sees (``projections/six_nimmt.py``): the rows, the penalty piles, the revealed and
pending cards, the draft, every hand's size and who has selected; its own hand and face-down card;
in the tactical mode every hand as the set of its cards not yet revealed. So in the standard mode
the other seats' hands, their face-down cards and the unused rest of the deck are one pool, dealt
again at random into the same places (hands of the same sizes, sorted as dealt; the unused rest in a
new shuffled order). In the tactical mode only which card of its public set another seat put face
down is hidden: it is chosen again among that set.
"""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.kernel import Seat
from domain.six_nimmt.state import SixNimmtState


def scramble(state: SixNimmtState, viewer: Seat | None, rng: random.Random) -> SixNimmtState:
    """``state`` with what ``viewer`` (``None``: a spectator) may not see drawn again at random."""
    others = [seat for seat in range(len(state.hands)) if seat != viewer]
    hands = list(state.hands)
    selected = list(state.selected)
    if state.options.tactical:
        for seat in others:
            if selected[seat] is None:
                continue
            cards = [*hands[seat], selected[seat]]
            choice = cards.pop(rng.randrange(len(cards)))
            hands[seat], selected[seat] = tuple(sorted(cards)), choice
        return replace(state, hands=tuple(hands), selected=tuple(selected))
    face_down = [seat for seat in others if selected[seat] is not None]
    pool = [card for seat in others for card in hands[seat]]
    pool += [card for seat in face_down if (card := selected[seat]) is not None]
    pool += state.unused
    rng.shuffle(pool)
    for seat in others:
        size = len(hands[seat])
        hands[seat], pool = tuple(sorted(pool[:size])), pool[size:]
    for seat in face_down:
        selected[seat], pool = pool[0], pool[1:]
    return replace(state, hands=tuple(hands), selected=tuple(selected), unused=tuple(pool))
