"""The whole truth of a Skull game, hidden parts included, as frozen msgspec Structs.

Discs are their kinds (``"flower"``, ``"skull"``, ``"last_chance"``): discs of one kind are
interchangeable, so a hand is a tuple kept in canonical order and a stack lists its discs from the
bottom up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

import msgspec

from domain.skull.commands import Disc
from domain.skull.events import Outcome
from domain.skull.options import SkullOptions

Phase = Literal[
    "waiting",  # seats still open
    "placement",  # every seat with discs puts its opening disc down, simultaneously
    "turns",  # clockwise: place another disc or open the auction
    "auction",  # clockwise: raise or pass
    "reveal",  # the challenger turns opponents' discs
    "discard_pick",  # the skull's owner draws one of the challenger's shuffled discs
    "discard_own",  # the challenger chooses which of his discs he loses
    "choose_first_player",  # the challenger eliminated by his own skull names the next first player
    "between_rounds",  # only inside a batch: the round ended, the next one starts in the same batch
    "finished",
]

DISC_ORDER: tuple[Disc, ...] = ("flower", "skull", "last_chance")
STARTING_DISCS: tuple[Disc, ...] = ("flower", "flower", "flower", "skull")
WINNING_POINTS = 2


def canonical(discs: Iterable[Disc]) -> tuple[Disc, ...]:
    """Discs sorted flowers first, then skulls, then the Last chance disc."""
    given = tuple(discs)
    return tuple(kind for kind in DISC_ORDER for _ in range(given.count(kind)))


def without(discs: tuple[Disc, ...], disc: Disc) -> tuple[Disc, ...]:
    """``discs`` with one disc of kind ``disc`` removed (the first one, preserving order)."""
    index = discs.index(disc)
    return discs[:index] + discs[index + 1 :]


class SeatState(msgspec.Struct, frozen=True, kw_only=True):
    """One seat: its hand, its stack (bottom first), how many stack discs are face up, its losses."""

    hand: tuple[Disc, ...] = STARTING_DISCS
    stack: tuple[Disc, ...] = ()
    turned: int = 0  # the top ``turned`` discs of ``stack`` are face up
    lost: tuple[Disc, ...] = ()
    points: int = 0
    eliminated: bool = False
    passed: bool = False

    @property
    def owned(self) -> tuple[Disc, ...]:
        """Every disc this seat still owns, wherever it lies, without the borrowed Last chance disc."""
        return canonical(d for d in (*self.hand, *self.stack) if d != "last_chance")

    @property
    def face_down(self) -> int:
        """How many discs of the stack can still be turned."""
        return len(self.stack) - self.turned

    def next_face_down(self) -> Disc:
        """The top-most face-down disc of the stack: the only one that may be turned next."""
        return self.stack[self.face_down - 1]


class Flipped(msgspec.Struct, frozen=True):
    """One disc turned during the reveal: whose stack, and what it was."""

    seat: int
    disc: Disc


class RoundRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One scoreboard row: who challenged for how much, how it went, everyone's points after."""

    round: int
    challenger: int
    bid: int
    outcome: Outcome
    points: tuple[int, ...]


class SkullState(msgspec.Struct, frozen=True, kw_only=True):
    """The game between events. ``turn`` is the seat awaited in the turns and auction phases."""

    options: SkullOptions
    seats: tuple[SeatState, ...]
    phase: Phase = "waiting"
    round: int = 0
    rounds_completed: int = 0
    first_player: int | None = None
    turn: int | None = None
    bid: int = 0
    bidder: int | None = None
    challenger: int | None = None
    flips: tuple[Flipped, ...] = ()
    skull_owner: int | None = None
    discard_order: tuple[Disc, ...] | None = None
    chooser: int | None = None
    last_chance_holder: int | None = None
    last_chance_given: tuple[int, ...] = ()
    history: tuple[RoundRecord, ...] = ()
    blind_draw_rounds: tuple[int, ...] = ()  # rounds whose seed would expose a lost disc

    @property
    def players(self) -> int:
        return len(self.seats)

    def active(self) -> list[int]:
        """Seats still in the game."""
        return [s for s, seat in enumerate(self.seats) if not seat.eliminated]

    def on_mats(self) -> int:
        """D: every disc on every mat, the ceiling of any bid."""
        return sum(len(seat.stack) for seat in self.seats)

    def next_seat(self, seat: int, eligible: Callable[[int], bool]) -> int:
        """The first seat clockwise after ``seat`` that is ``eligible`` (``seat`` itself if none is)."""
        for step in range(1, self.players + 1):
            candidate = (seat + step) % self.players
            if eligible(candidate):
                return candidate
        return seat

    def next_active(self, seat: int) -> int:
        return self.next_seat(seat, lambda s: not self.seats[s].eliminated)

    def next_bidder(self, seat: int) -> int:
        """The next seat clockwise still in the auction."""
        return self.next_seat(seat, lambda s: not self.seats[s].eliminated and not self.seats[s].passed)

    def in_auction(self) -> list[int]:
        return [s for s in self.active() if not self.seats[s].passed]

    def game_over(self) -> bool:
        """Two points, or only one seat left with discs."""
        return any(seat.points >= WINNING_POINTS for seat in self.seats) or len(self.active()) <= 1

    def winners(self) -> list[int]:
        if not self.game_over():
            return []
        scorers = [s for s, seat in enumerate(self.seats) if seat.points >= WINNING_POINTS]
        return scorers or self.active()
