"""High Card's one command: play a card from your hand."""

from __future__ import annotations

from domain.kernel import Command


class PlayCard(Command, frozen=True, tag="play_card"):
    card: int


HighCardCommand = PlayCard
