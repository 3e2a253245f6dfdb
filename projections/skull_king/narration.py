"""Skull King in words: one sentence per event (``SENTENCES``) and each command as the predicate of
the event it makes (``describe_command``), from the ``log.skull-king.*`` entries of the game's
glossary (``glossary/<lang>.json`` beside this module). ``projections.narration`` finds it through
the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from domain.skull_king.cards import CARDS
from projections.say import Say, Sentence


def _signed(value: Any) -> str:
    return f"{value:+d}" if isinstance(value, int) else str(value)


def _card(say: Say, card: Any) -> str:
    info = CARDS.get(card) if isinstance(card, str) else None
    if info is None:
        return str(card)
    if info.kind == "number":
        return say("skull-king.card.number", suit=say(f"skull-king.suit.{info.suit}"), rank=info.rank)
    return say(f"skull-king.card.{info.kind}")


def _played(say: Say, card: Any, declared: Any) -> str:
    """The predicate of playing ``card`` (Scary Mary ``declared`` as a Pirate or an Escape)."""
    if declared is None:
        return say("skull-king.card_played", card=_card(say, card))
    return say("skull-king.card_played.as", card=_card(say, card), declared=say(f"skull-king.as.{declared}"))


def _cards_dealt(say: Say, e: Mapping[str, Any]) -> str:
    shown = [hand for hand in e.get("hands") or () if hand is not None]
    count = len(shown[0]) if shown else e["round"]
    return say(
        "skull-king.cards_dealt",
        round=e["round"],
        dealer=say.name(e["dealer"]),
        leader=say.name(e["leader"]),
        cards=say.count("card", count),
    )


def _bid_placed(say: Say, e: Mapping[str, Any]) -> str:
    tricks = e.get("tricks")
    if tricks is None:
        return say.actor(e["seat"], say("skull-king.bid_placed.hidden"))
    return say.actor(e["seat"], say("skull-king.bid_placed", tricks=say.count("trick", tricks)))


def _trick_won(say: Say, e: Mapping[str, Any]) -> str:
    bonus = e.get("bonus") or 0
    key = "skull-king.trick_won.bonus" if bonus else "skull-king.trick_won"
    predicate = say(key, trick=e["trick"], card=_card(say, e["card"]), bonus=bonus)
    return say.actor(e["winner"], predicate, acting=False)


def _round_scored(say: Say, e: Mapping[str, Any]) -> str:
    scores = ", ".join(
        f"{say.name(seat)} {_signed(score)} ({total})"
        for seat, (score, total) in enumerate(zip(e["scores"], e["totals"], strict=False))
    )
    return say("skull-king.round_scored", round=e["round"], scores=scores)


SENTENCES: dict[str, Sentence] = {
    "first_dealer_chosen": lambda say, e: say("skull-king.first_dealer_chosen", name=say.name(e["seat"])),
    "cards_dealt": _cards_dealt,
    "bid_placed": _bid_placed,
    "bids_revealed": lambda say, e: say("skull-king.bids_revealed", bids=say.by_seat(e["bids"])),
    "card_played": lambda say, e: say.actor(e["seat"], _played(say, e["card"], e.get("as"))),
    "trick_won": _trick_won,
    "round_scored": _round_scored,
}


def describe_command(say: Say, command: Mapping[str, Any]) -> str | None:
    """A Skull King command as the predicate of the event it makes ("bids 2 tricks"); ``None``: not one."""
    kind = command.get("type")
    if kind == "bid":
        return say("skull-king.bid_placed", tricks=say.count("trick", command.get("tricks", 0)))
    if kind == "play_card":
        return _played(say, command.get("card"), command.get("as"))
    return None
