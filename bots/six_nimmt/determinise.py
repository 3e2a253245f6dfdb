"""6 nimmt!'s determinisation for the ``strong`` level: a whole ``SixNimmtState`` from one seat's
view (``sample``), and the light view its ``normal`` policy reads in a rollout (``light_view``).

The rows, penalty piles, pending cards, draft pool, own hand and selection and the totals are
copied as they are; the other hands (unless the tactical variant shows them), the other seats'
face-down selections and the undealt cards are drawn among the cards the view has not shown.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec

from domain.six_nimmt.cards import DECK_SIZE, bullheads_of
from domain.six_nimmt.options import SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState

View = dict[str, Any]


def _deck_of(options: SixNimmtOptions, players: int) -> range:
    return range(1, (10 * players + 4 if options.tactical else DECK_SIZE) + 1)


def sample(view: View, rng: random.Random) -> SixNimmtState:
    """A whole state that shows ``view`` to its seat, its hidden parts drawn with ``rng``."""
    me: int = view["seat"]
    options = msgspec.convert(view["options"], SixNimmtOptions)
    players = len(view["piles"])
    rows = tuple(tuple(c["card"] for c in row["cards"]) for row in view["rows"])
    piles = tuple(tuple(pile) for pile in view["piles"])
    pending = tuple(p["card"] for p in view["pending"])
    hand = tuple(view["hand"] or ())
    own_selection = view["selection"]
    sizes = [p.get("hand_size", 0) for p in view["players"]]
    selected: list[int | None] = [None] * players
    hands: list[tuple[int, ...]] = [()] * players
    pool = tuple(view["draft"]["cards"]) if view.get("draft") else ()
    public = view.get("hands")
    seen = set(hand) | {c for row in rows for c in row} | {c for pile in piles for c in pile} | set(pending)
    seen |= set(pool)
    if own_selection is not None:
        seen.add(own_selection)
    if public is not None:  # tactical: every hand is public, face-down card included
        for seat, cards in enumerate(public):
            if seat == me:
                hands[seat], selected[seat] = hand, own_selection
                continue
            cards = list(cards)
            if view["selected"][seat] and cards:
                pick = rng.choice(cards)
                cards.remove(pick)
                selected[seat] = pick
            hands[seat] = tuple(sorted(cards))
            seen |= set(cards) | ({selected[seat]} if selected[seat] is not None else set())
    unseen = [card for card in _deck_of(options, players) if card not in seen]
    rng.shuffle(unseen)
    if public is None:
        for seat in range(players):
            if seat == me:
                hands[seat], selected[seat] = hand, own_selection
                continue
            hands[seat] = tuple(sorted(unseen[: sizes[seat]]))
            del unseen[: sizes[seat]]
            if view["selected"][seat]:
                selected[seat] = unseen.pop()
    turn = view["turn"] - 1 if view["phase"] == "selecting" else view["turn"]
    row_choice = view.get("row_choice")
    return SixNimmtState(
        options=options,
        players=players,
        phase=view["phase"],
        round=view["round"],
        turn=turn,
        hands=tuple(hands),
        rows=rows,
        unused=tuple(sorted(unseen)),
        pool=pool,
        first_drafter=view["draft"]["first_drafter"] if view.get("draft") else None,
        drafter=view["draft"]["drafter"] if view.get("draft") else None,
        selected=tuple(selected),
        revealed=tuple(view["revealed"]),
        pending=pending,
        awaiting=row_choice["seat"] if row_choice else None,
        piles=piles,
        history=_history(view),
        totals=tuple(view["totals"]),
    )


def _history(view: View) -> tuple[tuple[int, ...], ...]:
    """The scored rounds as one line (totals minus the round in play): the view shows no more, and
    the rules read only their sum."""
    scored = tuple(total - now for total, now in zip(view["totals"], view["penalties"], strict=True))
    return (scored,) if any(scored) else ()


def _row(cards: tuple[int, ...]) -> dict[str, Any]:
    return {"cards": cards, "end": cards[-1] if cards else None, "bullheads": bullheads_of(cards)}


def light_view(state: SixNimmtState, seat: int) -> View:
    """What ``bots.six_nimmt.heuristic.choose`` reads of ``seat``'s view, built from ``state``."""
    return {
        "seat": seat,
        "hand": list(state.hands[seat]),
        "rows": [_row(row) for row in state.rows],
        "piles": [list(pile) for pile in state.piles],
        "selected": [card is not None for card in state.selected],
    }
