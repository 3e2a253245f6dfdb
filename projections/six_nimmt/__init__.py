"""What each seat may see of a 6 nimmt! game, and its score pad.

``view`` adds the game's own fields to the generic envelope of ``projections.views`` (which already
carries phase, to_act, legal, scores and winners, so none of those are repeated here). A seat sees
its own hand and face-down card; everyone sees the rows, who has selected, the revealed cards, the
penalty piles and totals, the awaited row choice and, in the tactical mode, the draft and every
hand. In the tactical mode a hand is public as the set of cards not yet revealed (the face-down
card included), because the draft showed where every card went but not which one lies face down.
"""

from __future__ import annotations

from typing import Any

from domain.six_nimmt.cards import bullheads, bullheads_of
from domain.six_nimmt.state import SixNimmtState


def _row(cards: tuple[int, ...]) -> dict[str, Any]:
    return {
        "cards": [{"card": card, "bullheads": bullheads(card)} for card in cards],
        "end": cards[-1] if cards else None,
        "bullheads": bullheads_of(cards),
    }


def _turn(state: SixNimmtState) -> int:
    """The turn being played: the next one while cards are selected, else the last revealed."""
    return state.turn + 1 if state.phase == "selecting" else state.turn


def _public_hands(state: SixNimmtState) -> list[list[int]] | None:
    if not state.options.tactical:
        return None
    return [
        sorted((*hand, *((selected,) if selected is not None else ())))
        for hand, selected in zip(state.hands, state.selected, strict=True)
    ]


def _draft(state: SixNimmtState) -> dict[str, Any] | None:
    if not state.options.tactical:
        return None
    return {"first_drafter": state.first_drafter, "drafter": state.drafter, "cards": list(state.pool)}


def _row_choice(state: SixNimmtState) -> dict[str, int] | None:
    if state.awaiting is None:
        return None
    return {"seat": state.awaiting, "card": state.pending[0]}


def current_penalties(state: SixNimmtState) -> list[int]:
    """Bullheads taken in the round in play, i.e. not yet on a scored line of the pad."""
    return [total - sum(line[seat] for line in state.history) for seat, total in enumerate(state.totals)]


def view(state: SixNimmtState, viewer: int | None) -> dict[str, Any]:
    """The game's fields as ``viewer`` (``None``: a spectator) may see them: ``public`` and ``own``."""
    return {**public(state), **own(state, viewer)}


def public(state: SixNimmtState) -> dict[str, Any]:
    """The fields every viewer sees alike."""
    return {
        "round": state.round,
        "turn": _turn(state),
        "tactical": state.options.tactical,
        "rows": [_row(cards) for cards in state.rows],
        "hands": _public_hands(state),
        "selected": [card is not None for card in state.selected],
        "revealed": list(state.revealed),
        "pending": [{"seat": state.owner_of_revealed(card), "card": card} for card in state.pending],
        "row_choice": _row_choice(state),
        "draft": _draft(state),
        "piles": [list(pile) for pile in state.piles],
        "penalties": current_penalties(state),
        "totals": list(state.totals),
    }


def own(state: SixNimmtState, viewer: int | None) -> dict[str, Any]:
    """The viewer's own hand and face-down selection (``None`` for a spectator)."""
    seated = viewer is not None and 0 <= viewer < state.players
    return {
        "hand": list(state.hands[viewer]) if seated and viewer is not None else None,
        "selection": state.selected[viewer] if seated and viewer is not None else None,
    }


def player_public(state: SixNimmtState, seat: int) -> dict[str, Any]:
    """A seat's public counters for the players list: penalty total, hand size, has selected."""
    return {
        "penalty": state.totals[seat],
        "hand_size": len(state.hands[seat]),
        "has_selected": state.selected[seat] is not None,
        "pile_size": len(state.piles[seat]),
    }


def scoreboard(state: SixNimmtState) -> dict[str, Any]:
    """The score pad: one line of bullheads per scored round, the round in play, the totals."""
    return {
        "rounds": [list(line) for line in state.history],
        "current": current_penalties(state),
        "totals": list(state.totals),
    }
