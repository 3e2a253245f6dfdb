"""The Skull King bot: always a legal command from its own view, and a sensible one."""

from __future__ import annotations

import random
from typing import Any

from bots.skull_king import choose
from projections.views import seat_view
from tests.support.play import Game, new_game


def bot_view(seat: int, **fields: Any) -> dict[str, Any]:
    """A seat view as the API serves it, reduced to the fields the bot reads."""
    base: dict[str, Any] = {"seat": seat, "trick": [], "own_bid": None, "tricks_won": [0, 0, 0]}
    return base | fields


def card(command: dict[str, Any]) -> str:
    return str(command["card"]) + (f":{command['as']}" if "as" in command else "")


def plays(*cards: str) -> list[dict[str, Any]]:
    return [{"type": "play_card", "card": c} for c in cards]


def play_with_bots(g: Game, bots: set[int], rng: random.Random) -> Game:
    """Bots choose from their seat view (the API envelope); other seats play at random."""
    while g.state.status != "finished":
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        if seat in bots:
            view = seat_view(g.state, len(g.events), seat)
            command = choose(view, rng)
            assert command in view["legal"]
        else:
            command = rng.choice(g.legal(seat))
        g.act(seat, command)
    return g


def test_bots_play_whole_games_from_their_views_with_legal_commands_only() -> None:
    for players in range(2, 7):
        g = play_with_bots(
            new_game("skull-king", players, seed=players), set(range(players)), random.Random(players)
        )
        assert len(g.rules_state.history) == 10


def test_a_bot_outscores_random_players_by_a_wide_margin() -> None:
    for players in (2, 4):
        bot, others = 0.0, 0.0
        for seed in range(8):
            g = play_with_bots(new_game("skull-king", players, seed=seed), {0}, random.Random(seed))
            totals = g.rules_state.totals
            bot += totals[0] / 8
            others += sum(totals[1:]) / (players - 1) / 8
        assert bot > others + 100, (players, bot, others)


def test_a_strong_hand_bids_more_than_a_weak_one() -> None:
    legal = [{"type": "bid", "tricks": n} for n in range(4)]
    strong = bot_view(0, hand=["skull-king", "pirate-1", "pirate-2"], legal=legal)
    weak = bot_view(0, hand=["escape-1", "yellow-2", "red-3"], legal=legal)
    assert choose(strong, random.Random(1))["tricks"] >= 2
    assert choose(weak, random.Random(1)) == {"type": "bid", "tricks": 0}


def test_needing_a_trick_as_last_player_it_wins_with_its_cheapest_winning_card() -> None:
    trick = [{"seat": 1, "card": "yellow-9", "as": None}, {"seat": 2, "card": "yellow-4", "as": None}]
    view = bot_view(0, trick=trick, own_bid=1, legal=plays("yellow-3", "yellow-12", "pirate-1"))
    assert card(choose(view, random.Random(0))) == "yellow-12"


def test_with_its_bid_made_it_ducks_under_the_trick_with_its_highest_losing_card() -> None:
    trick = [{"seat": 1, "card": "yellow-9", "as": None}]
    view = bot_view(0, trick=trick, own_bid=0, legal=plays("yellow-3", "yellow-8", "yellow-12"))
    assert card(choose(view, random.Random(0))) == "yellow-8"


def test_avoiding_tricks_it_plays_scary_mary_as_an_escape() -> None:
    trick = [{"seat": 1, "card": "black-2", "as": None}]
    legal = [
        {"type": "play_card", "card": "scary-mary", "as": "pirate"},
        {"type": "play_card", "card": "scary-mary", "as": "escape"},
    ]
    view = bot_view(0, trick=trick, own_bid=0, legal=legal)
    assert card(choose(view, random.Random(0))) == "scary-mary:escape"
