"""A Skull state as one viewer cannot tell it from the true one: everything hidden from it re-drawn.

What a viewer sees of another seat (``projections/skull.py``): how many discs it holds in hand and
on its mat, which discs of its stack are face up, where the Last chance disc lies, and nothing of
the kinds of its face-down discs, of its hand or of what it lost. So each other seat's hidden discs
(its face-down stack discs, the discs in its hand and its lost discs, the Last chance disc aside) are
one pool of that seat's own starting discs, dealt again at random into the same places: the seat
keeps its composition, and every count the view shows stays as it is. The blind draw's shuffled
order (``discard_order``) is hidden from every seat, the challenger's own included: it is drawn
again as a shuffle of the challenger's (possibly re-drawn) discs.
"""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.kernel import Seat
from domain.skull.state import SeatState, SkullState, canonical

LAST_CHANCE = "last_chance"


def scramble(state: SkullState, viewer: Seat | None, rng: random.Random) -> SkullState:
    """``state`` with every other seat's hidden discs re-drawn among themselves, and the blind draw's
    order shuffled again; what ``viewer`` (``None``: a spectator) may see is kept exactly."""
    seats = tuple(seat if s == viewer else _redrawn(seat, rng) for s, seat in enumerate(state.seats))
    scrambled = replace(state, seats=seats)
    if state.discard_order is None or state.challenger is None:
        return scrambled
    order = list(seats[state.challenger].owned)
    rng.shuffle(order)
    return replace(scrambled, discard_order=tuple(order))


def _redrawn(seat: SeatState, rng: random.Random) -> SeatState:
    """One seat's face-down stack discs, hand and lost discs dealt again from their own pool."""
    face_down = [i for i in range(seat.face_down) if seat.stack[i] != LAST_CHANCE]
    hand = [disc for disc in seat.hand if disc != LAST_CHANCE]
    pool = [seat.stack[i] for i in face_down] + hand + list(seat.lost)
    rng.shuffle(pool)
    stack = list(seat.stack)
    for index, disc in zip(face_down, pool, strict=False):
        stack[index] = disc
    rest = pool[len(face_down) :]
    kept = [LAST_CHANCE] * seat.hand.count(LAST_CHANCE)
    return replace(
        seat,
        stack=tuple(stack),
        hand=canonical([*rest[: len(hand)], *kept]),
        lost=tuple(rest[len(hand) :]),
    )
