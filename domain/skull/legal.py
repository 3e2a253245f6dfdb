"""Who is awaited, and every command a seat may send now, fully spelled out.

The property tests hold the rules to this list both ways: each command here is accepted, and any
command not here is rejected.
"""

from __future__ import annotations

from domain.fairness import Chance
from domain.kernel import Seat
from domain.skull.commands import (
    Bid,
    ChooseFirstPlayer,
    DiscardOwn,
    DiscardPick,
    Flip,
    Pass,
    PlaceDisc,
    SkullCommand,
)
from domain.skull.state import DISC_ORDER, SkullState


def to_act(state: SkullState) -> list[Seat]:
    """Seats whose command is awaited: during the opening placement, every seat yet to place."""
    phase = state.phase
    if phase == "placement":
        return [s for s in state.active() if not state.seats[s].stack]
    if phase in ("turns", "auction"):
        awaited = state.turn
    elif phase in ("reveal", "discard_own"):
        awaited = state.challenger
    elif phase == "discard_pick":
        # inside the failing batch (time travel) the shuffle may not be recorded yet: nobody acts
        awaited = state.skull_owner if state.discard_order is not None else None
    elif phase == "choose_first_player":
        awaited = state.chooser
    else:
        awaited = None
    return [] if awaited is None else [awaited]


def legal_commands(state: SkullState, seat: Seat) -> list[SkullCommand]:
    if seat not in to_act(state):
        return []
    mine = state.seats[seat]
    phase = state.phase
    if phase == "placement":
        return _placements(mine.hand)
    if phase == "turns":
        return [*_placements(mine.hand), *_bids(state)]
    if phase == "auction":
        return [*_bids(state), Pass()]
    if phase == "reveal":
        return [Flip(seat=s) for s, other in enumerate(state.seats) if s != seat and other.face_down]
    if phase == "discard_pick":
        assert state.discard_order is not None, "a blind draw follows a shuffle"
        return [DiscardPick(position=p) for p in range(len(state.discard_order))]
    if phase == "discard_own":
        return [DiscardOwn(disc=d) for d in DISC_ORDER if d in mine.owned]
    if phase == "choose_first_player":
        return [ChooseFirstPlayer(seat=s) for s in state.active()]
    return []


def _placements(hand: tuple[str, ...]) -> list[SkullCommand]:
    return [PlaceDisc(disc=d) for d in DISC_ORDER if d in hand]


def _bids(state: SkullState) -> list[SkullCommand]:
    return [Bid(count=c) for c in range(state.bid + 1, state.on_mats() + 1)]


TIMEOUT_DISCARD_LABEL = "timeout-discard"


def default_command(state: SkullState, seat: Seat, chance: Chance) -> SkullCommand | None:
    """On timeout: the challenger stopped by his own skull loses a disc drawn at random,
    ``owned[uniform(round, "timeout-discard", len(owned))]`` over his discs in canonical order
    (flowers first, then skulls); the eliminated challenger names his left neighbour, the next seat
    clockwise still in the game. Anything else has no default (the bot's move)."""
    if seat not in to_act(state):
        return None
    if state.phase == "discard_own":
        owned = state.seats[seat].owned
        return DiscardOwn(disc=owned[chance.uniform(state.round, TIMEOUT_DISCARD_LABEL, len(owned))])
    if state.phase == "choose_first_player":
        return ChooseFirstPlayer(seat=state.next_active(seat))
    return None
