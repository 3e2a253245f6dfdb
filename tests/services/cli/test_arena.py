"""``tablestream arena --smoke``: a few bot games per pairing, in process, with every figure printed."""

from __future__ import annotations

import pytest

from services.cli import main
from services.cli.arena import PAIRINGS, Task, places_of, play, seat_levels


def test_the_arena_smoke_mode_plays_every_game_and_pairing_and_prints_ratings_and_head_to_head(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["arena", "--smoke", "--processes", "1", "--sims", "2"]) == 0
    out = capsys.readouterr().out
    for title in ("Skull", "6 nimmt!", "Skull King"):
        assert f"== {title} (4 seats, {len(PAIRINGS)} games)" in out
    for a, b in PAIRINGS:
        assert out.count(f"    {a} vs {b}: 1 game;") == 3
    assert out.count("rating (openskill") == 3 and "strong CPU per move" in out


def test_the_arena_runs_its_games_in_parallel_processes(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["arena", "--smoke", "--processes", "2", "--game", "skull", "--pairing", "easy:random"]
    assert main(argv) == 0
    assert "easy vs random: 1 game;" in capsys.readouterr().out


def test_an_arena_game_is_the_same_for_the_same_seed() -> None:
    task = Task("skull", ("normal", "easy"), 3, 11, 2)
    assert play(task) == play(task)
    assert seat_levels(task) == ("easy", "normal", "easy", "normal")


def test_places_put_the_winners_first_and_share_ties() -> None:
    assert places_of("skull-king", [50, 80, 80, 10], [1, 2]) == (3.0, 1.5, 1.5, 4.0)
    assert places_of("six-nimmt", [70, 10, 30, 30], [1]) == (4.0, 1.0, 2.5, 2.5)
