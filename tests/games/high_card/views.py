"""High Card's read models: a seat sees its own hand; the other hands and the set-aside cards never."""

from __future__ import annotations

from typing import Any

from tests.games.high_card.rules.state import HighCardState


def public(state: HighCardState) -> dict[str, Any]:
    """The fields every viewer sees alike."""
    return {
        "round": state.round,
        "rounds": state.options.rounds,
        "leader": state.leader,
        "turn": state.turn(),
        "trick": [{"seat": seat, "card": card} for seat, card in state.trick],
        "taken": list(state.taken),
        "hand_sizes": [len(hand) for hand in state.hands],
    }


def own(state: HighCardState, viewer: int | None) -> dict[str, Any]:
    """The viewer's hand (``None`` for a spectator or before the deal)."""
    if viewer is None or viewer >= len(state.hands):
        return {"hand": None}
    return {"hand": list(state.hands[viewer])}


def view(state: HighCardState, viewer: int | None) -> dict[str, Any]:
    return {**public(state), **own(state, viewer)}


def player_public(state: HighCardState, seat: int) -> dict[str, Any]:
    return {
        "taken": state.taken[seat] if seat < len(state.taken) else 0,
        "hand_size": len(state.hands[seat]) if seat < len(state.hands) else 0,
        "score": state.totals[seat] if seat < len(state.totals) else 0,
    }


def scoreboard(state: HighCardState) -> dict[str, Any]:
    """The score pad: each scored round's points per seat, and the totals."""
    return {"rounds": [list(points) for points in state.history], "totals": list(state.totals)}
