"""Timers, timeouts and bots on a real Redis: the timer loop, the RQ jobs through the write side,
exactly-once firing, and whole games played by bots (also with the worker process running).

Time is driven by an injected clock (``FakeClock``), never by sleeping; waiting on the worker
process polls a condition with a deadline."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest
import redis
from rq import Queue, SimpleWorker
from rq.executions import ExecutionRegistry
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer

from services.errors import AppError
from services.history.export import build_export
from services.history.folding import Folded, StateCache
from services.history.records import decode_stored
from services.history.replay import replay
from services.history.verify import verify_export
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import DIRTY, TIMERS, game_keys
from services.store.queue import (
    AppendNotifier,
    bot_queue,
    enqueue_bot,
    enqueue_settle,
    enqueue_timer,
    lifecycle_queue,
    projection_queue,
)
from services.store.rq_workers import run_burst
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from services.table.queries import GameQueries
from tests.support.waiting import wait_until
from tests.workers.conftest import FakeClock
from workers import lifecycle
from workers.lifecycle import bot_move, commands_for, tick
from workers.projector import Projector
from workers.sweeper import sweep

pytestmark = pytest.mark.redis
T = TypeVar("T")


def run(sync: redis.Redis, clock: FakeClock, work: Callable[[GameCommands], Awaitable[T]]) -> T:
    """Run write-side calls as a separate process would: own loop, own async client."""

    async def main() -> T:
        aclient = lifecycle.default_async_client(sync)
        try:
            return await work(commands_for(aclient, sync, clock))
        finally:
            await aclient.aclose()

    return asyncio.run(main())


def drain(sync: redis.Redis) -> None:
    """Run every queued lifecycle, bot and projection job, and the jobs they queue, to completion."""
    run_burst(sync, [lifecycle_queue(sync), bot_queue(sync), projection_queue(sync)], logging_level="WARNING")


def folded(sync: redis.Redis, clock: FakeClock, game_id: str) -> Folded:
    return run(sync, clock, lambda c: c.load(game_id))


def table(sync: redis.Redis, clock: FakeClock, game: str, players: int, humans: int, **options: Any) -> str:
    async def work(c: GameCommands) -> str:
        game_id, _ = await c.create(game, players, options)
        for seat in range(humans):
            await c.join(game_id, f"P{seat}", f"cs{seat}")
        if humans < players:
            await c.fill_with_bots(game_id)
        return game_id

    return run(sync, clock, work)


def records(sync: redis.Redis, game_id: str) -> list[Any]:
    entries = SyncEventStore(sync).read(game_id)
    return [r for r in (decode_stored(e.data).command for e in entries) if r is not None]


def accepted(sync: redis.Redis, game_id: str) -> None:
    """The verifier's verdict: every batch re-runs through the rules; a finished game's export
    verifies clean (a running game's unrevealed seeds leave chance outcomes unchecked)."""
    entries = SyncEventStore(sync).read(game_id)
    rp = replay(entries)
    assert [b.error for b in rp.batches if b.error] == []
    if rp.finished:
        report = verify_export(build_export(entries))
        assert report.ok, report.render()


def test_an_idle_seat_gets_its_default_action_recorded_as_a_timeout_and_the_verifier_accepts_it(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=30, takeover_after=1)
    store = SyncEventStore(sync)
    armed = store.read_timer(game_id)
    assert armed["kind"] == "turn" and armed["seats"] == "0,1"
    assert int(armed["deadline"]) == clock() + 30_000
    assert tick(store, lifecycle_queue(sync), clock()) == []
    clock.advance(30)
    assert tick(store, lifecycle_queue(sync), clock()) == [(game_id, int(armed["version"]))]
    drain(sync)
    kinds = [(r.kind, r.seat) for r in records(sync, game_id)]
    assert [k for k in kinds if k[0] not in ("create", "join")][:2] == [("timeout", 0), ("timeout", 1)]
    assert folded(sync, clock, game_id).state.bots == frozenset({0, 1})  # takeover_after=1
    for _ in range(1000):
        drain(sync)
        if folded(sync, clock, game_id).state.status == "finished":
            break
    accepted(sync, game_id)  # finished: the whole export verifies
    page = run(sync, clock, lambda c: GameQueries(c.store).events(game_id, _spectator(), 0, 1000, "en"))
    timed_out = [e for e in page["events"] if e["type"] == "turn_timed_out"]
    assert timed_out and all(e["by"] == "timeout" for e in timed_out)
    assert all("text" in e for e in page["events"])


def _spectator() -> Any:
    from services.table.callers import Caller

    return Caller("spectator")


def test_a_seat_missing_takeover_after_timeouts_is_then_played_by_a_bot(
    sync: redis.Redis, clock: FakeClock
) -> None:
    # 6 nimmt!: every turn awaits every seat, so seat 0 is the one left to time out on each turn
    game_id = table(sync, clock, "six-nimmt", 3, 3, turn_seconds=10, takeover_after=2)
    store = SyncEventStore(sync)
    for _ in range(200):
        state = folded(sync, clock, game_id).state
        if 0 in state.bots or state.status != "playing":
            break
        to_act = folded(sync, clock, game_id).table.to_act(state)
        others = [seat for seat in to_act if seat != 0 and seat not in state.bots]
        if others:  # the others move first, so that only seat 0 is left to time out
            run(sync, clock, lambda c, s=others[0]: _own_move(c, game_id, s))
        elif 0 in to_act:
            clock.advance(10)
            tick(store, lifecycle_queue(sync), clock())
            drain(sync)
        else:
            drain(sync)
    state = folded(sync, clock, game_id).state
    assert 0 in state.bots
    assert [r.kind for r in records(sync, game_id) if r.seat == 0].count("timeout") >= 2
    accepted(sync, game_id)


async def _own_move(c: GameCommands, game_id: str, seat: int) -> None:
    f = await c.load(game_id)
    await c.command(
        game_id, seat, f"own-{f.version}-{seat}", bot_move(f, seat, await c.seeds(game_id)), f.version
    )


def test_a_timer_racing_a_real_command_appends_exactly_one_of_them(
    sync: redis.Redis, clock: FakeClock
) -> None:
    rng = random.Random(7)
    for round_ in range(25):
        game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=5)
        head = folded(sync, clock, game_id)
        clock.advance(5)

        async def race(
            c: GameCommands, head: Folded = head, game_id: str = game_id, round_: int = round_
        ) -> list[str]:
            gate = asyncio.Event()
            own = bot_move(head, 0, await c.seeds(game_id))

            async def timer() -> str:
                await gate.wait()
                for _ in range(rng.randrange(3)):
                    await asyncio.sleep(0)
                return ",".join(await lifecycle.fire(c, game_id, head.version, clock))

            async def player() -> str:
                await gate.wait()
                for _ in range(rng.randrange(3)):
                    await asyncio.sleep(0)
                try:
                    await c.command(game_id, 0, f"own-{round_}", own, None)
                except AppError as refused:
                    return refused.code
                return "ok"

            tasks = [asyncio.create_task(t()) for t in (timer, timer, player)]
            gate.set()
            return list(await asyncio.gather(*tasks))

        run(sync, clock, race)
        seat0 = [r for r in records(sync, game_id) if r.seat == 0]
        assert len(seat0) == 1, (round_, [(r.kind, r.id) for r in seat0])
        accepted(sync, game_id)


