"""Skull commands, tagged with their wire ``type`` from docs/api.md "Commands".

The msgspec constraints catch what is wrong whatever the state (a negative seat, a bid of 0); the
rules still check every value, because a command built in Python is never validated by msgspec.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from domain.kernel import Command

Disc = Literal["flower", "skull", "last_chance"]
SeatNumber = Annotated[int, Meta(ge=0)]


class PlaceDisc(Command, tag="place_disc", frozen=True, kw_only=True):
    """Put one disc from hand face down on top of one's own stack."""

    disc: Disc


class Bid(Command, tag="bid", frozen=True, kw_only=True):
    """Open the auction, or raise it, to ``count`` discs to turn without meeting a skull."""

    count: Annotated[int, Meta(ge=1)]


class Pass(Command, tag="pass", frozen=True, kw_only=True):
    """Leave the auction for the rest of the round."""


class Flip(Command, tag="flip", frozen=True, kw_only=True):
    """The challenger turns the top-most face-down disc of an opponent's stack."""

    seat: SeatNumber


class DiscardPick(Command, tag="discard_pick", frozen=True, kw_only=True):
    """The skull's owner draws the disc at ``position`` (0-based) of the challenger's shuffled discs."""

    position: Annotated[int, Meta(ge=0)]


class DiscardOwn(Command, tag="discard_own", frozen=True, kw_only=True):
    """The challenger, stopped by his own skull, secretly chooses which disc he loses."""

    disc: Disc


class ChooseFirstPlayer(Command, tag="choose_first_player", frozen=True, kw_only=True):
    """The challenger eliminated by his own skull names the next round's first player."""

    seat: SeatNumber


SkullCommand = PlaceDisc | Bid | Pass | Flip | DiscardPick | DiscardOwn | ChooseFirstPlayer
