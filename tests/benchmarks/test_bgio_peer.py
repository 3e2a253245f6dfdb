"""``tablestream bench --peer bgio`` (issue 38): the rows say why when Node is missing, the node
client's summary is read as it prints it, the per-move CPU and the ratio are what the rows claim,
and one tiny real run of both sides prints both rows."""

from __future__ import annotations

import argparse
import math
import shutil
from pathlib import Path

import pytest

from services.bench import bgio_peer
from services.bench.bgio_peer import BgioTurn, OursTurn, Summary
from services.bench.procs import CpuSample
from services.bench.run import Options
from services.cli import bench as bench_cli

CLIENT_OUTPUT = """{"ready":true,"tables":2,"seats":8,"setup_s":0.41}
(node:123) some warning a dependency printed
{"summary":true,"tables":2,"moves":520,"sent":601,"updates":2740,"finished_games":1,"setup_requests":5,"elapsed":2.5}
"""


def _summary(moves: int, elapsed: float, sent: int | None = None) -> Summary:
    return Summary(2, moves, moves if sent is None else sent, 4 * moves, 0, 0, elapsed)


def _ours(commands: int, elapsed: float, cpu: dict[str, float], views: int = 0) -> OursTurn:
    return OursTurn(commands, views, 0, elapsed, CpuSample(cpu), [])


def test_without_node_the_rows_are_skipped_with_a_sentence_saying_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: None if tool == "node" else f"/usr/bin/{tool}")
    why = bgio_peer.install()
    assert why == (
        "Node.js is not installed (node not on PATH; Debian: apt-get install -y nodejs npm); "
        "the boardgame.io peer rows are skipped"
    )
    rows = bgio_peer.rows(Options(seconds=1.0, tables=2, smoke=True))  # starts nothing
    assert [row.name for row in rows] == [bgio_peer.DURABLE_ROW, bgio_peer.MEMORY_ROW]
    assert all(row.ours == f"skipped: {why}" and row.ratio is None for row in rows)


def test_without_npm_either_both_tools_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: None)
    assert bgio_peer.missing_node() is not None
    assert "(node and npm not on PATH;" in str(bgio_peer.missing_node())


def test_an_installed_lock_is_reused_without_running_npm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda tool: f"/usr/bin/{tool}")
    target = tmp_path / bgio_peer.lock_key()
    target.mkdir()
    (target / bgio_peer.INSTALLED_MARK).write_text("done\n")

    def no_npm(*args: object, **kwargs: object) -> None:
        raise AssertionError("npm ran again for an installed lock")

    monkeypatch.setattr(bgio_peer.subprocess, "run", no_npm)
    node = bgio_peer.install(cache=tmp_path)
    assert node == bgio_peer.Node("/usr/bin/node", target / "node_modules")
    assert node.env()["NODE_PATH"] == str(target / "node_modules")


def test_the_clients_summary_is_its_last_summary_line() -> None:
    summary = bgio_peer.parse_summary(CLIENT_OUTPUT)
    assert summary == Summary(
        tables=2, moves=520, sent=601, updates=2740, finished_games=1, setup_requests=5, elapsed=2.5
    )
    with pytest.raises(ValueError, match="no summary line"):
        bgio_peer.parse_summary(CLIENT_OUTPUT.splitlines()[0])


def test_server_cpu_per_move_is_the_cpu_over_the_moves_the_server_accepted() -> None:
    assert bgio_peer.per_move(1.5, 500) == pytest.approx(0.003)
    assert math.isnan(bgio_peer.per_move(1.0, 0))
    turn = BgioTurn("memory", _summary(moves=500, elapsed=2.0, sent=640), cpu=1.0)
    assert turn.cpu_per_move == pytest.approx(0.002)  # the 140 refused moves cost, but do not count
    assert turn.per_second == pytest.approx(250.0)
    ours = _ours(400, 2.0, {"api": 0.8, "worker": 0.4, "redis": 0.2})
    assert ours.cpu_per_move == pytest.approx(0.0035)  # API + worker + Redis
    assert ours.share("worker") == pytest.approx(0.001)
    assert ours.per_second == pytest.approx(200.0)


def test_a_row_reads_the_median_rounds_against_less_than_1x_and_prints_both_rates() -> None:
    ours = [_ours(1000, 2.0, {"api": c, "worker": 0.0, "redis": 0.0}, views=1500) for c in (3.0, 2.0, 9.0)]
    peer = [BgioTurn("flatfile", _summary(1000, 4.0), cpu) for cpu in (1.0, 4.0, 2.5)]
    row = bgio_peer.peer_row("a row", ours, peer, "ours", "theirs", None, "shape")
    assert row.ratio == pytest.approx(3.0 / 2.5)  # median 3 ms against median 2.5 ms
    assert (row.target, row.met) == ("< 1x", False)
    assert row.ours == "3.00 [2.00 - 9.00] ms CPU per command at 500 [500 - 500] commands/s (ours)"
    assert row.baseline == "2.50 [1.00 - 4.00] ms CPU per move at 250 [250 - 250] moves/s (theirs)"
    assert "1.50 per command, counted in" in row.notes[1]
    assert row.notes[-1] == "ours net of views: not measured (wrk is not installed)"
    single = bgio_peer.peer_row("a row", ours[:1], peer[2:], "ours", "theirs", None, "shape")
    assert single.ratio == pytest.approx(3.0 / 2.5) and single.met is False
    met = bgio_peer.peer_row("a row", ours[1:2], peer[2:], "ours", "theirs", None, "shape")
    assert met.ratio == pytest.approx(0.8) and met.met


def test_the_cli_passes_peer_bgio_with_the_tables_and_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Options] = []
    monkeypatch.setattr(bench_cli, "bench", lambda options: seen.append(options) or [])
    parser = argparse.ArgumentParser()
    bench_cli.add_arguments(parser)
    assert bench_cli.run(parser.parse_args(["--peer", "bgio", "--seconds", "3", "--tables", "8"])) == 0
    assert (seen[0].peer, seen[0].seconds, seen[0].tables) == ("bgio", 3.0, 8)
    assert bench_cli.run(parser.parse_args(["--peer", "bgio", "--smoke"])) == 0
    assert (seen[1].peer, seen[1].smoke) == ("bgio", True)


@pytest.mark.redis
@pytest.mark.soak(
    reason="installs boardgame.io from npm's registry on first use, then plays a round of each of the "
    "four sides (two served stacks, two node servers)"
)
def test_a_tiny_real_run_prints_both_rows_with_moves_on_every_side() -> None:
    node = bgio_peer.install()
    if isinstance(node, str):
        pytest.skip(node)
    from services.bench.main import bench  # the hook of `tablestream bench --peer bgio`

    lines: list[str] = []
    rows = bench(Options(seconds=1.5, clients=1, tables=2, smoke=True, peer="bgio"), lines.append)
    assert [row.name for row in rows] == [bgio_peer.DURABLE_ROW, bgio_peer.MEMORY_ROW]
    out = "\n".join(lines)
    assert out.startswith("tablestream bench --peer bgio: 2 tables, 1.5 s per turn, 1 round(s)")
    for side in bgio_peer.SIDES.values():
        assert f"round 1/1, {side}: " in out
    for row in rows:
        assert row.ratio is not None and row.ratio > 0 and row.met is not None, row.render()
        assert " commands/s (" in row.ours and " moves/s (boardgame.io 0.50 server" in row.baseline
    assert out.count("== server CPU per move") == 2 and "== summary" in out