@pytest.mark.parametrize(("game", "players"), [("skull", 3), ("six-nimmt", 4), ("skull-king", 3)])
def test_bots_play_a_whole_game_to_the_end_through_rq_jobs(
    sync: redis.Redis, clock: FakeClock, game: str, players: int
) -> None:
    game_id = table(sync, clock, game, players, 0)
    for _ in range(2000):
        drain(sync)
        if folded(sync, clock, game_id).state.status == "finished":
            break
    assert folded(sync, clock, game_id).state.status == "finished"
    assert {r.kind for r in records(sync, game_id)} == {"create", "bots", "bot"}
    accepted(sync, game_id)


def test_a_worker_s_bot_jobs_share_one_event_loop_and_one_connection_pool(
    sync: redis.Redis, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = table(sync, clock, "skull-king", 3, 0)
    loops: set[int] = set()
    act = lifecycle.act

    async def watched(commands: GameCommands, game_id: str, version: int, seat: int) -> bool:
        loops.add(id(asyncio.get_running_loop()))
        return await act(commands, game_id, version, seat)

    monkeypatch.setattr(lifecycle, "act", watched)
    connections = int(sync.info("stats")["total_connections_received"])
    run_burst(
        sync,
        [lifecycle_queue(sync), bot_queue(sync), projection_queue(sync)],
        max_jobs=40,
        logging_level="WARNING",
    )  # one worker process's jobs
    moves = [r for r in records(sync, game_id) if r.kind == "bot"]
    assert len(moves) >= 10
    assert len(loops) == 1
    # the async pool's connections (a few, reused by every job), the worker's: not one per job
    assert int(sync.info("stats")["total_connections_received"]) - connections < len(moves) // 2


@pytest.fixture
def pool(redis_server: EmbeddedRedis, real_redis: redis.Redis) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.pool", "--redis-url", redis_server.url, "--workers", "1"], env=env
    )
    yield process
    process.terminate()
    process.wait(timeout=30)


