"""Sample a whole game state consistent with one seat's view: the ``strong`` level's determinisation.

Each ``sample_<game>(view, rng)`` builds the game's full rules state (``domain/<game>/state.py``)
from the view alone: everything the view shows is copied as it is, and only what it hides (the
other seats' cards or discs, the undealt cards, face-down selections, bids not yet revealed) is
drawn with ``rng`` among the possibilities the view leaves open. The same view and the same ``rng``
therefore give the same sample whatever the real hidden state is.

``light_view(game, state, seat)`` is the part of a seat's view that the ``normal`` policies read,
built cheaply from a (sampled) state for the rollouts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import msgspec

from bots import skull_king as skull_king_bot
from domain.six_nimmt.cards import DECK_SIZE, bullheads_of
from domain.six_nimmt.options import SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState
from domain.skull.options import SkullOptions
from domain.skull.state import STARTING_DISCS, Flipped, SeatState, SkullState, canonical
from domain.skull_king.cards import DECK
from domain.skull_king.options import SkullKingOptions
from domain.skull_king.state import Play, SkullKingState, TakenTrick

View = dict[str, Any]


# -- Skull King ----------------------------------------------------------------------------------


def _sk_play(play: dict[str, Any]) -> Play:
    return Play(seat=play["seat"], card=play["card"], as_=play.get("as"))


def sample_skull_king(view: View, rng: random.Random) -> SkullKingState:
    me: int = view["seat"]
    players = len(view["hand_sizes"])
    hand = tuple(view["hand"] or ())
    trick = tuple(_sk_play(p) for p in view["trick"])
    taken = tuple(
        TakenTrick(
            leader=t["leader"],
            plays=tuple(_sk_play(p) for p in t["plays"]),
            winner=t["winner"],
            bonus=t["bonus"],
        )
        for t in view["completed_tricks"]
    )
    seen = set(hand) | {p.card for p in trick} | {p.card for t in taken for p in t.plays}
    unseen = [card for card in DECK if card not in seen]
    rng.shuffle(unseen)
    hands: list[tuple[str, ...]] = []
    for seat, size in enumerate(view["hand_sizes"]):
        if seat == me:
            hands.append(hand)
        else:
            hands.append(tuple(unseen[:size]))
            del unseen[:size]
    if view["bids"] is not None:
        bids: tuple[int | None, ...] = tuple(view["bids"])
    else:
        legal_bids = [{"type": "bid", "tricks": n} for n in range(view["round"] + 1)]
        sampled: list[int | None] = []
        for seat in range(players):
            if seat == me:
                sampled.append(view["own_bid"])
            elif view["has_bid"][seat]:
                guess = {"hand": list(hands[seat]), "tricks_won": [0] * players}
                sampled.append(skull_king_bot.choose_bid(guess, legal_bids, rng)["tricks"])
            else:
                sampled.append(None)
        bids = tuple(sampled)
    bonuses = [0] * players
    for t in taken:
        bonuses[t.winner] += t.bonus
    return SkullKingState(
        options=msgspec.convert(view["options"], SkullKingOptions),
        players=players,
        phase=view["phase"],
        round=view["round"],
        dealer=view["dealer"],
        leader=view["leader"],
        hands=tuple(hands),
        unused=tuple(unseen),
        bids=bids,
        bids_revealed=view["bids"] is not None,
        trick=trick,
        taken=taken,
        won=tuple(view["tricks_won"]),
        bonuses=tuple(bonuses),
        totals=tuple(view["scores"]),
    )


def _sk_light(state: SkullKingState, seat: int) -> View:
    return {
        "seat": seat,
        "hand": list(state.hands[seat]),
        "own_bid": state.bids[seat] if seat < len(state.bids) else None,
        "tricks_won": list(state.won),
        "trick": [{"seat": p.seat, "card": p.card, "as": p.as_} for p in state.trick],
    }


# -- 6 nimmt! ------------------------------------------------------------------------------------


def _deck_of(options: SixNimmtOptions, players: int) -> range:
    return range(1, (10 * players + 4 if options.tactical else DECK_SIZE) + 1)


def sample_six_nimmt(view: View, rng: random.Random) -> SixNimmtState:
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
        history=_six_history(view),
        totals=tuple(view["totals"]),
    )


def _six_history(view: View) -> tuple[tuple[int, ...], ...]:
    """The scored rounds as one line (totals minus the round in play): the view shows no more, and
    the rules read only their sum."""
    scored = tuple(total - now for total, now in zip(view["totals"], view["penalties"], strict=True))
    return (scored,) if any(scored) else ()


def _row(cards: tuple[int, ...]) -> dict[str, Any]:
    return {"cards": cards, "end": cards[-1] if cards else None, "bullheads": bullheads_of(cards)}


def _six_light(state: SixNimmtState, seat: int) -> View:
    return {
        "seat": seat,
        "hand": list(state.hands[seat]),
        "rows": [_row(row) for row in state.rows],
        "piles": [list(pile) for pile in state.piles],
        "selected": [card is not None for card in state.selected],
    }


# -- Skull ---------------------------------------------------------------------------------------


def sample_skull(view: View, rng: random.Random) -> SkullState:
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


def _skull_light(state: SkullState, seat: int) -> View:
    return {
        "seat": seat,
        "own_stack": list(state.seats[seat].stack),
        "options": {"reveal_all_own_first": state.options.reveal_all_own_first},
        "stacks": [{"seat": s, "size": len(x.stack), "turned": x.turned} for s, x in enumerate(state.seats)],
    }


SAMPLERS: dict[str, Callable[[View, random.Random], Any]] = {
    "skull": sample_skull,
    "six-nimmt": sample_six_nimmt,
    "skull-king": sample_skull_king,
}

LIGHT_VIEWS: dict[str, Callable[[Any, int], View]] = {
    "skull": _skull_light,
    "six-nimmt": _six_light,
    "skull-king": _sk_light,
}


def light_view(game: str, state: Any, seat: int) -> View:
    return LIGHT_VIEWS[game](state, seat)
