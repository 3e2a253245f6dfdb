"""``/metrics`` in multiprocess mode, from real processes: ``tablestream serve --api-workers 2`` and a
worker pool of two (``python -m workers.pool --workers 2``) sharing one metrics directory, on a real
Redis. A game played through HTTP moves the counters (commands, requests, projection lag, live
streams) whichever API process answers the scrape, and every metric the dashboard and the alert
rules name is in the text."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import redis
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from bots import choose
from services.cli.processes import wait_ready
from services.store.embedded import EmbeddedRedis, free_port
from services.store.queue import enqueue_projections, projection_queue
from tests.support.promql import family_of, named_metrics
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.slow]

TOKEN = "metrics-operator-token"
OPERATOR = {"Authorization": f"Bearer {TOKEN}"}
DEADLINE = 60.0
T = TypeVar("T")


def until(condition: Callable[[], T | None], what: str, deadline: float = DEADLINE) -> T:
    """Poll ``condition`` until it returns something other than ``None``/``False``, or fail."""
    found: T = wait_until(condition, deadline, what)  # type: ignore[arg-type]
    return found


@dataclass
class Stack:
    base: str
    directory: Path
    worker_pid: int
    redis_url: str

    def client(self) -> httpx.Client:
        # no kept connections: each request is accepted afresh, by either API process
        return httpx.Client(base_url=self.base, timeout=20, limits=httpx.Limits(max_keepalive_connections=0))

    def scrape(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        with self.client() as client:
            response = client.get("/metrics", headers=OPERATOR)
        assert response.status_code == 200, response.text
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(response.text)
            for sample in family.samples
        }

    def per_process(self, metric: str) -> dict[int, float]:
        """Each process's total of one counter, read from its own file in the directory."""
        totals: dict[int, float] = {}
        for path in self.directory.glob("counter_*.db"):
            pid = int(path.stem.rsplit("_", 1)[1])
            if path.stat().st_size < 8:  # a process that is creating its file this moment: nothing in it yet
                continue
            for key, value, _, _ in MmapedDict.read_all_values_from_file(str(path)):
                if key.startswith(f'["{metric}"'):
                    totals[pid] = totals.get(pid, 0.0) + value
        return totals


