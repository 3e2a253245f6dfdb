"""Skull King views: each seat sees its own hand and bid, never another's, over many random games."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.skull_king.cards import DECK
from domain.skull_king.state import Play, SkullKingState
from projections import skull_king as views
from projections.views import scoreboard as table_scoreboard
from projections.views import seat_view
from tests.support.play import Game, new_game, play_random

replace = msgspec.structs.replace


def strings(value: Any) -> set[str]:
    """Every string anywhere in a JSON-like value (card ids appear as whole strings)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings(v) for v in value.values())) if value else set()
    if isinstance(value, list | tuple):
        return set().union(*(strings(v) for v in value)) if value else set()
    return set()


def scrambled(state: SkullKingState, viewer: int | None, rng: random.Random) -> SkullKingState:
    """The same game with everything hidden from ``viewer`` changed: other hands, unused cards, bids."""
    others = [seat for seat in range(state.players) if seat != viewer]
    pool = [card for seat in others for card in state.hands[seat]] + list(state.unused)
    rng.shuffle(pool)
    hands, at = list(state.hands), 0
    for seat in others:
        size = len(hands[seat])
        hands[seat], at = tuple(pool[at : at + size]), at + size
    bids = state.bids
    if not state.bids_revealed:
        bids = tuple(
            bid if seat == viewer or bid is None else (bid + 1) % (state.round + 1)
            for seat, bid in enumerate(bids)
        )
    return replace(state, hands=tuple(hands), unused=tuple(pool[at:]), bids=bids)


def check_hidden(state: SkullKingState, rng: random.Random) -> None:
    """Each viewer's view and all public counters ignore what that viewer may not know."""
    for viewer in [*range(state.players), None]:
        seen = views.view(state, viewer)
        other_hands = {c for seat, hand in enumerate(state.hands) if seat != viewer for c in hand}
        assert not strings(seen) & (other_hands | set(state.unused))
        if not state.bids_revealed:
            assert seen["bids"] is None
        twin = scrambled(state, viewer, rng)
        assert views.view(twin, viewer) == seen
        for seat in range(state.players):
            assert views.player_public(twin, seat) == views.player_public(state, seat)
        assert views.scoreboard(twin) == views.scoreboard(state)


def play_viewing(g: Game, rng: random.Random) -> None:
    while g.state.status != "finished":
        check_hidden(g.rules_state, rng)
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        g.act(seat, rng.choice(g.legal(seat)))
    check_hidden(g.rules_state, rng)


@pytest.mark.thorough
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), no_suit=st.booleans())
def test_no_seat_ever_sees_another_seat_s_hand_or_an_unrevealed_bid(
    seed: int, players: int, no_suit: bool
) -> None:
    g = new_game("skull-king", players, {"character_lead_no_suit": no_suit}, seed=seed)
    play_viewing(g, random.Random(seed))


def test_a_seat_sees_its_own_hand_sorted_and_the_spectator_sees_none() -> None:
    g = new_game("skull-king", 4, seed=5)
    for _ in range(6):  # into round 3: bids, plays
        seat = g.table.to_act(g.state)[0]
        g.act(seat, g.legal(seat)[0])
    state = g.rules_state
    for seat in range(4):
        hand = views.view(state, seat)["hand"]
        assert sorted(hand, key=DECK.index) == hand and set(hand) == set(state.hands[seat])
    assert views.view(state, None)["hand"] is None
    assert views.view(state, None)["own_bid"] is None


def test_own_bid_is_shown_before_the_others_and_every_bid_once_all_are_in() -> None:
    g = new_game("skull-king", 3, seed=2)
    g.act(1, {"type": "bid", "tricks": 1})
    state = g.rules_state
    mine, theirs = views.view(state, 1), views.view(state, 0)
    assert (mine["own_bid"], mine["bids"], mine["has_bid"]) == (1, None, [False, True, False])
    assert (theirs["own_bid"], theirs["bids"], theirs["has_bid"]) == (None, None, [False, True, False])
    assert views.player_public(state, 1) == {
        "bid": None,
        "has_bid": True,
        "tricks_won": 0,
        "score": 0,
        "hand_size": 1,
    }
    g.act(0, {"type": "bid", "tricks": 0})
    g.act(2, {"type": "bid", "tricks": 1})
    assert views.view(g.rules_state, 0)["bids"] == [0, 1, 1]
    assert views.player_public(g.rules_state, 2)["bid"] == 1


def test_the_trick_in_progress_shows_who_played_what_in_order_with_scary_mary_s_declaration() -> None:
    g = new_game("skull-king", 3, seed=2)
    state = replace(
        g.rules_state,
        phase="playing",
        bids=(0, 0, 0),
        bids_revealed=True,
        leader=1,
        trick=(Play(seat=1, card="yellow-3"), Play(seat=2, card="scary-mary", as_="escape")),
    )
    seen = views.view(state, 0)
    assert seen["trick"] == [
        {"seat": 1, "card": "yellow-3", "as": None},
        {"seat": 2, "card": "scary-mary", "as": "escape"},
    ]
    assert (seen["leader"], seen["turn"], seen["lead_suit"]) == (1, 0, "yellow")


def test_only_the_seat_on_turn_sees_playable_cards_and_they_follow_suit() -> None:
    g = new_game("skull-king", 2, seed=9)
    base = g.rules_state
    state = replace(
        base,
        phase="playing",
        round=2,
        bids=(1, 1),
        bids_revealed=True,
        leader=0,
        hands=(("yellow-9",), ("yellow-2", "black-5")),
        unused=tuple(c for c in DECK if c not in {"yellow-9", "yellow-2", "black-5", "yellow-7"}),
        trick=(Play(seat=0, card="yellow-7"),),
    )
    assert views.view(state, 1)["playable"] == ["yellow-2"]
    assert views.view(state, 0)["playable"] == []


def test_the_scoreboard_is_the_score_pad_with_running_totals() -> None:
    g = play_random(new_game("skull-king", 3, seed=4), random.Random(4))
    board = views.scoreboard(g.rules_state)
    assert [line["round"] for line in board["rounds"]] == list(range(1, 11))
    running = [0, 0, 0]
    for line in board["rounds"]:
        assert sum(cell["tricks"] for cell in line["seats"]) == line["round"]
        for cell in line["seats"]:
            running[cell["seat"]] += cell["score"]
            assert cell["total"] == running[cell["seat"]]
            assert set(cell) == {"seat", "bid", "tricks", "bonus", "score", "total"}
    assert board["totals"] == running == list(g.rules_state.totals)


def test_the_envelope_carries_the_view_and_legal_commands_on_the_wire() -> None:
    g = new_game("skull-king", 2, seed=3)
    seat = g.table.to_act(g.state)[0]
    view = seat_view(g.state, len(g.events), seat)
    assert view["game"] == "skull-king" and view["phase"] == "bidding"
    assert view["legal"] == [{"type": "bid", "tricks": 0}, {"type": "bid", "tricks": 1}]
    assert view["hand"] == list(g.rules_state.hands[seat])
    board = table_scoreboard(g.state, len(g.events))
    assert board["rounds"] == [] and board["totals"] == [0, 0]
