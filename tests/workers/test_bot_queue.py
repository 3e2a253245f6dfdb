"""Bot moves have a queue of their own (``services.store.queue.BOT_QUEUE``), and a worker pool keeps
one worker off it (``workers.pool.layout``): a strong bot's move never holds up a projection or a
timer. On a real Redis, with an injected clock."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Queue, Worker
from rq.job import JobStatus
from rq.serializers import JSONSerializer
from rq.worker_pool import WorkerData

from services.operating.config import Settings
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import HANDOVER
from services.store.queue import (
    BOT_QUEUE,
    LIFECYCLE_QUEUE,
    QUEUE_NAME,
    REVIEW_QUEUE,
    bot_queue,
    enqueue_bot,
    lifecycle_queue,
    queue_figures,
    review_queue,
)
from services.store.rq_workers import PipelinedWorker, run_burst
from tests.support.jobs import RELEASE_KEY, hold_until
from tests.workers.conftest import FakeClock
from tests.workers.test_lifecycle import accepted, records, table, wait_for
from workers import lifecycle
from workers.lifecycle import tick
from workers.pool import (
    BOT_NICENESS,
    BOTS_ONLY,
    EVERY_QUEUE,
    NO_BOTS,
    REVIEW_NICENESS,
    REVIEWS_ONLY,
    WITH_BOTS,
    LayoutPool,
    layout,
    niceness,
)

pytestmark = pytest.mark.redis


def work(sync: redis.Redis, names: Sequence[str]) -> None:
    """One worker taking ``names`` runs their jobs (and those they queue on them) until they are empty."""
    queues = [Queue(name, connection=sync, serializer=JSONSerializer) for name in names]
    run_burst(sync, queues, logging_level="WARNING")


def bot_moves(sync: redis.Redis, game_id: str) -> list[str]:
    return [r.id for r in records(sync, game_id) if r.kind == "bot"]


def test_the_layouts_keep_one_worker_of_a_pool_off_the_bots_and_never_leave_a_lone_worker_without_them() -> (
    None
):
    assert EVERY_QUEUE == (QUEUE_NAME, LIFECYCLE_QUEUE, BOT_QUEUE, REVIEW_QUEUE)
    assert NO_BOTS == (QUEUE_NAME, LIFECYCLE_QUEUE) and WITH_BOTS == (QUEUE_NAME, LIFECYCLE_QUEUE, BOT_QUEUE)
    assert BOTS_ONLY == (BOT_QUEUE,) and REVIEWS_ONLY == (REVIEW_QUEUE,)
    assert layout(1) == [EVERY_QUEUE] and layout(0) == [EVERY_QUEUE]
    assert layout(2) == [NO_BOTS, WITH_BOTS, REVIEWS_ONLY]
    assert layout(3) == [NO_BOTS, WITH_BOTS, WITH_BOTS, REVIEWS_ONLY]
    assert layout(2, "all") == [EVERY_QUEUE] * 2
    assert layout(2, "none") == [NO_BOTS] * 2
    assert layout(1, "only") == [BOTS_ONLY, REVIEWS_ONLY]


def test_no_worker_that_takes_bot_moves_takes_reviews_unless_asked_to_or_alone() -> None:
    for workers in (2, 3, 5):
        for bots in ("auto", "only", "none"):
            lanes = layout(workers, bots)
            assert not [lane for lane in lanes if BOT_QUEUE in lane and REVIEW_QUEUE in lane], (workers, bots)
            if bots != "none":
                assert lanes.count(REVIEWS_ONLY) == 1


def test_a_pool_worker_that_searches_for_bots_beside_a_lane_without_them_runs_at_a_lower_cpu_priority() -> (
    None
):
    assert [niceness(q, layout(2)) for q in layout(2)] == [0, BOT_NICENESS, REVIEW_NICENESS]
    assert [niceness(q, layout(2, "only")) for q in layout(2, "only")] == [BOT_NICENESS] * 2 + [19]
    assert niceness(REVIEWS_ONLY, layout(2), lower=0) == REVIEW_NICENESS == 19
    assert [niceness(q, layout(2, "all")) for q in layout(2, "all")] == [0, 0]
    assert [niceness(q, layout(2, "none")) for q in layout(2, "none")] == [0, 0]
    assert niceness(EVERY_QUEUE, layout(1)) == 0
    with pytest.raises(ValueError, match="--bots must be one of"):
        layout(2, "some")


def test_a_bot_move_is_queued_on_the_bots_queue_and_nothing_on_the_lifecycle_queue(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0)  # seat 1 is a bot; both bid at once
    head = SyncEventStore(sync).head(game_id)
    assert bot_queue(sync).job_ids == [f"bot-{game_id}-{head}-1"]
    assert lifecycle_queue(sync).job_ids == []
    depth = queue_figures(sync).depth
    assert depth == {"projections": 0, "lifecycle": 0, "bots": 1, "review": 0}  # handed over, not queued
    assert game_id.encode() in {fields[b"g"] for _, fields in sync.xrange(HANDOVER)}


def test_a_worker_without_bots_takes_projections_and_timers_and_leaves_the_bot_moves_to_a_bot_worker(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=10)  # seat 1 is a bot
    store = SyncEventStore(sync)
    head = store.head(game_id)
    fast, bots = layout(2)[0], layout(1, "only")[0]
    work(sync, fast)
    assert store.checkpoint(game_id) == head  # projected
    assert bot_queue(sync).job_ids == [f"bot-{game_id}-{head}-1"] and bot_moves(sync, game_id) == []

    work(sync, bots)
    assert bot_moves(sync, game_id) == [f"bot-{head}-1"] and bot_queue(sync).job_ids == []
    moved = store.head(game_id)
    assert moved > head and store.checkpoint(game_id) == head  # the bot worker projects nothing
    work(sync, fast)
    assert store.checkpoint(game_id) == moved

    clock.advance(10)
    assert [g for g, _ in tick(store, lifecycle_queue(sync), clock())] == [game_id]
    work(sync, fast)
    assert [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "timeout"] == [("timeout", 0)]
    assert store.checkpoint(game_id) == store.head(game_id)
    accepted(sync, game_id)


def test_a_bot_move_an_older_process_queued_on_the_lifecycle_queue_is_still_played(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0)
    head = SyncEventStore(sync).head(game_id)
    bot_queue(sync).empty()
    assert enqueue_bot(lifecycle_queue(sync), game_id, head, 1) is True  # as before the bots' queue
    work(sync, NO_BOTS)  # any worker on the lifecycle queue runs it: the same job function
    assert bot_moves(sync, game_id) == [f"bot-{head}-1"]
    accepted(sync, game_id)


def test_a_pool_worker_started_in_place_of_a_dead_one_takes_the_dead_one_s_queues(sync: redis.Redis) -> None:
    pool = LayoutPool(layout(3), connection=sync, worker_class=PipelinedWorker, serializer=JSONSerializer)
    for name in ("a", "b", "c"):
        process = pool.get_worker_process(name, burst=True)
        pool.worker_dict[name] = WorkerData(name=name, pid=0, process=process)
    assert pool.slots == {"a": 0, "b": 1, "c": 2}
    assert "queues projections,lifecycle)" in pool.worker_dict["a"].process.name
    del pool.worker_dict["a"]  # the worker without bots died
    replacement = pool.get_worker_process("d", burst=True)
    assert pool.slots == {"b": 1, "c": 2, "d": 0}
    assert "queues projections,lifecycle)" in replacement.name


@contextmanager
def worker_process(
    redis_server: EmbeddedRedis, sync: redis.Redis, **env: str
) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m workers.pool --workers 2`` on the test's Redis, with ``env`` added; stopped (and
    its exit checked) once its three workers wait for jobs."""
    environment = {**os.environ, "PYTHONPATH": os.getcwd(), **env}
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.pool", "--redis-url", redis_server.url, "--workers", "2"],
        env=environment,
        start_new_session=True,  # its forked workers in its group: none outlives the test (below)
    )
    try:
        wait_for(lambda: len(Worker.all(connection=sync)) == 3, 60)
        yield process
        # stopped once all wait for jobs: RQ's pool can miss a SIGTERM that lands while a worker
        # is still starting (its scheduler), which a deployment restarting at once never sees
        wait_for(lambda: {w.get_state() for w in Worker.all(connection=sync)} == {"idle"}, 60)
    finally:
        process.terminate()
        try:
            stopped = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()  # never left behind to take the next tests' jobs
            process.wait()
            raise
        finally:  # a forked worker still ending its shutdown could take the next test's job
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
    assert stopped == 0


