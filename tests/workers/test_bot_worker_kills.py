"""A bot worker process killed for real (SIGKILL) at every step of a bot move, on a real Redis:
each table is played on by the worker pool that comes after it, the bot's move recorded exactly
once and the game going on, on tables without turn timers (no timer would ever wake them).

The kills are deterministic: ``tests/support/dying_worker.py`` is the production worker that kills
itself at one step (its job taken, started, its move chosen, appended, its job finished). A job a
killed worker had started holds a lease (``services.store.queue.LEASE_SECONDS`` from its start) that
only lapses with time: the sweeper queues such a move again after it, so this test waits that long
once, for all its tables together."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
import redis
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.serializers import JSONSerializer

from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import DIRTY
from services.store.queue import LEASE_SECONDS, bot_job_id, bot_queue
from tests.support.dying_worker import STEPS
from tests.support.waiting import wait_until
from tests.workers.test_lifecycle import _own_move, accepted, folded, records, run, table
from workers import lifecycle

pytestmark = [
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.soak(reason="waits out the 30 s lease of the moves killed workers had started, once"),
]


def python(*args: str) -> list[str]:
    return [sys.executable, *args]


ENV = {**os.environ, "PYTHONPATH": os.getcwd()}


def killed_at(url: str, step: str) -> None:
    """Start the dying worker and wait for its death at ``step``."""
    process = subprocess.Popen(
        python("-m", "tests.support.dying_worker", "--redis-url", url, "--die-at", step), env=ENV
    )
    try:
        assert process.wait(timeout=120) == -signal.SIGKILL, f"the worker was not killed at {step!r}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def bot_moves(sync: redis.Redis, game_id: str) -> list[int | None]:
    return [r.seat for r in records(sync, game_id) if r.kind == "bot"]


def job_status(sync: redis.Redis, job_id: str) -> str | None:
    try:
        return Job.fetch(job_id, connection=sync, serializer=JSONSerializer).get_status(refresh=True).value
    except NoSuchJobError:  # finished with result_ttl 0: gone
        return None


@pytest.fixture
def pool(redis_server: EmbeddedRedis) -> Iterator[None]:
    """The worker pool, started after the kills: its sweeper repairs what they left."""
    process = subprocess.Popen(
        python(
            "-m", "workers.pool", "--redis-url", redis_server.url, "--workers", "1", "--sweep-seconds", "0.2"
        ),
        env=ENV,
    )
    yield
    process.terminate()
    process.wait(timeout=30)


def test_a_bot_worker_killed_at_any_step_of_a_move_stalls_no_table_and_the_move_is_recorded_once(
    real_redis: redis.Redis, redis_server: EmbeddedRedis, request: pytest.FixtureRequest
) -> None:
    sync, wall = real_redis, lifecycle.wall_clock_ms
    tables: dict[str, str] = {}
    for step in STEPS:
        # Skull King, two seats, seat 1 a bot, no turn timer: both bid at once, the bot's job queued
        game_id = table(sync, wall, "skull-king", 2, 1, turn_seconds=0)  # type: ignore[arg-type]
        job_id = bot_job_id(game_id, SyncEventStore(sync).head(game_id), 1)
        assert bot_queue(sync).job_ids == [job_id]  # the only bot job: the dying worker takes it
        killed_at(redis_server.url, step)
        tables[step] = game_id
        status, moved = job_status(sync, job_id), bot_moves(sync, game_id)
        # what the kill left, as Redis shows it
        expected = {
            "taken": ("queued", []),  # in RQ's intermediate list, in no queue's list
            "started": ("started", []),
            "chosen": ("started", []),
            "appended": ("started", [1]),
            "finished": (None, [1]),
        }[step]
        assert (status, moved) == expected, step
        if step == "taken":
            assert sync.lpos(bot_queue(sync).intermediate_queue_key, job_id) is not None

    started = time.monotonic()
    request.getfixturevalue("pool")

    def repaired() -> bool:
        return all(
            bot_moves(sync, g) == [1] and sync.zscore(DIRTY, g) is None and 0 in to_act(g)
            for g in tables.values()
        )

    def to_act(game_id: str) -> list[int]:
        f = folded(sync, wall, game_id)  # type: ignore[arg-type]
        return f.table.to_act(f.state)

    def left() -> str:
        return ", ".join(f"{s}: bot moves {bot_moves(sync, g)}" for s, g in tables.items())

    wait_until(repaired, LEASE_SECONDS + 60, "every table's bot move, once", left)
    print(f"\n[bot kills] every table repaired {time.monotonic() - started:.1f} s after the pool started")

    # The games go on: the human bids, and the pool plays the bot's part until the human is awaited.
    for game_id in tables.values():
        head = SyncEventStore(sync).head(game_id)
        run(sync, wall, lambda c, g=game_id: _own_move(c, g, 0))  # type: ignore[arg-type]
        wait_until(
            lambda g=game_id, h=head: SyncEventStore(sync).head(g) > h and set(to_act(g)) == {0},
            60,
            "the human awaited alone again, the bot having played on",
            lambda g=game_id: (
                f"head {SyncEventStore(sync).head(g)}, to act {set(to_act(g))}, "
                f"records {[(r.kind, r.seat) for r in records(sync, g)][-4:]}"
            ),
        )
    for step, game_id in tables.items():
        assert bot_moves(sync, game_id)[0] == 1, step
        accepted(sync, game_id)  # every batch re-runs through the rules: no move twice, none out of turn
