"""Skull King commands, tagged with their wire ``type`` from docs/api.md "Commands"."""

from __future__ import annotations

import msgspec

from domain.kernel import Command
from domain.skull_king.cards import Declaration


class Bid(Command, frozen=True, tag="bid"):
    """Bid how many tricks one will take this round (hidden until every seat has bid)."""

    tricks: int


class PlayCard(Command, frozen=True, tag="play_card", omit_defaults=True):
    """Play a card to the trick; ``as`` declares Scary Mary and is refused for any other card.

    ``omit_defaults`` keeps ``as`` off the wire when absent, so a legal command for an ordinary card
    reads ``{"type": "play_card", "card": "red-7"}`` exactly as a client would write it.
    """

    card: str
    as_: Declaration | None = msgspec.field(default=None, name="as")


SkullKingCommand = Bid | PlayCard