def wait_for(condition: Callable[[], bool], seconds: float) -> None:
    wait_until(condition, seconds, "the condition")


@pytest.mark.parametrize(("game", "players"), [("skull", 3), ("six-nimmt", 4), ("skull-king", 3)])
def test_a_leaving_seat_is_taken_over_and_the_game_ends_normally_with_the_worker_pool_running(
    sync: redis.Redis, pool: subprocess.Popen[bytes], game: str, players: int
) -> None:
    wall = FakeClock()
    game_id = table(sync, wall, game, players, 1)
    run(sync, wall, lambda c: c.leave(game_id, 0))
    wait_for(lambda: folded(sync, wall, game_id).state.status == "finished", 180)
    state = folded(sync, wall, game_id).state
    assert 0 in state.bots and 0 in state.left
    accepted(sync, game_id)


def crashed_commands(aclient: Any, sync: redis.Redis) -> GameCommands:
    """The write side of an API process that dies right after each append and its notification,
    before arming the timer or queueing bots (as if its ``Lifecycle`` never ran)."""
    store = EventStore(aclient)
    notifier = AppendNotifier(store, projection_queue(sync))
    return GameCommands(store, TokenStore(aclient), notifier, StateCache())


def crash_after_append(sync: redis.Redis, game_id: str, seat: int) -> int:
    """``seat`` plays its bot's move through ``crashed_commands``; returns the new head."""

    async def main() -> int:
        aclient = lifecycle.default_async_client(sync)
        try:
            c = crashed_commands(aclient, sync)
            f = await c.load(game_id)
            move = bot_move(f, seat, await c.seeds(game_id))
            outcome = await c.command(game_id, seat, f"crash-{f.version}", move, f.version)
            return outcome.version
        finally:
            await aclient.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize("left_behind", ["the previous batch's timer", "no timer at all"])
def test_a_batch_whose_process_died_before_arming_its_timer_gets_it_from_the_sweeper_and_times_out(
    sync: redis.Redis, clock: FakeClock, left_behind: str
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=10)
    store = SyncEventStore(sync)
    before = store.read_timer(game_id)
    head = crash_after_append(sync, game_id, 0)  # seat 0 bids; seat 1 is still awaited
    if left_behind == "no timer at all":
        sync.delete(game_keys(game_id).timer)
    drain(sync)  # the projection reaches the head, but the game stays marked: its timer is behind
    assert store.checkpoint(game_id) == head
    assert sync.zscore(DIRTY, game_id) is not None
    clock.advance(10)
    tick(store, lifecycle_queue(sync), clock())  # a timer left from before fires nothing for the head
    drain(sync)
    assert [r.kind for r in records(sync, game_id)].count("timeout") == 0

    swept = sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0)
    assert swept.unsettled == [game_id] and swept.lagging == []
    drain(sync)  # the settle job arms the timer for the head
    armed = store.read_timer(game_id)
    assert (int(armed["version"]), armed["kind"], armed["seats"]) == (head, "turn", "1")
    if left_behind == "no timer at all":  # a fresh turn from the repair
        assert int(armed["deadline"]) == clock() + 10_000
    else:  # seat 1 was already awaited: it keeps the deadline it had
        assert armed["deadline"] == before["deadline"]
    clock.advance(10)
    assert tick(store, lifecycle_queue(sync), clock()) == [(game_id, head)]
    drain(sync)
    assert [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "timeout"] == [("timeout", 1)]
    assert sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0).unsettled == []
    assert sync.zscore(DIRTY, game_id) is None  # settled: the mark is gone
    accepted(sync, game_id)


