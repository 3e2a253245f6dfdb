"""The rating people read: 1000 for a new player, the order of the ordinal (mu - 3 sigma), never
negative after a run of losses, provisional until enough rated games against enough opponents."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from projections.ratings import (
    NEW_PLAYER,
    PROVISIONAL_GAMES,
    PROVISIONAL_OPPONENTS,
    Skill,
    display_rating,
    rate,
)

RANKINGS_JS = Path(__file__).parents[2] / "services" / "api" / "static" / "js" / "rankings.js"
skills = st.builds(Skill, mu=st.floats(-60, 160), sigma=st.floats(0.5, 9), games=st.integers(0, 50))


def test_a_new_player_is_provisional_until_five_rated_games_against_three_opponents() -> None:
    assert NEW_PLAYER.shown()["display"] == 1000
    met = tuple("abc"[:PROVISIONAL_OPPONENTS])
    shown = [Skill(mu=25, sigma=8, games=n, met=met).shown()["provisional"] for n in range(7)]
    assert shown == [True] * PROVISIONAL_GAMES + [False] * (7 - PROVISIONAL_GAMES)
    few = [Skill(mu=25, sigma=8, games=50, met=met[:n]).shown()["provisional"] for n in range(4)]
    assert few == [True] * PROVISIONAL_OPPONENTS + [False]


@given(skills, skills)
def test_the_display_keeps_the_order_of_the_ordinal_the_leaderboard_sorts_by(a: Skill, b: Skill) -> None:
    if a.rating <= b.rating:
        a, b = b, a
    assert display_rating(a.mu, a.sigma) >= display_rating(b.mu, b.sigma) >= 0


def test_one_loss_takes_the_ordinal_below_zero_but_the_display_stays_near_1000() -> None:
    winner, loser = rate([1, 2], [NEW_PLAYER, NEW_PLAYER])
    assert loser.rating < 0 < winner.rating
    assert 900 < loser.shown()["display"] < 1000 < winner.shown()["display"] < 1100


def test_a_thousand_straight_losses_at_a_table_of_two_leave_a_positive_display() -> None:
    loser, winner = NEW_PLAYER, NEW_PLAYER
    for _ in range(1000):
        winner, loser = rate([1, 2], [winner, loser])
    assert display_rating(loser.mu, loser.sigma) > 500


def test_the_web_client_counts_provisional_games_as_the_server_does() -> None:
    found = re.search(r"export const PROVISIONAL_GAMES = (\d+);", RANKINGS_JS.read_text())
    assert found is not None and int(found.group(1)) == PROVISIONAL_GAMES
    found = re.search(r"export const PROVISIONAL_OPPONENTS = (\d+);", RANKINGS_JS.read_text())
    assert found is not None and int(found.group(1)) == PROVISIONAL_OPPONENTS
