"""High Card in words: a sentence per event and each command as a predicate (``log.high-card.*``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projections.say import Say, Sentence


def _dealt(say: Say, e: Mapping[str, Any]) -> str:
    return say("high-card.cards_dealt", round=e["round"], leader=say.name(e["leader"]))


def _scored(say: Say, e: Mapping[str, Any]) -> str:
    return say("high-card.round_scored", round=e["round"], totals=say.by_seat(e["totals"]))


SENTENCES: dict[str, Sentence] = {
    "cards_dealt": _dealt,
    "card_played": lambda say, e: say.actor(e["seat"], say("high-card.card_played", card=e["card"])),
    "trick_won": lambda say, e: say.actor(
        e["seat"], say("high-card.trick_won", card=e["card"]), acting=False
    ),
    "round_scored": _scored,
}


def describe_command(say: Say, command: Mapping[str, Any]) -> str | None:
    if command.get("type") == "play_card":
        return say("high-card.card_played", card=command.get("card"))
    return None
