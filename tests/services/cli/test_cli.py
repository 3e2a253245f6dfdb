"""``tablestream serve`` on its embedded default: starts everything, keeps games across restarts,
stops cleanly on SIGTERM; ``tablestream demo`` plays whole games through the real API."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis as redis_py
from starlette.testclient import TestClient

from domain.games import game_names
from services.api.app import create_app
from services.operating.config import Settings
from services.store.connection import connect_to
from services.store.embedded import free_port
from services.store.event_store import SyncEventStore
from services.store.queue import projection_queue
from tests.support.waiting import wait_until

pytestmark = pytest.mark.redis
DEADLINE = 30.0


def wait_for(condition: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    """Until ``condition`` holds (a server not answering yet counts as not yet)."""
    return wait_until(condition, deadline, what, ignoring=(httpx.TransportError,))


@contextmanager
def serving(data_dir: Path) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "TABLESTREAM_LOG_LEVEL": "warning"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: httpx.get(f"{base}/healthz", timeout=1).status_code == 200, "the API")
        yield base, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def test_serve_prints_its_url_and_data_keeps_games_across_a_restart_and_stops_cleanly(tmp_path: Path) -> None:
    with serving(tmp_path) as (base, process):
        game_id = httpx.post(f"{base}/games", json={"game": "skull", "players": 3}).json()["game_id"]
        for name in ("Ada", "Bo", "Cy"):
            httpx.post(f"{base}/games/{game_id}/players", json={"name": name}).raise_for_status()
        # the in-process worker projects the lobby without anyone asking
        wait_for(
            lambda: any(g["game_id"] == game_id for g in httpx.get(f"{base}/games").json()["games"]),
            "the projection worker to list the game",
        )
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        printed = process.stdout.read() if process.stdout else ""
        assert base in printed
        assert f"Data: {(tmp_path / 'redis').resolve()}" in printed  # where the games are kept
    with serving(tmp_path) as (base, _):
        view = httpx.get(f"{base}/games/{game_id}/view").json()
        assert view["status"] == "playing"
        assert [p["name"] for p in view["players"]] == ["Ada", "Bo", "Cy"]


def test_demo_plays_every_game_to_its_winners_through_the_http_api() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "services.cli", "demo", "--game", "all", "--seed", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("== winners:") == len(game_names())
    for game in game_names():
        assert f"== {game} " in run.stdout


def test_the_worker_pool_projects_queued_games_and_its_sweeper_finds_unpoked_ones(real_redis: Any) -> None:
    where = real_redis.connection_pool.connection_kwargs
    redis_url = f"redis://{where['host']}:{where['port']}/0"
    with TestClient(create_app(Settings(), connect_to(redis_url))) as client:
        poked = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        projection_queue(redis_py.Redis.from_url(redis_url)).empty()  # this one's pokes are lost
        unpoked = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        projection_queue(redis_py.Redis.from_url(redis_url)).empty()
        client.post(f"/games/{poked}/players", json={"name": "A"})  # a fresh poke for the first game
    store = SyncEventStore(real_redis)
    worker = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "worker", "--redis-url", redis_url, "--workers", "2",
         "--sweep-seconds", "0.2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        for game_id in (poked, unpoked):
            wait_for(lambda g=game_id: store.checkpoint(g) == store.head(g) > 0, f"projection of {game_id}")
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            assert worker.wait(30) == 0
        finally:  # none of its forked workers outlives the test, to take the next tests' jobs
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
