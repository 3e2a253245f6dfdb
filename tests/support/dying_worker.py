"""A bot worker that is killed for real (SIGKILL, by itself) at one step of its first bot move.

    python -m tests.support.dying_worker --redis-url URL --die-at STEP

It is the production worker (``services.store.rq_workers.PipelinedWorker`` on the bots' queue, the
store configured as ``workers.pool`` configures it, the same job function): only the kill is
added, at a point no outside signal could hit reliably:

- ``taken``: RQ moved the job from the queue's list to its intermediate list (its status still
  says queued), before the worker registered an execution;
- ``started``: the job's status says started and its execution holds a lease, before the bot chose;
- ``chosen``: the bot's move is chosen, not yet appended;
- ``appended``: the move is in the game's stream, the job not yet marked finished;
- ``finished``: the job is finished, before the worker takes anything else.

The fault test ``tests/workers/test_bot_worker_kills.py`` kills one at each step.
"""

from __future__ import annotations

import argparse
import os
import signal
from collections.abc import Sequence
from typing import Any

import redis
from rq.job import Job
from rq.queue import Queue
from rq.serializers import JSONSerializer

from services.store.connection import topology
from services.store.queue import bot_queue
from services.store.rq_workers import PipelinedWorker
from workers import lifecycle
from workers.stores import configure

STEPS = ("taken", "started", "chosen", "appended", "finished")


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def dying_worker(step: str, connection: redis.Redis) -> PipelinedWorker:
    """The bots' worker, patched to be killed at ``step``."""

    class DyingWorker(PipelinedWorker):
        def prepare_execution(self, job: Job) -> Any:
            if step == "taken":
                die()
            return super().prepare_execution(job)

        def perform_job(self, job: Job, queue: Queue, execution: Any) -> bool:
            ok = super().perform_job(job, queue, execution)
            if step == "finished":
                die()
            return ok

    choose, play = lifecycle.bot_move, lifecycle.play_bot

    def bot_move(*args: Any) -> dict[str, Any]:
        if step == "started":
            die()
        move = choose(*args)
        if step == "chosen":
            die()
        return move

    def play_bot(game_id: str, version: int, seat: int) -> bool:
        done = play(game_id, version, seat)
        if step == "appended":
            die()
        return done

    lifecycle.bot_move = bot_move  # type: ignore[assignment]  # looked up by name at each call
    lifecycle.play_bot = play_bot  # type: ignore[assignment]  # RQ imports a job's function by name
    return DyingWorker([bot_queue(connection)], connection=connection, serializer=JSONSerializer)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--die-at", choices=STEPS, required=True)
    args = parser.parse_args(argv)
    configure(topology(args.redis_url, None, "no"))  # the jobs find the store as the pool's do
    connection = redis.Redis.from_url(args.redis_url)
    dying_worker(args.die_at, connection).work(logging_level="WARNING")
    return 1  # it only gets here if no job came: the test waits for its death


if __name__ == "__main__":
    raise SystemExit(main())
