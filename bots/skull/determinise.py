"""Skull's determinisation for the ``strong`` level: a whole ``SkullState`` from one seat's view
(``sample``), and the light view its ``normal`` policy reads in a rollout (``light_view``).

Points, eliminations, passes, the auction, flips, turned discs and the own hand and stack are
copied as they are; the other seats' face-down discs and hands are drawn among what their disc
counts leave possible (a lost disc was the skull about one time in four), and a challenger's
shuffled discs for a discard pick are shuffled anew.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from domain.skull.options import SkullOptions
from domain.skull.state import STARTING_DISCS, Flipped, SeatState, SkullState, canonical

View = dict[str, Any]


def sample(view: View, rng: random.Random) -> SkullState:
    """A whole state that shows ``view`` to its seat, its hidden parts drawn with ``rng``."""
    me: int = view["seat"]
    options = msgspec.convert(view["options"], SkullOptions)
    holder = view["last_chance_holder"]
    flips = tuple(Flipped(seat=f["seat"], disc=f["disc"]) for f in view["flips"])
    seats: list[SeatState] = []
    for seat, stack_view in enumerate(view["stacks"]):
        points = view["points"][seat]
        eliminated = seat in view["eliminated"]
        passed = seat in view["passed"]
        turned = stack_view["turned"]
        if seat == me:
            composition = view["hand"] or {}
            hand = tuple(kind for kind, n in composition.items() for _ in range(n))
            seats.append(
                SeatState(
                    hand=canonical(hand),
                    stack=tuple(view["own_stack"] or ()),
                    turned=turned,
                    lost=tuple(view["lost"] or ()),
                    points=points,
                    eliminated=eliminated,
                    passed=passed,
                )
            )
            continue
        owned = view["disc_counts"][seat]
        discs = list(stack_view["discs"])
        known = [d for d in discs if d is not None and d != "last_chance"]
        hidden_stack = [i for i, d in enumerate(discs) if d is None]
        hand_size = view["hand_sizes"][seat]
        lc_in_hand = holder == seat and "last_chance" not in discs
        plain_hand = hand_size - (1 if lc_in_hand else 0)
        hidden = len(hidden_stack) + plain_hand
        # the skull is among the owned discs unless it was lost: a lost disc was the skull about
        # one time in four (its owner's own choice aside)
        has_skull = "skull" not in known and hidden > 0 and (owned == 4 or rng.random() < owned / 4)
        kinds = ["flower"] * hidden
        if has_skull:
            kinds[rng.randrange(hidden)] = "skull"
        for index, kind in zip(hidden_stack, kinds, strict=False):
            discs[index] = kind
        hand = kinds[len(hidden_stack) :] + (["last_chance"] if lc_in_hand else [])
        owned_discs = canonical([*known, *kinds])
        lost = list(STARTING_DISCS)
        for disc in owned_discs:
            if disc in lost:
                lost.remove(disc)
        seats.append(
            SeatState(
                hand=canonical(hand),
                stack=tuple(discs),
                turned=turned,
                lost=tuple(lost),
                points=points,
                eliminated=eliminated,
                passed=passed,
            )
        )
    skull_owner = next((f.seat for f in flips if f.disc == "skull"), None)
    discard = view["discard"]
    discard_order = None
    if view["phase"] == "discard_pick" and discard is not None:
        challenger = seats[discard["seat"]]
        order = [d for d in challenger.owned]
        rng.shuffle(order)
        discard_order = tuple(order)
    return SkullState(
        options=options,
        seats=tuple(seats),
        phase=view["phase"],
        round=view["round"],
        rounds_completed=view["rounds_completed"],
        first_player=view["first_player"],
        turn=view["turn"],
        bid=view["bid"] or 0,
        bidder=view["bidder"],
        challenger=view["challenger"],
        flips=flips,
        skull_owner=skull_owner,
        discard_order=discard_order,
        chooser=view["chooser"],
        last_chance_holder=holder,
        last_chance_given=tuple(view["last_chance_used"]),
    )


def light_view(state: SkullState, seat: int) -> View:
    """What ``bots.skull.heuristic.choose`` reads of ``seat``'s view, built from ``state``."""
    return {
        "seat": seat,
        "own_stack": list(state.seats[seat].stack),
        "options": {"reveal_all_own_first": state.options.reveal_all_own_first},
        "stacks": [{"seat": s, "size": len(x.stack), "turned": x.turned} for s, x in enumerate(state.seats)],
    }
