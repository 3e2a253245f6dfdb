"""High Card's bot: take the trick with the lowest card that wins it, else throw the lowest card;
and the strong level's hooks (``sample``, ``light_view``, ``value``)."""

from __future__ import annotations

import random
from typing import Any

from bots.search import relative
from tests.games.high_card.rules.options import HighCardOptions
from tests.games.high_card.rules.state import DECK, HighCardState


def choose(view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    legal = view["legal"]
    cards = sorted(command["card"] for command in legal)
    best_on_table = max((play["card"] for play in view["trick"]), default=0)
    winning = [card for card in cards if card > best_on_table]
    card = winning[0] if winning else cards[0]
    return next(command for command in legal if command["card"] == card)


def sample(view: dict[str, Any], rng: random.Random) -> HighCardState:
    """A whole state that shows ``view`` to its seat: the other hands and the set-aside cards drawn
    from the cards the view does not show."""
    me: int = view["seat"]
    hand = tuple(view["hand"] or ())
    trick = tuple((play["seat"], play["card"]) for play in view["trick"])
    unseen = [card for card in DECK if card not in hand and card not in {card for _, card in trick}]
    rng.shuffle(unseen)
    hands = []
    for seat, size in enumerate(view["hand_sizes"]):
        if seat == me:
            hands.append(hand)
        else:
            hands.append(tuple(sorted(unseen[:size])))
            unseen = unseen[size:]
    return HighCardState(
        options=HighCardOptions(rounds=view["rounds"]),
        players=len(view["hand_sizes"]),
        round=view["round"],
        phase="playing",
        hands=tuple(hands),
        set_aside=tuple(unseen),
        leader=view["leader"],
        trick=trick,
        taken=tuple(view["taken"]),
        totals=tuple(view["scores"]),
        scored=view["round"] - 1,
    )


def light_view(state: HighCardState, seat: int) -> dict[str, Any]:
    """What ``choose`` reads of ``seat``'s view, built from ``state``."""
    return {"seat": seat, "trick": [{"seat": s, "card": card} for s, card in state.trick]}


def _worth(state: HighCardState) -> list[int]:
    """Each seat's points, the tricks taken in a round not yet scored included."""
    if state.scored == state.round:
        return list(state.totals)
    return [total + taken for total, taken in zip(state.totals, state.taken, strict=True)]


def value(rules: Any, before: HighCardState, after: HighCardState, seat: int) -> float:
    """The points ``seat`` gained against the mean of the others' gains."""
    return relative(_worth(before), _worth(after), seat)