def test_the_worker_process_of_two_workers_registers_one_without_bots_one_with_them_and_a_review_lane(
    redis_server: EmbeddedRedis, sync: redis.Redis
) -> None:
    with worker_process(redis_server, sync, TABLESTREAM_BOT_NICENESS="7") as process:
        assert sorted(w.queue_names() for w in Worker.all(connection=sync)) == sorted(
            [list(NO_BOTS), list(WITH_BOTS), list(REVIEWS_ONLY)]
        )
        niceness = {
            tuple(w.queue_names()): int(Path(f"/proc/{w.pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
            for w in Worker.all(connection=sync)
        }
        own = os.getpriority(os.PRIO_PROCESS, process.pid)
        # TABLESTREAM_BOT_NICENESS for the bots' worker; the lowest priority for the review lane
        assert niceness == {NO_BOTS: own, WITH_BOTS: min(own + 7, 19), REVIEWS_ONLY: 19}
        workers = queue_figures(sync).workers
        assert workers == {"projections": 2, "lifecycle": 2, "bots": 1, "review": 1}


def test_a_bot_moves_while_a_review_holds_its_worker(
    redis_server: EmbeddedRedis, sync: redis.Redis, clock: FakeClock
) -> None:
    with worker_process(redis_server, sync, TABLESTREAM_BOT_NICENESS="0"):
        review = review_queue(sync).enqueue(hold_until, RELEASE_KEY)  # a review that takes as long as we like
        try:
            wait_for(lambda: review.get_status(refresh=True) == JobStatus.STARTED, 60)
            game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0)  # seat 1, a bot, bids now
            head = SyncEventStore(sync).head(game_id)
            wait_for(lambda: bot_moves(sync, game_id) == [f"bot-{head}-1"], 60)
            assert review.get_status(refresh=True) == JobStatus.STARTED  # the review still holds its worker
        finally:
            sync.set(RELEASE_KEY, 1)
        wait_for(lambda: review.get_status(refresh=True) == JobStatus.FINISHED, 60)
        accepted(sync, game_id)


def test_a_bot_niceness_past_what_the_kernel_allows_is_refused_with_its_range() -> None:
    assert Settings.from_env({}).bot_niceness == BOT_NICENESS == 10
    assert Settings.from_env({"TABLESTREAM_BOT_NICENESS": "0"}).bot_niceness == 0
    for wrong in ("20", "-1"):
        with pytest.raises(ValueError, match=r"TABLESTREAM_BOT_NICENESS=.*must be from 0 to 19"):
            Settings.from_env({"TABLESTREAM_BOT_NICENESS": wrong})
    assert niceness(BOTS_ONLY, layout(2), lower=3) == 3


@pytest.mark.parametrize(("game", "players"), [("six-nimmt", 4), ("skull-king", 4)])
def test_bots_choosing_at_once_cost_one_job_per_move_and_never_queue_each_other_again(
    sync: redis.Redis, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, game: str, players: int
) -> None:
    """Every seat of the table is a bot and they all choose at once (6 nimmt!'s cards, Skull King's
    bids): each batch appended by one bot's move used to queue every other bot again at the new
    version, whose jobs at the old version then found the game moved on (4.8 jobs per move at a
    table of strong bots in the operator's drill). One job per move is the bound: a bot's command
    carries the version it was chosen at, so of several bots queued at one version only one can
    move, and the next is queued by that move's batch."""
    runs: list[tuple[int, int]] = []
    real_act = lifecycle.act

    async def counted(commands: Any, game_id: str, version: int, seat: int) -> bool:
        runs.append((version, seat))
        return await real_act(commands, game_id, version, seat)

    monkeypatch.setattr(lifecycle, "act", counted)
    game_id = table(sync, clock, game, players, 0)
    assert len(bot_queue(sync).job_ids) == 1  # the first bot of the round, not all of them
    work(sync, EVERY_QUEUE)  # the whole game: each job queues the next
    moves = bot_moves(sync, game_id)
    assert len(moves) >= 12
    assert len(runs) == len(moves), (len(runs), len(moves))
    accepted(sync, game_id)
