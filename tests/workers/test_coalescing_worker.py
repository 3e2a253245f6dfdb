"""Coalesced hand-overs against a real Redis and the real worker process (``python -m workers.pool``,
its projection consumer a thread of it), killed with SIGKILL under load and started again: every
game's views still reach its head."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis

from services.history.folding import StateCache
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import HANDOVER
from services.store.queue import AppendNotifier, projection_queue
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from tests.support.waiting import wait_until
from tests.workers.test_coalescing import unprojected
from workers.lifecycle import bot_move

pytestmark = [pytest.mark.anyio, pytest.mark.redis]
GAMES = 8


class WorkerProcess:
    """``python -m workers.pool`` with two RQ workers and a fast sweeper, in its own process group
    (the pool's worker processes are its children: SIGKILL takes them all)."""

    def __init__(self, url: str, log: Path) -> None:
        self.url, self.log = url, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "workers.pool", "--redis-url", self.url, "--workers", "2",
                 "--sweep-seconds", "0.5"],
                stdout=out, stderr=out, start_new_session=True,
            )  # fmt: skip

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def worker(redis_server: EmbeddedRedis, real_redis: redis.Redis, tmp_path: Path) -> Iterator[WorkerProcess]:
    process = WorkerProcess(redis_server.url, tmp_path / "worker.log")
    try:
        yield process
    finally:
        process.kill()


async def test_a_worker_killed_under_load_and_restarted_brings_every_game_to_its_head(
    real_redis: redis.Redis, real_redis_async: aioredis.Redis, worker: WorkerProcess
) -> None:
    sync = real_redis
    store = EventStore(real_redis_async)
    commands = GameCommands(
        store, TokenStore(real_redis_async), AppendNotifier(store, projection_queue(sync)), StateCache()
    )
    games = []
    for _ in range(GAMES):
        game_id, _ = await commands.create("skull", 3, {"turn_seconds": 0})
        for seat in range(3):
            await commands.join(game_id, f"P{seat}", "")
        games.append(game_id)

    async def play(rounds: int) -> None:
        for _ in range(rounds):
            for game_id in games:
                folded = await commands.load(game_id)
                seats = folded.table.to_act(folded.state)
                if seats:
                    move = bot_move(folded, seats[0], await commands.seeds(game_id))
                    await commands.command(game_id, seats[0], f"m-{folded.version}", move, folded.version)

    checkpoints = SyncEventStore(sync).checkpoint
    worker.start()
    await play(2)
    wait_until(lambda: all(checkpoints(g) > 0 for g in games), 60, "the worker to project")
    await play(2)
    worker.kill()  # SIGKILL amid the batches these appends handed over
    await play(3)  # appends while no worker runs: handed over, nobody takes them
    assert sync.xlen(HANDOVER) > 0
    worker.start()
    await play(2)
    wait_until(lambda: unprojected(sync, games) == [], 60, "every game's views at the fold of its events")
    await play(1)  # and the hand-over still works after the repair
    wait_until(lambda: unprojected(sync, games) == [], 60, "the views of the next appends")