def value(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # its own group: the processes it started too
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def stack(redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One stack for the module (its six processes take seconds of CPU to start): the tests read
    counters that only they move (a game's commands and streams; one client's logins)."""
    redis.Redis.from_url(redis_server.url).flushall()
    directory = tmp_path_factory.mktemp("stack") / "metrics"
    directory.mkdir()
    (directory / "counter_999999.db").write_bytes(b"left by a previous run")  # serve empties it
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(directory),
        "TABLESTREAM_ADMIN_TOKEN": TOKEN,
        "TABLESTREAM_BOT_PACE_MS": "0",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    port = free_port()
    serve = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "--api-workers", "2", "--port", str(port),
         "--redis-url", redis_server.url, "--redis-cluster", "no"],
        env=env, process_group=0, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    worker = None
    try:
        base = f"http://127.0.0.1:{port}"
        wait_ready(base)
        worker = subprocess.Popen(
            [sys.executable, "-m", "workers.pool", "--redis-url", redis_server.url, "--redis-cluster", "no",
             "--workers", "2", "--sweep-seconds", "1"],
            env=env, process_group=0, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        yield Stack(base, directory, worker.pid, redis_server.url)
    finally:
        if worker is not None:
            _stop(worker)
        _stop(serve)


def seat_view(
    client: httpx.Client, game_id: str, auth: dict[str, str], version: int
) -> dict[str, Any] | None:
    view: dict[str, Any] = client.get(f"/games/{game_id}/view", headers=auth).json()
    return view if view.get("version") == version else None


def play(stack: Stack, moves: int, seed: int) -> tuple[str, list[str], int]:
    """A Skull table of three, then ``moves`` bot moves through HTTP, each after the worker has
    projected the one before (a view at the head)."""
    rng = random.Random(seed)
    with stack.client() as client:
        created = client.post("/games", json={"game": "skull", "players": 3})
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        tokens = []
        for name in ("Ada", "Bo", "Cy"):
            joined = client.post(f"/games/{game_id}/players", json={"name": name})
            assert joined.status_code == 201, joined.text
            tokens.append(joined.json()["token"])

        def head() -> int:
            return int(client.get(f"/games/{game_id}/events", params={"limit": 1}).json()["version"])

        def projected() -> dict[str, Any] | None:
            view: dict[str, Any] = client.get(f"/games/{game_id}/view").json()
            return view if view.get("version") == head() and view.get("status") == "playing" else None

        for _ in range(moves):
            view = until(projected, "the worker projects the last move")
            seat = view["to_act"][0]
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            own = until(
                lambda auth=auth, version=view["version"]: seat_view(client, game_id, auth, version),
                "the seat's view at the head",
            )
            body = {"command_id": f"m-{rng.random()}", "command": choose("skull", own, rng),
                    "expected_version": own["version"]}  # fmt: skip
            sent = client.post(f"/games/{game_id}/commands", json=body, headers=auth)
            assert sent.status_code == 200, sent.text
    return game_id, tokens, moves


def test_two_api_processes_and_a_worker_pool_report_one_set_of_counters_as_a_game_is_played(
    stack: Stack,
) -> None:
    assert not (stack.directory / "counter_999999.db").exists()
    before = stack.scrape()
    assert value(before, "tablestream_commands_total", game="skull", outcome="ok") == 0

    game_id, tokens, moves = play(stack, moves=6, seed=7)

    def busy(metric: str) -> set[int]:
        return {pid for pid, total in stack.per_process(metric).items() if total > 0}

    # both API processes answered requests (fresh connections, several at once until both have)
    def two_api_processes() -> bool:
        with stack.client() as client, ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda _: client.get("/livez"), range(16)))
        return len(busy("tablestream_http_requests")) >= 2

    until(two_api_processes, "requests answered by both API processes")
    # The projections are the pool's own process's (its hand-over consumer); its forked workers run
    # RQ's jobs: timers, bots and the sweeper's repairs, as this one.
    until(lambda: stack.worker_pid in busy("tablestream_drain_games"), "the pool's consumer counts its games")
    enqueue_projections(projection_queue(redis.Redis.from_url(stack.redis_url)), [game_id])
    workers = until(lambda: busy("tablestream_jobs"), "a worker process counts its jobs")
    assert not workers & busy("tablestream_http_requests"), "the workers answer no HTTP"
    assert stack.worker_pid not in workers, "the pool's own process runs no job: its worker processes do"

    # a live stream open on one process is seen by a scrape of either
    opened = threading.Event()
    closing = threading.Event()

    def listen() -> None:
        with (
            httpx.Client(base_url=stack.base, timeout=30) as client,
            client.stream(
                "GET", f"/games/{game_id}/live", headers={"Authorization": f"Bearer {tokens[0]}"}
            ) as response,
        ):
            assert response.status_code == 200
            try:
                for _ in response.iter_lines():
                    opened.set()
                    if closing.is_set():
                        return
            except httpx.TransportError:
                if not closing.is_set():  # the stack stopping with the stream still open is the end
                    raise

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    until(opened.is_set, "the live stream sends its first view")
    for _ in range(4):  # whichever process answers
        assert value(stack.scrape(), "tablestream_live_streams_open", kind="game") == 1
    closing.set()

    last: list[tuple[float, float, float]] = []

    def settled() -> dict[tuple[str, tuple[tuple[str, str], ...]], float] | None:
        found = stack.scrape()
        lagged = value(found, "tablestream_projection_lag_seconds_count")
        depth = value(found, "tablestream_queue_depth", queue="projections")
        # both of the pool's workers registered: the second may still be starting on a busy machine
        workers = value(found, "tablestream_workers", queue="projections")
        last[:] = [(lagged, depth, workers)]
        return found if lagged >= 1 and depth == 0 and workers >= 2 else None

    found = wait_until(
        settled,
        DEADLINE,
        "the projections' lag observed, the queue empty and both workers registered",
        details=lambda: f"last scrape: lag count, queue depth, workers = {last}",
    )
    assert value(found, "tablestream_commands_total", game="skull", outcome="ok") == moves
    assert sum(stack.per_process("tablestream_commands").values()) == moves
    assert value(found, "tablestream_http_requests_total", route="/games/{game_id}/commands", method="POST",
                 status="2xx") == moves  # fmt: skip
    assert value(found, "tablestream_drain_games_total") >= 1  # the consumer's games: no RQ job
    # at least the pool's two (a worker the pool replaced stays counted until its hash's time to live)
    assert value(found, "tablestream_workers", queue="projections") >= 2
    assert value(found, "tablestream_tables", status="running") == 1
    assert value(found, "tablestream_redis_round_trips_total", role="worker") > 0
    assert value(found, "tablestream_redis_round_trips_total", role="api") > 0
    assert not any(game_id in str(labels) for _, labels in found)

    families = {family_of(name) for name, _ in found} | {name.removesuffix("_total") for name, _ in found}
    missing = {name for name in named_metrics() if name not in families and family_of(name) not in families}
    assert missing == set(), f"named by deploy/ but not in /metrics: {sorted(missing)}"


def test_two_api_processes_count_a_client_s_rate_once_between_them(stack: Stack) -> None:
    """``serve --api-workers 2`` shares the rate limits through Redis: a client's login attempts
    (20 a minute) are counted once across both processes, not once in each; every request comes
    on a connection of its own, so the kernel hands them to either process."""
    codes = []
    for n in range(21):
        with stack.client() as client:
            answer = client.post("/accounts/login", json={"name": f"Nobody{n}", "password": "not a password"})
            codes.append(answer.status_code)
    assert codes == [401] * 20 + [429], codes