def test_a_game_whose_timer_is_armed_for_its_head_is_not_kept_marked_nor_settled_again(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=10)
    run(sync, clock, lambda c: _own_move(c, game_id, 0))  # a live process: arms, then announces
    drain(sync)
    store = SyncEventStore(sync)
    assert sync.zscore(DIRTY, game_id) is None
    assert int(store.read_timer(game_id)["version"]) == store.head(game_id)
    assert run(sync, clock, lambda c: lifecycle.settle(c, game_id, store.head(game_id))) is False


def test_a_command_arms_the_timer_of_its_head_in_its_own_append_and_indexes_its_deadline(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=10)
    store = SyncEventStore(sync)
    timers = [store.read_timer(game_id)]
    for seat in (0, 1):
        clock.advance(3)
        run(sync, clock, lambda c, seat=seat: _own_move(c, game_id, seat))  # type: ignore[misc]
        timer = store.read_timer(game_id)
        assert int(timer["version"]) == store.head(game_id)  # never behind, not even before the drain
        indexed = sync.zscore(TIMERS, game_id)
        assert indexed is not None and indexed <= int(timer["deadline"])  # never later: it wakes the loop
        timers.append(timer)
    # seat 0 bid while seat 1 was still awaited: seat 1 kept its deadline; both bids opened the trick
    assert (timers[0]["seats"], timers[1]["seats"]) == ("0,1", "1")
    assert timers[1]["deadline"] == timers[0]["deadline"]
    assert int(timers[2]["deadline"]) == clock() + 10_000


def test_a_later_deadline_is_not_written_to_the_index_by_the_append_and_the_timer_loop_moves_it_on(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=10)
    store = SyncEventStore(sync)
    opened = int(store.read_timer(game_id)["deadline"])
    for seat in (0, 1):
        clock.advance(3)
        run(sync, clock, lambda c, seat=seat: _own_move(c, game_id, seat))  # type: ignore[misc]
    drain(sync)
    deadline = int(store.read_timer(game_id)["deadline"])
    assert deadline > opened and sync.zscore(TIMERS, game_id) == opened  # the earlier entry stays
    clock.advance(5)  # past the indexed entry, before the timer's deadline
    assert opened <= clock() < deadline
    assert tick(store, lifecycle_queue(sync), clock()) == []  # nothing fired: the entry moved on
    assert sync.zscore(TIMERS, game_id) == deadline
    clock.advance(10)
    assert tick(store, lifecycle_queue(sync), clock()) == [(game_id, store.head(game_id))]


class Unannounced:
    """A notifier that loses every announcement (the process died right after its appends)."""

    async def __call__(self, game_id: str, poke: bool, deadline: int | None) -> None:
        return None


def test_a_timer_whose_index_entry_was_lost_with_its_announcement_is_indexed_by_the_projection(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=10)

    async def silent_move(c: GameCommands) -> None:
        c.notify = Unannounced()
        await _own_move(c, game_id, 0)

    clock.advance(4)
    sync.zadd(TIMERS, {game_id: clock() + 600_000})  # an entry left late (an expiry) must come earlier
    run(sync, clock, silent_move)
    store = SyncEventStore(sync)
    deadline = int(store.read_timer(game_id)["deadline"])
    swept = sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0)
    assert swept.lagging == [game_id]
    drain(sync)
    assert sync.zscore(TIMERS, game_id) == deadline
    sync.zadd(TIMERS, {game_id: deadline - 5_000})  # an earlier entry is left as it is: it wakes early
    Projector(store).catch_up(game_id)
    assert sync.zscore(TIMERS, game_id) == deadline - 5_000
    clock.advance(10)
    assert tick(store, lifecycle_queue(sync), clock()) == [(game_id, store.head(game_id))]


