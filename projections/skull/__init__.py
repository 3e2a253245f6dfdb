"""What one seat (or a spectator) may see of a Skull game, as JSON builtins.

The generic envelope (game, phase, players, to_act, legal, scores, ...) is built around these
fields by ``projections.views``; here are only Skull's own. A viewer sees the public facts (stack
sizes, disc counts, bids, passes, turned discs, points, eliminations, the visibly distinct Last
chance disc) and, for its own seat only, its hand, its stack and what it lost. Nothing here may
depend on another seat's face-down discs, hand or losses: the view tests check exactly that.
"""

from __future__ import annotations

from typing import Any

from domain.skull.state import DISC_ORDER, SeatState, SkullState


def view(state: SkullState, viewer: int | None) -> dict[str, Any]:
    """Skull's fields of ``viewer``'s view (``None``: a spectator): ``public`` and ``own``."""
    return {**public(state), **own(state, viewer)}


def public(state: SkullState) -> dict[str, Any]:
    """The fields every viewer sees alike (no viewer: nothing hidden can depend on one)."""
    return {
        "round": state.round,
        "rounds_completed": state.rounds_completed,
        "first_player": state.first_player,
        "turn": state.turn if state.phase in ("turns", "auction") else None,
        "discs_on_mats": state.on_mats(),
        "disc_counts": [len(seat.owned) for seat in state.seats],
        "hand_sizes": [len(seat.hand) for seat in state.seats],
        "bid": state.bid if state.bidder is not None else None,
        "bidder": state.bidder,
        "passed": [s for s, seat in enumerate(state.seats) if seat.passed],
        "challenger": state.challenger,
        "flips": [{"seat": f.seat, "disc": f.disc} for f in state.flips],
        "flips_left": state.bid - len(state.flips) if state.phase == "reveal" else None,
        "discard": _discard(state),
        "chooser": state.chooser,
        "points": [seat.points for seat in state.seats],
        "eliminated": [s for s, seat in enumerate(state.seats) if seat.eliminated],
        "last_chance_holder": state.last_chance_holder,
        "last_chance_used": list(state.last_chance_given),
    }


def own(state: SkullState, viewer: int | None) -> dict[str, Any]:
    """The fields that depend on the viewer: the stacks (its own face down discs), its hand, its
    stack and what it lost."""
    me = viewer if viewer is not None and 0 <= viewer < state.players else None
    mine = state.seats[me] if me is not None else None
    return {
        "stacks": [_stack(seat, s, s == me) for s, seat in enumerate(state.seats)],
        "hand": _composition(mine.hand) if mine else None,
        "own_stack": list(mine.stack) if mine else None,
        "lost": list(mine.lost) if mine else None,
    }


def player_public(state: SkullState, seat: int) -> dict[str, Any]:
    """The public counters of one seat, merged into the envelope's players list."""
    mine = state.seats[seat]
    return {
        "discs": len(mine.owned),
        "hand": len(mine.hand),
        "stack": len(mine.stack),
        "points": mine.points,
        "eliminated": mine.eliminated,
        "passed": mine.passed,
        "last_chance": state.last_chance_holder == seat,
    }


def scoreboard(state: SkullState) -> dict[str, Any]:
    """One row per finished round (challenger, bid, outcome, every seat's points after) and totals."""
    rounds = [
        {
            "round": r.round,
            "challenger": r.challenger,
            "bid": r.bid,
            "outcome": r.outcome,
            "points": list(r.points),
        }
        for r in state.history
    ]
    return {"rounds": rounds, "totals": [seat.points for seat in state.seats]}


def _stack(seat: SeatState, number: int, mine: bool) -> dict[str, Any]:
    """A stack bottom first: each disc's kind where the viewer may know it, else ``None``.

    Everyone knows the turned discs and where the Last chance disc lies; only the owner the rest.
    """
    face_down = seat.face_down
    discs = [
        disc if mine or index >= face_down or disc == "last_chance" else None
        for index, disc in enumerate(seat.stack)
    ]
    return {"seat": number, "size": len(seat.stack), "turned": seat.turned, "discs": discs}


def _composition(hand: tuple[str, ...]) -> dict[str, int]:
    return {kind: hand.count(kind) for kind in DISC_ORDER}


def _discard(state: SkullState) -> dict[str, Any] | None:
    """The pending loss: who loses, who decides, and (for the blind draw) how many positions."""
    if state.phase == "discard_pick" and state.discard_order is not None:
        return {
            "seat": state.challenger,
            "picker": state.skull_owner,
            "positions": len(state.discard_order),
            "blind": True,
        }
    if state.phase == "discard_own":
        return {"seat": state.challenger, "picker": state.challenger, "positions": None, "blind": False}
    return None
