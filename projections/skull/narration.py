"""Skull in words: one sentence per event (``SENTENCES``) and each command as the predicate of the
event it makes (``describe_command``), from the ``log.skull.*`` entries of the game's glossary
(``glossary/<lang>.json`` beside this module). ``projections.narration`` finds it through the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from projections.say import Say, Sentence


def _disc(say: Say, disc: Any) -> str:
    return say(f"skull.disc.{disc}")


def _round_started(say: Say, e: Mapping[str, Any]) -> str:
    reason = say(f"skull.first.{e['reason']}")
    return say("skull.round_started", round=e["round"], name=say.name(e["first_player"]), reason=reason)


def _disc_placed(say: Say, e: Mapping[str, Any]) -> str:
    disc = e.get("disc")
    if disc is None:
        return say.actor(e["seat"], say("skull.disc_placed.hidden"))
    return say.actor(e["seat"], say("skull.disc_placed", disc=_disc(say, disc)))


def _disc_flipped(say: Say, e: Mapping[str, Any]) -> str:
    key = "skull.disc_flipped.automatic" if e.get("automatic") else "skull.disc_flipped"
    sentence = say(key, name=say.name(e["seat"]), disc=_disc(say, e["disc"]))
    return sentence + say("bang") if e["disc"] == "skull" else sentence


def _challenge_failed(say: Say, e: Mapping[str, Any]) -> str:
    seat, owner = e["seat"], e["skull_owner"]
    if seat == owner:
        return say.actor(seat, say("skull.challenge_failed.own"), acting=False)
    return say.actor(seat, say("skull.challenge_failed", owner=say.name(owner)), acting=False)


def _disc_lost(say: Say, e: Mapping[str, Any]) -> str:
    how = say(f"skull.lost.{e['reason']}")
    disc = e.get("disc")
    if disc is None:
        predicate = say("skull.disc_lost.hidden", how=how)
    else:
        predicate = say("skull.disc_lost", disc=_disc(say, disc), how=how)
    return say.actor(e["seat"], predicate, acting=e["reason"] == "chosen")


def _round_ended(say: Say, e: Mapping[str, Any]) -> str:
    return say(
        "skull.round_ended",
        round=e["round"],
        challenger=say.name(e["challenger"]),
        bid=e["bid"],
        outcome=say(f"skull.outcome.{e['outcome']}"),
        points=say.by_seat(e["points"]),
    )


SENTENCES: dict[str, Sentence] = {
    "round_started": _round_started,
    "disc_placed": _disc_placed,
    "bid_made": lambda say, e: say.actor(e["seat"], say("skull.bid_made", count=e["count"])),
    "player_passed": lambda say, e: say.actor(e["seat"], say("skull.player_passed")),
    "challenge_started": lambda say, e: say(
        "skull.challenge_started", name=say.name(e["seat"]), flowers=say.count("flower", e["bid"])
    ),
    "disc_flipped": _disc_flipped,
    "challenge_succeeded": lambda say, e: say.actor(
        e["seat"],
        say("skull.challenge_succeeded", points=say.count("point", e["points"])),
        acting=False,
    ),
    "challenge_failed": _challenge_failed,
    "discs_shuffled": lambda say, e: say(
        "skull.discs_shuffled", name=say.name(e["seat"]), count=e["count"], picker=say.name(e["picker"])
    ),
    "disc_lost": _disc_lost,
    "player_eliminated": lambda say, e: say.actor(e["seat"], say("skull.player_eliminated"), acting=False),
    "round_ended": _round_ended,
    "last_chance_returned": lambda say, e: say.actor(
        e["seat"], say("skull.last_chance_returned"), acting=False
    ),
    "last_chance_given": lambda say, e: say.actor(e["seat"], say("skull.last_chance_given"), acting=False),
    "first_player_choice_requested": lambda say, e: say.actor(
        e["seat"], say("skull.first_player_choice_requested"), acting=False
    ),
}


def describe_command(say: Say, command: Mapping[str, Any]) -> str | None:
    """A Skull command as the predicate of the event it makes ("bids 3"); ``None``: not Skull's."""
    kind = command.get("type")
    if kind == "place_disc":
        return say("skull.disc_placed", disc=_disc(say, command.get("disc")))
    if kind == "bid":
        return say("skull.bid_made", count=command.get("count"))
    if kind == "pass":
        return say("skull.player_passed")
    if kind == "flip":
        return say("skull.stack_flipped", name=say.name(command.get("seat")))
    if kind == "discard_pick":
        return say("skull.disc_drawn", n=int(command.get("position", 0)) + 1)
    if kind == "discard_own":
        return say("skull.disc_given_up", disc=_disc(say, command.get("disc")))
    if kind == "choose_first_player":
        return say("skull.first_named", name=say.name(command.get("seat")))
    return None
