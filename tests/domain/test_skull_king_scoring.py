"""Skull King: scoring a round and the bonuses a trick is worth (docs/rules.md "Scoring a round")."""

from __future__ import annotations

import pytest

from domain.skull_king.options import SkullKingOptions
from domain.skull_king.scoring import bonus_counted, round_score
from domain.skull_king.state import Play
from domain.skull_king.tricks import trick_bonus, winning_index


def _play(seat: int, spec: str) -> Play:
    """``scary-mary`` plays her as a Pirate, ``scary-mary:escape`` as an Escape."""
    card, _, declared = spec.partition(":")
    if card == "scary-mary":
        return Play(seat=seat, card=card, as_="escape" if declared == "escape" else "pirate")
    return Play(seat=seat, card=card)


def bonus_of(*cards: str, options: SkullKingOptions | None = None) -> int:
    """The bonus the winner of a trick of ``cards`` (in play order) would collect."""
    trick = [_play(seat, spec) for seat, spec in enumerate(cards)]
    return trick_bonus(trick, winning_index(trick), options or SkullKingOptions())


def test_seed_example_round_three_bid_two_two_tricks_scores_seventy() -> None:
    assert round_score(2, 2, 0, 3, "seed") == 70


def test_classic_scoring_drops_the_ten_per_round_so_the_seed_example_scores_forty() -> None:
    assert round_score(2, 2, 0, 3, "classic") == 40


@pytest.mark.parametrize("scoring", ["seed", "classic"])
@pytest.mark.parametrize("round_number", [1, 3, 10])
def test_a_zero_bid_made_scores_plus_ten_per_round_and_missed_minus_ten_per_round(
    scoring: str, round_number: int
) -> None:
    assert round_score(0, 0, 0, round_number, scoring) == 10 * round_number  # type: ignore[arg-type]
    assert round_score(0, 2, 0, round_number, scoring) == -10 * round_number  # type: ignore[arg-type]


@pytest.mark.parametrize(("bid", "tricks", "expected"), [(2, 0, -20), (2, 5, -30), (1, 2, -10), (3, 1, -20)])
def test_a_missed_bid_costs_ten_per_trick_off_in_any_round(bid: int, tricks: int, expected: int) -> None:
    assert round_score(bid, tricks, 0, 7, "seed") == expected
    assert round_score(bid, tricks, 0, 7, "classic") == expected


def test_bonuses_are_added_to_an_exact_bid_in_both_scorings() -> None:
    assert round_score(1, 1, 60, 1, "seed") == 20 + 10 + 60
    assert round_score(1, 1, 60, 1, "classic") == 20 + 60


def test_bonuses_are_void_on_a_missed_bid() -> None:
    assert bonus_counted(2, 1, 50) == 0
    assert bonus_counted(0, 1, 30) == 0
    assert bonus_counted(1, 1, 50) == 50
    assert round_score(2, 1, bonus_counted(2, 1, 50), 5, "seed") == -10


def test_skull_king_pirate_pirate_is_worth_sixty() -> None:
    assert bonus_of("skull-king", "pirate-1", "pirate-2") == 60


def test_each_pirate_taken_by_the_skull_king_is_worth_thirty() -> None:
    assert bonus_of("pirate-3", "yellow-4", "skull-king") == 30
    assert bonus_of("pirate-3", "pirate-1", "skull-king", "pirate-5", "pirate-2") == 120


def test_scary_mary_as_pirate_counts_for_the_skull_king_bonus() -> None:
    assert bonus_of("skull-king", "scary-mary") == 30


def test_scary_mary_as_escape_counts_for_the_skull_king_bonus_only_with_the_option() -> None:
    assert bonus_of("skull-king", "scary-mary:escape", "pirate-1") == 30
    with_option = SkullKingOptions(scary_mary_escape_counts_as_pirate=True)
    assert bonus_of("skull-king", "scary-mary:escape", "pirate-1", options=with_option) == 60


def test_a_mermaid_taking_the_skull_king_is_worth_fifty() -> None:
    assert bonus_of("mermaid-1", "black-7", "skull-king") == 50


def test_a_mermaid_taking_pirates_without_the_skull_king_is_worth_nothing() -> None:
    assert bonus_of("mermaid-1", "yellow-7") == 0
    assert bonus_of("yellow-7", "black-13") == 0


def test_the_skull_king_alone_or_beaten_is_worth_nothing_to_the_winner() -> None:
    assert bonus_of("skull-king", "yellow-2") == 0
    assert bonus_of("pirate-1", "skull-king", "mermaid-2") == 50
