"""Skull King read models: a seat's view, the public counters per player, the score pad.

Pure functions of the full game state that hand each seat only what it may know: its own hand and
its own bid; other bids only once ``bids_revealed``; never another seat's cards before they are
played. The generic envelope (game, status, phase, legal, scores, ...) is built in
``projections.views`` from the Rules; nothing here repeats it.
"""

from __future__ import annotations

from typing import Any

from domain.skull_king.cards import DECK
from domain.skull_king.options import ROUNDS
from domain.skull_king.state import Play, SkullKingState, TakenTrick
from domain.skull_king.tricks import lead_suit, playable

_ORDER = {card: i for i, card in enumerate(DECK)}


def _sorted(cards: tuple[str, ...]) -> list[str]:
    """Hands are shown in canonical deck order (suits, then specials), not in dealing order."""
    return sorted(cards, key=_ORDER.__getitem__)


def _play(play: Play) -> dict[str, Any]:
    return {"seat": play.seat, "card": play.card, "as": play.as_}


def _trick(trick: TakenTrick) -> dict[str, Any]:
    return {
        "leader": trick.leader,
        "plays": [_play(play) for play in trick.plays],
        "winner": trick.winner,
        "bonus": trick.bonus,
    }


def _bid_of(state: SkullKingState, seat: int) -> int | None:
    return state.bids[seat] if seat < len(state.bids) else None


def _public_bid(state: SkullKingState, seat: int) -> int | None:
    """A bid is public only once every bid is in; before that it is ``None`` for everyone."""
    return _bid_of(state, seat) if state.bids_revealed else None


def _has_bid(state: SkullKingState, seat: int) -> bool:
    return _bid_of(state, seat) is not None


def _hand_size(state: SkullKingState, seat: int) -> int:
    return len(state.hands[seat]) if seat < len(state.hands) else 0


def _tricks_won(state: SkullKingState, seat: int) -> int:
    return state.won[seat] if seat < len(state.won) else 0


def _own(state: SkullKingState, viewer: int | None) -> dict[str, Any]:
    """The viewer's private part: hand, own bid, and the cards it may play now (on its turn)."""
    if viewer is None or viewer >= len(state.hands):
        return {"hand": None, "own_bid": None, "playable": []}
    hand = state.hands[viewer]
    on_turn = state.turn() == viewer
    return {
        "hand": _sorted(hand),
        "own_bid": _bid_of(state, viewer),
        "playable": _sorted(playable(hand, state.trick, state.options)) if on_turn else [],
    }


def view(state: SkullKingState, viewer: int | None) -> dict[str, Any]:
    """What ``viewer`` (``None``: a spectator) sees of the game, beyond the generic envelope:
    ``public`` and ``own``."""
    return {**public(state), **own(state, viewer)}


def public(state: SkullKingState) -> dict[str, Any]:
    """The fields every viewer sees alike."""
    seats = range(state.players)
    suit = lead_suit(state.trick, state.options)
    return {
        "round": state.round,
        "rounds": ROUNDS,
        "dealer": state.dealer,
        "leader": state.leader,
        "turn": state.turn(),
        "trick": [_play(play) for play in state.trick],
        "lead_suit": suit,
        "completed_tricks": [_trick(trick) for trick in state.taken],
        "has_bid": [_has_bid(state, seat) for seat in seats],
        "bids": [_public_bid(state, seat) for seat in seats] if state.bids_revealed else None,
        "tricks_won": [_tricks_won(state, seat) for seat in seats],
        "hand_sizes": [_hand_size(state, seat) for seat in seats],
    }


def own(state: SkullKingState, viewer: int | None) -> dict[str, Any]:
    """The viewer's private part: hand, own bid, and the cards it may play now (on its turn)."""
    return _own(state, viewer)


def player_public(state: SkullKingState, seat: int) -> dict[str, Any]:
    """The counters anyone may see next to a player's name."""
    return {
        "bid": _public_bid(state, seat),
        "has_bid": _has_bid(state, seat),
        "tricks_won": _tricks_won(state, seat),
        "score": state.totals[seat] if seat < len(state.totals) else 0,
        "hand_size": _hand_size(state, seat),
    }


def scoreboard(state: SkullKingState) -> dict[str, Any]:
    """The score pad: per round and seat the bid, tricks, bonus, round score and running total."""
    rounds = [
        {
            "round": line.round,
            "seats": [
                {
                    "seat": seat,
                    "bid": line.bids[seat],
                    "tricks": line.tricks[seat],
                    "bonus": line.bonuses[seat],
                    "score": line.scores[seat],
                    "total": line.totals[seat],
                }
                for seat in range(state.players)
            ],
        }
        for line in state.history
    ]
    return {"rounds": rounds, "totals": list(state.totals)}