def kill_worker_holding(sync: redis.Redis, queue: Queue, started: bool) -> None:
    """A bot worker takes the queue's first job as RQ's does (into the queue's intermediate list)
    and is killed: before it started the job, or after (its execution's heartbeat deadline then
    lapses, as a dead worker's does)."""
    job_id = sync.lmove(queue.key, queue.intermediate_queue_key).decode()
    if not started:
        return
    worker = SimpleWorker([queue], connection=sync, serializer=JSONSerializer)
    job = Job.fetch(job_id, connection=sync, serializer=JSONSerializer)
    execution = worker.prepare_execution(job)
    worker.prepare_job_execution(job, remove_from_intermediate_queue=True)
    assert job.get_status() == JobStatus.STARTED
    sync.zadd(ExecutionRegistry(job_id, connection=sync).key, {execution.id: 1})  # long past


MISHAPS = ["lost", "failed", "taken by a killed worker", "started by a killed worker"]


@pytest.mark.parametrize("mishap", MISHAPS)
def test_a_bot_whose_move_job_was_lost_or_failed_is_queued_again_by_the_sweeper_on_a_table_without_timers(
    sync: redis.Redis, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, mishap: str
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0)  # seat 1 is a bot; both bid at once
    store = SyncEventStore(sync)
    head = store.head(game_id)
    assert bot_queue(sync).job_ids == [f"bot-{game_id}-{head}-1"] and lifecycle_queue(sync).job_ids == []
    if mishap == "lost":
        bot_queue(sync).empty()  # e.g. a Redis restart that lost the queue
    elif mishap.endswith("killed worker"):  # the job's status still says queued, or started
        kill_worker_holding(sync, bot_queue(sync), started=mishap.startswith("started"))
        assert bot_queue(sync).job_ids == []
    else:

        def broken(folded: Folded, seat: int, seeds: object) -> dict[str, Any]:
            raise ConnectionError("the bot's process lost Redis mid-move")

        monkeypatch.setattr(lifecycle, "bot_move", broken)
    drain(sync)
    monkeypatch.undo()
    assert store.checkpoint(game_id) == head  # projected, but the bot has not moved:
    marked = sync.zscore(DIRTY, game_id)
    assert marked is not None  # the game stays marked for the sweeper
    assert [r.kind for r in records(sync, game_id)].count("bot") == 0

    clock.advance(1)
    swept = sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0)
    assert swept.unsettled == [game_id] and swept.lagging == []
    touched = sync.zscore(DIRTY, game_id)
    assert touched is not None and touched >= marked  # marked anew: a repair under way is not lag
    assert lifecycle_queue(sync).job_ids == [f"settle-{game_id}-{head}"]
    run_burst(
        sync, [lifecycle_queue(sync)], logging_level="WARNING"
    )  # the settle job alone: it queues the bot's move again, on the bots' queue (a failed one: its own)
    assert bot_queue(sync).job_ids == [f"bot-{game_id}-{head}-1"] and lifecycle_queue(sync).job_ids == []
    drain(sync)  # the move is played
    bot_moves = [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "bot"]
    assert bot_moves == [("bot", 1)]
    assert sync.zscore(DIRTY, game_id) is None  # only the human is awaited now: settled
    assert sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0).unsettled == []
    accepted(sync, game_id)


def test_a_bot_whose_move_job_waits_in_a_busy_queue_gets_no_repair_from_the_sweeper(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0)  # seat 1 is a bot
    store = SyncEventStore(sync)
    head = store.head(game_id)
    queue = bot_queue(sync)
    assert queue.job_ids == [f"bot-{game_id}-{head}-1"]
    Projector(store).catch_up(game_id)  # projected; the bot's job still waits its turn
    assert sync.zscore(DIRTY, game_id) is not None
    clock.advance(1)
    for _ in range(3):
        swept = sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0)
        assert swept.unsettled == [] and swept.lagging == []
        assert queue.job_ids == [f"bot-{game_id}-{head}-1"]
        assert lifecycle_queue(sync).job_ids == []  # no settle job for it
        assert sync.zscore(DIRTY, game_id) is not None  # looked at again after the grace
    drain(sync)
    assert [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "bot"] == [("bot", 1)]
    accepted(sync, game_id)


