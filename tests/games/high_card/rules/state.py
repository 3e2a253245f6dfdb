"""High Card's state: the whole truth, hidden hands and set-aside cards included."""

from __future__ import annotations

import msgspec

from tests.games.high_card.rules.options import HighCardOptions

DECK = tuple(range(1, 25))
HAND = 3


class HighCardState(msgspec.Struct, frozen=True, kw_only=True):
    options: HighCardOptions
    players: int
    round: int = 0
    phase: str = "waiting"  # "playing", then "finished"
    hands: tuple[tuple[int, ...], ...] = ()
    set_aside: tuple[int, ...] = ()
    leader: int = 0
    trick: tuple[tuple[int, int], ...] = ()  # (seat, card) in playing order
    taken: tuple[int, ...] = ()  # tricks taken this round, per seat
    totals: tuple[int, ...] = ()
    scored: int = 0  # rounds completed
    history: tuple[tuple[int, ...], ...] = ()  # each scored round's points, per seat

    def turn(self) -> int | None:
        if self.phase != "playing" or len(self.trick) == self.players:
            return None  # between the last card of a trick and its taking nobody is awaited
        return (self.leader + len(self.trick)) % self.players
