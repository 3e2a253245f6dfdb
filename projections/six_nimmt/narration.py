"""6 nimmt! in words: one sentence per event (``SENTENCES``) and each command as the predicate of the
event it makes (``describe_command``), from the ``log.six-nimmt.*`` entries of the game's glossary
(``glossary/<lang>.json`` beside this module). ``projections.narration`` finds it through the registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from domain.six_nimmt.cards import HAND_SIZE
from projections.say import Say, Sentence


def _cards(cards: Sequence[Any]) -> str:
    return ", ".join(str(card) for card in cards)


def _cards_dealt(say: Say, e: Mapping[str, Any]) -> str:
    cards = say.count("card", HAND_SIZE)
    return say("six-nimmt.cards_dealt", round=e["round"], cards=cards, rows=_cards(e["rows"]))


def _draft_opened(say: Say, e: Mapping[str, Any]) -> str:
    cards = say.count("card", len(e["cards"]))
    return say("six-nimmt.draft_opened", round=e["round"], cards=cards, name=say.name(e["first_drafter"]))


def _card_selected(say: Say, e: Mapping[str, Any]) -> str:
    card = e.get("card")
    if card is None:
        return say.actor(e["seat"], say("six-nimmt.card_selected.hidden"))
    return say.actor(e["seat"], say("six-nimmt.card_selected", card=card))


def _row_taken(say: Say, e: Mapping[str, Any]) -> str:
    chosen = bool(e.get("chosen"))
    key = "six-nimmt.row_taken.chosen" if chosen else "six-nimmt.row_taken"
    predicate = say(key, row=e["row"] + 1, card=e["card"], bullheads=say.count("bullhead", e["bullheads"]))
    return say.actor(e["seat"], predicate, acting=chosen)


def _round_scored(say: Say, e: Mapping[str, Any]) -> str:
    scores = ", ".join(
        f"{say.name(seat)} +{penalty} ({total})"
        for seat, (penalty, total) in enumerate(zip(e["penalties"], e["totals"], strict=False))
    )
    key = "six-nimmt.round_scored.final" if e.get("final") else "six-nimmt.round_scored"
    return say(key, round=e["round"], scores=scores)


SENTENCES: dict[str, Sentence] = {
    "cards_dealt": _cards_dealt,
    "draft_opened": _draft_opened,
    "card_drafted": lambda say, e: say.actor(e["seat"], say("six-nimmt.card_drafted", card=e["card"])),
    "draft_completed": lambda say, e: say("six-nimmt.draft_completed", rows=_cards(e["rows"])),
    "card_selected": _card_selected,
    "cards_revealed": lambda say, e: say(
        "six-nimmt.cards_revealed", turn=e["turn"], cards=say.by_seat(e["cards"])
    ),
    "card_placed": lambda say, e: say.actor(
        e["seat"], say("six-nimmt.card_placed", card=e["card"], row=e["row"] + 1), acting=False
    ),
    "row_choice_awaited": lambda say, e: say(
        "six-nimmt.row_choice_awaited", card=e["card"], name=say.name(e["seat"])
    ),
    "row_taken": _row_taken,
    "round_scored": _round_scored,
}


def describe_command(say: Say, command: Mapping[str, Any]) -> str | None:
    """A 6 nimmt! command as the predicate of the event it makes ("chooses 55"); ``None``: not one."""
    kind = command.get("type")
    if kind == "select_card":
        return say("six-nimmt.card_selected", card=command.get("card"))
    if kind == "draft_card":
        return say("six-nimmt.card_drafted", card=command.get("card"))
    if kind == "choose_row":
        return say("six-nimmt.row_chosen", row=int(command.get("row", 0)) + 1)
    return None
