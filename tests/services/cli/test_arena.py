"""``tablestream arena --smoke``: a few bot games per pairing, in process, with every figure printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.games import specs
from services.cli import main
from services.cli.arena import PAIRINGS, Result, Task, interleaved, places_of, play, ratings, seat_levels


@pytest.mark.thorough
def test_the_arena_smoke_mode_plays_every_game_and_pairing_and_prints_ratings_and_head_to_head(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["arena", "--smoke", "--processes", "1", "--sims", "2"]) == 0
    out = capsys.readouterr().out
    games = specs()
    for game in games:
        assert f"== {game.title} (4 seats, {len(PAIRINGS)} games)" in out
    for a, b in PAIRINGS:
        assert out.count(f"    {a} vs {b}: 1 game;") == len(games)
    assert out.count("rating (openskill") == len(games) and "strong CPU per move" in out


@pytest.mark.thorough
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


def test_a_two_seat_arena_seats_one_bot_of_each_level_and_alternates_who_sits_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["arena", "--games", "2", "--seats", "2", "--game", "six-nimmt", "--pairing", "normal:easy"]
    assert main([*argv, "--processes", "1"]) == 0
    assert "== 6 nimmt! (2 seats, 2 games)" in capsys.readouterr().out
    assert seat_levels(Task("six-nimmt", ("normal", "easy"), 0, 1, 2, seats=2)) == ("normal", "easy")
    assert seat_levels(Task("six-nimmt", ("normal", "easy"), 1, 1, 2, seats=2)) == ("easy", "normal")


@pytest.mark.parametrize(
    ("game", "seats", "sentence"),
    [
        ("skull", "3", "--seats 3: a pairing seats two levels half the seats each, so it must be even."),
        ("skull", "2", "--seats 2: Skull is for 3 to 6 players."),
    ],
)
def test_the_arena_refuses_a_table_size_that_cannot_seat_a_pairing(
    game: str, seats: str, sentence: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["arena", "--seats", seats, "--game", game]) == 2
    assert sentence in capsys.readouterr().err


def test_a_run_continued_with_first_plays_the_games_a_stopped_run_had_not_reached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["arena", "--game", "skull", "--pairing", "easy:random", "--processes", "1"]
    whole, parts = tmp_path / "whole.jsonl", tmp_path / "parts.jsonl"
    assert main([*argv, "--games", "3", "--out", str(whole)]) == 0
    assert main([*argv, "--games", "1", "--out", str(parts)]) == 0
    assert main([*argv, "--games", "2", "--first", "1", "--out", str(parts)]) == 0
    assert parts.read_bytes() == whole.read_bytes()
    capsys.readouterr()


def test_ratings_take_the_games_of_each_pairing_in_turn_whatever_order_the_results_came_in() -> None:
    def result(pairing: tuple[str, str], n: int) -> Result:
        return Result("skull", pairing, (*pairing, *pairing), (1.0, 2.0, 3.0, 4.0), (n,), ())

    strong = [result(("strong", "normal"), n) for n in range(3)]
    weak = [result(("normal", "easy"), n) for n in range(2)]
    assert interleaved(strong + weak) == [strong[0], weak[0], strong[1], weak[1], strong[2]]
    assert ratings(strong + weak) == ratings(interleaved(strong + weak))


def test_ratings_count_a_game_once_per_level_ranked_by_the_mean_place_of_its_seats() -> None:
    def result(places: tuple[float, ...]) -> Result:
        return Result("skull", ("easy", "random"), ("easy", "random", "easy", "random"), places, (0,), ())

    # easy's seats place 1 and 4, random's 2 and 3: equal means, a tie that moves neither mu
    tie = ratings([result((1.0, 2.0, 4.0, 3.0))])
    assert tie["easy"][0] == pytest.approx(tie["random"][0])
    won = ratings([result((1.0, 3.0, 2.0, 4.0))] * 20)
    assert won["easy"][0] > won["random"][0]
