"""The 6 nimmt! bot: always a legal command, from its own view only, and better than chance."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from bots import choose as choose_for_game
from bots.six_nimmt import choose
from domain.six_nimmt.cards import bullheads_of
from projections.views import seat_view
from tests.support.play import Game, new_game


def bot_view(g: Game, seat: int) -> dict[str, Any]:
    """The view exactly as the API serves it (through JSON), for ``seat``."""
    return msgspec.json.decode(msgspec.json.encode(seat_view(g.state, len(g.events), seat)))


def row(*cards: int) -> dict[str, Any]:
    return {"cards": [{"card": c} for c in cards], "end": cards[-1], "bullheads": bullheads_of(cards)}


def crafted_view(hand: list[int], rows: list[dict[str, Any]], players: int = 4) -> dict[str, Any]:
    legal = [{"type": "select_card", "card": card} for card in hand]
    return {
        "legal": legal,
        "hand": hand,
        "rows": rows,
        "piles": [[]] * players,
        "selected": [False] * players,
    }


@pytest.mark.parametrize("options", [{}, {"tactical": True}, {"end_compare": "ge", "end_score": 40}])
@pytest.mark.parametrize("players", [2, 5, 10])
def test_bots_in_every_seat_finish_a_game_with_legal_commands_only(
    players: int, options: dict[str, Any]
) -> None:
    g = new_game("six-nimmt", players, options, seed=f"bots{players}")
    rng = random.Random(players)
    while g.state.status != "finished":
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        view = bot_view(g, seat)
        command = choose_for_game("six-nimmt", view, rng)
        assert command in view["legal"]
        g.act(seat, command)


def test_the_bot_takes_the_row_with_the_fewest_bullheads_when_it_must_choose() -> None:
    rows = [row(30, 36), row(37), row(43, 44), row(55)]
    view = {"legal": [{"type": "choose_row", "row": r} for r in range(4)], "rows": rows}
    assert choose(view, random.Random(0)) == {"type": "choose_row", "row": 1}


def test_the_bot_never_plays_a_sixth_card_when_a_safe_card_exists() -> None:
    view = crafted_view([30, 39], [row(12, 14, 15, 21, 26), row(37), row(60), row(80)])
    assert choose(view, random.Random(0)) == {"type": "select_card", "card": 39}


def test_the_bot_prefers_a_card_just_above_a_short_row_to_one_far_above_a_long_row() -> None:
    view = crafted_view([48, 71], [row(10), row(45, 46, 47), row(50, 52, 55, 58), row(90)])
    assert choose(view, random.Random(0)) == {"type": "select_card", "card": 48}


def test_the_bot_drafts_the_card_with_the_fewest_bullheads() -> None:
    view = {"legal": [{"type": "draft_card", "card": c} for c in (5, 11, 55, 10)]}
    assert choose(view, random.Random(0)) == {"type": "draft_card", "card": 5}


def test_a_bot_takes_fewer_bullheads_than_random_players() -> None:
    bot, others = 0.0, 0.0
    for seed in range(12):
        g = new_game("six-nimmt", 4, {"rounds": 2}, seed=f"duel{seed}")
        rng = random.Random(seed)
        while g.state.status != "finished":
            seat = rng.choice(sorted(g.table.to_act(g.state)))
            if seat == 0:
                g.act(0, choose(bot_view(g, 0), rng))
            else:
                g.act(seat, rng.choice(g.legal(seat)))
        totals = g.rules_state.totals
        bot, others = bot + totals[0], others + sum(totals[1:]) / 3
    assert bot < 0.6 * others