def test_a_failed_bot_job_can_be_queued_again_on_its_own_queue_but_a_queued_one_only_once(
    sync: redis.Redis, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0)
    head = SyncEventStore(sync).head(game_id)
    queue = bot_queue(sync)
    assert enqueue_bot(queue, game_id, head, 1) is False  # already queued by the write side
    monkeypatch.setattr(lifecycle, "bot_move", lambda folded, seat, seeds: 1 / 0)
    drain(sync)
    monkeypatch.undo()
    assert queue.failed_job_registry.get_job_ids() == [f"bot-{game_id}-{head}-1"]
    assert enqueue_bot(queue, game_id, head, 1) is True  # the failed job is queued again
    assert enqueue_bot(queue, game_id, head, 1) is False
    assert queue.failed_job_registry.get_job_ids() == []
    assert queue.job_ids == [f"bot-{game_id}-{head}-1"]
    drain(sync)
    assert [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "bot"] == [("bot", 1)]


def test_timer_and_settle_jobs_go_before_the_bot_moves_an_older_process_left_in_the_lifecycle_queue(
    sync: redis.Redis,
) -> None:
    """A strong bot's move holds a worker for up to its CPU cap: a turn timer (or a settle job)
    queued while moves queued on the lifecycle queue (before bots had a queue of their own) wait
    runs before those moves, not after them all."""
    queue = lifecycle_queue(sync)
    for n in range(3):
        assert enqueue_bot(queue, f"bots-{n}", 7, 1) is True
    assert enqueue_timer(queue, "people", 12) is True
    assert enqueue_settle(queue, "other", 5) is True
    assert enqueue_timer(queue, "people", 12) is False  # still queued once
    assert queue.job_ids == [
        "settle-other-5",
        "timer-people-12",
        "bot-bots-0-7-1",
        "bot-bots-1-7-1",
        "bot-bots-2-7-1",
    ]


def test_the_worker_process_arms_the_timer_of_a_game_left_without_one_and_the_seat_times_out(
    sync: redis.Redis, redis_server: EmbeddedRedis
) -> None:
    wall = lifecycle.wall_clock_ms
    game_id = table(sync, wall, "skull", 3, 3, turn_seconds=1)  # type: ignore[arg-type]
    head = crash_after_append(sync, game_id, 0)  # seats 1 and 2 still have to place a disc
    sync.delete(game_keys(game_id).timer)
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.pool", "--redis-url", redis_server.url, "--workers", "1",
         "--sweep-seconds", "0.2"],
        env=env,
    )  # fmt: skip
    try:
        wait_for(lambda: any(r.kind == "timeout" for r in records(sync, game_id)), 30)
    finally:
        process.terminate()
        process.wait(timeout=30)
    print(f"\n[timers] a game left without a timer timed out {time.monotonic() - started:.1f} s later")
    timed_out = [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "timeout"]
    assert timed_out[0] == ("timeout", 1)
    assert int(SyncEventStore(sync).read_timer(game_id)["version"]) > head
    accepted(sync, game_id)


def test_racing_enqueues_of_one_timer_job_queue_it_once_and_it_can_be_queued_again_once_done(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=10)
    version = int(SyncEventStore(sync).read_timer(game_id)["version"])
    queue = lifecycle_queue(sync)
    queue.empty()
    racers = 16
    start = threading.Barrier(racers)
    queued: list[bool] = []

    def enqueue() -> None:
        start.wait(10)  # all at once: a check-then-enqueue would let several through
        queued.append(
            enqueue_timer(
                lifecycle_queue(redis.Redis(connection_pool=sync.connection_pool)), game_id, version
            )
        )

    threads = [threading.Thread(target=enqueue) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(queued) == [False] * (racers - 1) + [True]
    assert queue.job_ids == [f"timer-{game_id}-{version}"]
    drain(sync)  # not due yet: the job finds nothing to do, and leaves no result behind
    assert enqueue_timer(queue, game_id, version) is True
