"""``tablestream bench``: the smoke run prints every row (so the bench cannot rot), and wrk's output
is read as wrk prints it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from services.bench import wrk

BENCH_BOUND_S = 590
"""A bench run's hard stop, just under the test's own (600 s, pyproject.toml), so that a hang fails
naming the command. Not a bound on its speed: a smoke run takes about a minute on a quiet 2-core
machine and took 280 s (then cut off) beside the rest of the suite on a slow day."""

WRK_OUTPUT = """Running 1s test @ http://127.0.0.1:48361/healthz
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   210.10ms  218.50ms   1.02s    84.98%
  Latency Distribution
     50%  127.45ms
     75%  220.27ms
     90%  551.69ms
     99%    1.01s{trailing}
  240 requests in 1.03s, 44.23KB read
  Non-2xx or 3xx responses: 3
Requests/sec:    233.53
""".format(trailing=" ")  # wrk pads this line


def test_wrk_output_gives_requests_seconds_percentiles_and_errors() -> None:
    result = wrk.parse(WRK_OUTPUT)
    assert (result.requests, result.seconds, result.errors) == (240, 1.03, 3)
    assert result.p50 == pytest.approx(0.12745)
    assert result.p99 == pytest.approx(1.01)


def test_the_rotation_script_sends_each_path_with_its_token_in_turn() -> None:
    script = wrk.rotation_script([("/games/a/view", "tok"), ("/healthz", None)])
    assert 'reqs[1] = wrk.format("GET", "/games/a/view", {["Authorization"] = "Bearer tok"})' in script
    assert 'reqs[2] = wrk.format("GET", "/healthz", {})' in script


@pytest.mark.redis
@pytest.mark.soak(reason="runs every row of the benchmark once, each against its own served stack")
def test_the_smoke_bench_prints_every_row_and_says_why_wrk_rows_are_skipped(tmp_path: object) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no wrk on this PATH
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "bench", "--smoke"],
        capture_output=True,
        text=True,
        env=env,
        timeout=BENCH_BOUND_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "NOTE: wrk is not installed (Debian: apt-get install -y wrk)" in out
    for row in (
        "== GET /healthz vs bare /bench/ping",
        "== full command (no wrk baseline)",
        "== projection lag at 0.5 x top rate",
        "== projection lag at 0.1 x top rate",
        "== Redis memory per finished game",
        "== replay: read + decode + fold",
        "== 20 tables alive: created, seated, one move each",
        "== commands/s, kept, 64 callers vs eventsourcing sqlite",
        "== CPU per command, kept, vs eventsourcing sqlite",
        "== commands/s, reload, 64 callers vs eventsourcing sqlite",
        "== CPU per command, reload, vs eventsourcing sqlite",
        "== commands/s, reload, vs eventsourcing popo (informational)",
        "== rebuild vs eventsourcing popo",
        "== summary",
    ):
        assert row in out
    assert out.count("skipped: wrk is not installed") == 4  # healthz, append, kept and unkept views
    assert "views rendered by the API from the events (the projection was behind" in out
    assert out.count("   capacity: ") == 10 and "   capacity: 20 tables at " in out  # a sample per tenth


@pytest.mark.redis
def test_the_capacity_bench_runs_only_the_capacity_row_sampling_memory_as_tables_are_added() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.cli",
            "bench",
            "--capacity",
            "--capacity-tables",
            "6",
            "--clients=2",
        ],
        capture_output=True,
        text=True,
        timeout=BENCH_BOUND_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    rows = [line for line in out.splitlines() if line.startswith("== ")]
    assert rows == [
        "== 6 tables alive: created, seated, one move each",
        "== summary (ratios as the targets read them)",
    ]
    steps = [line for line in out.splitlines() if line.startswith("   capacity: ")]
    assert [step.split(" tables at ")[0] for step in steps] == [f"   capacity: {n}" for n in range(1, 7)]
    assert all("per table; RSS api " in step for step in steps)


@pytest.mark.redis
def test_the_strong_bots_row_reports_a_paced_tables_lag_alone_and_beside_strong_bots() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "bench", "--strong-bots", "--smoke"],
        capture_output=True,
        text=True,
        timeout=BENCH_BOUND_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "paced table alone:        projection lag p50 " in out
    assert "beside the strong bots:   projection lag p50 " in out
    assert "ratio (beside / alone):   p50 " in out
    moved = int(out.split("the bot tables appended ")[1].split()[0])
    assert moved > 0  # the strong bots did play beside the paced table


@pytest.mark.redis
def test_the_hot_routes_bench_reads_projected_views_apart_from_views_rendered_behind_the_projection() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.bench.hot_routes", "--tables", "1", "--rounds", "2"],
        capture_output=True,
        text=True,
        timeout=BENCH_BOUND_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    routes = {line.split("  ")[0].strip(): line for line in done.stdout.splitlines() if "us CPU/call" in line}
    assert set(routes) == {
        "/bench/ping",
        "/bench/append",
        "view (read from Redis)",
        "view (rendered: projection behind)",
        "command (load)",
        "command (fast)",
    }
    assert routes["view (read from Redis)"].endswith("(2 calls, 0 views rendered)")
    assert routes["view (rendered: projection behind)"].endswith("(2 calls, 2 views rendered)")
