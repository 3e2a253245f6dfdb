"""The whole truth of a Skull King game, hidden parts included: frozen Structs and tuples only."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.skull_king.cards import Declaration
from domain.skull_king.events import RoundScored
from domain.skull_king.options import SkullKingOptions

Phase = Literal["waiting", "bidding", "playing", "scoring", "finished"]


class Play(msgspec.Struct, frozen=True):
    """One card in a trick, in play order; ``as_`` is Scary Mary's declaration."""

    seat: int
    card: str
    as_: Declaration | None = msgspec.field(default=None, name="as")


class TakenTrick(msgspec.Struct, frozen=True):
    """A completed trick of the current round, kept so that every card stays accounted for."""

    leader: int
    plays: tuple[Play, ...]
    winner: int
    bonus: int


class SkullKingState(msgspec.Struct, frozen=True, kw_only=True):
    """Everything about one game.

    ``round`` is 0 before the first deal. ``leader`` leads the trick in progress, so the seat to
    play is ``(leader + len(trick)) % players``. ``bids`` holds ``None`` for seats yet to bid; the
    bids become public once ``bids_revealed`` is true. ``taken`` and ``unused`` are the current
    round's completed tricks and undealt cards: with ``hands`` and ``trick`` they hold all 66 cards.
    """

    options: SkullKingOptions
    players: int
    phase: Phase = "waiting"
    round: int = 0
    dealer: int = 0
    leader: int = 0
    hands: tuple[tuple[str, ...], ...] = ()
    unused: tuple[str, ...] = ()
    bids: tuple[int | None, ...] = ()
    bids_revealed: bool = False
    trick: tuple[Play, ...] = ()
    taken: tuple[TakenTrick, ...] = ()
    won: tuple[int, ...] = ()
    bonuses: tuple[int, ...] = ()
    history: tuple[RoundScored, ...] = ()  # the score pad, one line per finished round
    totals: tuple[int, ...] = ()

    def turn(self) -> int | None:
        """The seat whose card is awaited, or ``None`` outside the playing phase."""
        if self.phase != "playing":
            return None
        return (self.leader + len(self.trick)) % self.players
