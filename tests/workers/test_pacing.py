"""Bots at a table with a person act at a human pace: on a real Redis, with an injected clock.

The pace (``bot_pace_ms``) puts a bot's move in the paced index instead of the queue; the pacing
loop (``workers.lifecycle.pace``) queues it once due, exactly once. Pacing never delays a turn
timer, never lets a bot act on a version it was not planned for, leaves bot-only tables at full
speed, and the sweeper's repair neither queues a paced move twice nor leaves a lost one stuck."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import msgspec
import pytest
import redis

from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import DIRTY, INDEXES_MARK, PACED
from services.store.queue import bot_queue, lifecycle_queue, projection_queue
from services.table.lifecycle import bot_delay_ms
from tests.support.online import TIMERS, online_game
from tests.workers.conftest import FakeClock
from tests.workers.test_lifecycle import (
    _own_move,
    accepted,
    drain,
    folded,
    records,
    run,
    table,
    wait_for,
)
from workers import lifecycle
from workers.lifecycle import pace, tick
from workers.sweeper import rebuild_indexes, sweep

pytestmark = pytest.mark.redis
PACE = 1000


def paced(sync: redis.Redis) -> dict[str, int]:
    return {m.decode(): int(score) for m, score in sync.zrange(PACED, 0, -1, withscores=True)}


def bot_records(sync: redis.Redis, game_id: str) -> list[str]:
    return [r.id for r in records(sync, game_id) if r.kind == "bot"]


def test_a_bot_at_a_table_with_a_person_waits_its_pace_then_its_move_is_queued_once(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=PACE)  # both bid at once
    store, queue = SyncEventStore(sync), bot_queue(sync)
    head = store.head(game_id)
    assert queue.job_ids == []  # not queued at once
    assert paced(sync) == {f"{game_id}:{head}:1": clock() + PACE}
    clock.advance(0.999)
    assert pace(store, queue, clock()) == []
    clock.advance(0.001)
    assert pace(store, queue, clock()) == [(game_id, head, 1)]
    assert pace(store, queue, clock()) == [] and paced(sync) == {}
    assert queue.job_ids == [f"bot-{game_id}-{head}-1"]
    drain(sync)
    assert bot_records(sync, game_id) == [f"bot-{head}-1"]
    accepted(sync, game_id)


def test_bots_without_a_person_at_the_table_or_at_an_unpaced_table_act_at_once(
    sync: redis.Redis, clock: FakeClock
) -> None:
    queue = bot_queue(sync)
    bots_only = table(sync, clock, "skull-king", 2, 0, turn_seconds=0, bot_pace_ms=PACE)
    unpaced = table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=0)
    store = SyncEventStore(sync)
    assert sorted(queue.job_ids) == sorted(  # the first of the bots that bid at once: one job a batch
        [f"bot-{bots_only}-{store.head(bots_only)}-0", f"bot-{unpaced}-{store.head(unpaced)}-1"]
    )
    assert paced(sync) == {}
    for _ in range(400):  # the bot-only table plays to its end with the clock standing still
        drain(sync)
        if folded(sync, clock, bots_only).state.status == "finished":
            break
    assert folded(sync, clock, bots_only).state.status == "finished"
    assert paced(sync) == {}


def test_once_the_last_person_leaves_the_bots_act_at_once(sync: redis.Redis, clock: FakeClock) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=PACE)
    run(sync, clock, lambda c: c.leave(game_id, 0))
    store = SyncEventStore(sync)
    head = store.head(game_id)
    assert bot_queue(sync).job_ids == [f"bot-{game_id}-{head}-0"]  # the first bot; its move queues the next
    assert all(not member.startswith(f"{game_id}:{head}:") for member in paced(sync))


def test_the_delay_is_the_tables_pace_with_a_person_never_more_than_half_the_turn_time() -> None:
    g = online_game("skull", 3, seed=1, humans=1, timers={**TIMERS, "turn_seconds": 1, "bot_pace_ms": 5000})
    assert bot_delay_ms(g.state) == 500  # a bot's own turn timer never runs out while it waits
    untimed = online_game(
        "skull", 3, seed=1, humans=1, timers={**TIMERS, "turn_seconds": 0, "bot_pace_ms": 800}
    )
    assert bot_delay_ms(untimed.state) == 800
    bots = online_game("skull", 3, seed=1, humans=0, timers={**TIMERS, "bot_pace_ms": 800})
    assert bot_delay_ms(bots.state) == 0
    before_pacing = online_game("skull", 3, seed=1, humans=1)  # a table recorded before the option
    assert before_pacing.state.timers is not None and bot_delay_ms(before_pacing.state) == 0
    left = msgspec.structs.replace(untimed.state, left=frozenset({0}), bots=frozenset({0, 1, 2}))
    assert bot_delay_ms(left) == 0  # the only person left


def test_a_person_whose_seat_a_bot_plays_after_timeouts_still_paces_the_bots_until_the_seat_is_left() -> None:
    untimed = online_game(
        "skull", 3, seed=1, humans=1, timers={**TIMERS, "turn_seconds": 0, "bot_pace_ms": 800}
    )
    away = msgspec.structs.replace(untimed.state, bots=frozenset({0, 1, 2}), takeovers={0: "timeouts"})
    assert bot_delay_ms(away) == 800  # free to take the seat back: the game does not race on without them
    given = msgspec.structs.replace(untimed.state, bots=frozenset({0, 1, 2}), takeovers={0: "host"})
    assert bot_delay_ms(given) == 0  # the host gave the seat to a bot: nobody comes back to it
    gone = msgspec.structs.replace(away, left=frozenset({0}), takeovers={0: "left"})
    assert bot_delay_ms(gone) == 0


def test_racing_pacing_loops_queue_each_due_move_exactly_once(sync: redis.Redis, clock: FakeClock) -> None:
    games = [table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=PACE) for _ in range(3)]
    clock.advance(1)
    racers = 12
    start = threading.Barrier(racers)
    taken: list[tuple[str, int, int]] = []
    lock = threading.Lock()

    def loop() -> None:
        connection = redis.Redis(connection_pool=sync.connection_pool)
        start.wait(10)
        got = pace(SyncEventStore(connection), bot_queue(connection), clock())
        with lock:
            taken.extend(got)

    threads = [threading.Thread(target=loop) for _ in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(g for g, _, _ in taken) == sorted(games)
    assert len(bot_queue(sync).job_ids) == 3


def test_pacing_never_delays_a_turn_timer(sync: redis.Redis, clock: FakeClock) -> None:
    paced_game = table(sync, clock, "skull-king", 2, 1, turn_seconds=10, bot_pace_ms=PACE)
    plain_game = table(sync, clock, "skull-king", 2, 1, turn_seconds=10, bot_pace_ms=0)
    store = SyncEventStore(sync)
    planned = store.head(paced_game)
    deadlines = [int(store.read_timer(g)["deadline"]) for g in (paced_game, plain_game)]
    assert deadlines == [clock() + 10_000] * 2  # armed with the batch, whatever the pace
    drain(sync)  # the unpaced bot bids; the paced one waits, and nobody runs the pacing loop
    clock.advance(10)
    fired = tick(store, lifecycle_queue(sync), clock())
    assert (paced_game, store.head(paced_game)) in fired  # due at its deadline, not a pace later
    drain(sync)
    timed_out = [(r.kind, r.seat) for r in records(sync, paced_game) if r.kind == "timeout"]
    assert timed_out == [("timeout", 0), ("timeout", 1)]  # the person, and the bot that had not moved
    head = store.head(paced_game)
    assert (paced_game, planned, 1) in pace(store, bot_queue(sync), clock())  # due long ago
    drain(sync)
    assert bot_records(sync, paced_game) == [] and store.head(paced_game) == head  # planned too early
    accepted(sync, paced_game)


def test_a_paced_bot_acts_only_on_the_version_it_was_planned_for(sync: redis.Redis, clock: FakeClock) -> None:
    game_id = table(sync, clock, "six-nimmt", 2, 1, turn_seconds=0, bot_pace_ms=PACE)  # both choose
    store, queue = SyncEventStore(sync), bot_queue(sync)
    planned = store.head(game_id)
    clock.advance(0.5)
    run(sync, clock, lambda c: _own_move(c, game_id, 0))  # the person chooses meanwhile
    moved = store.head(game_id)
    assert set(paced(sync)) == {f"{game_id}:{planned}:1", f"{game_id}:{moved}:1"}
    clock.advance(0.5)
    assert pace(store, queue, clock()) == [(game_id, planned, 1)]
    drain(sync)
    assert store.head(game_id) == moved and bot_records(sync, game_id) == []  # the game moved on
    clock.advance(0.5)
    assert pace(store, queue, clock()) == [(game_id, moved, 1)]
    drain(sync)
    assert bot_records(sync, game_id) == [f"bot-{moved}-1"]
    accepted(sync, game_id)


def test_the_sweeper_queues_no_repair_for_a_waiting_paced_bot_and_never_postpones_it(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=5000)
    store, queue = SyncEventStore(sync), bot_queue(sync)
    head = store.head(game_id)
    due = clock() + 5000
    drain(sync)  # projected; the game stays marked: a bot is to act
    assert sync.zscore(DIRTY, game_id) is not None
    clock.advance(3)  # past the sweeper's grace, before the bot's pace
    for _ in range(3):
        swept = sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0)
        assert swept.unsettled == []  # its move is paced: under way, nothing to repair
        assert sync.zscore(DIRTY, game_id) is not None  # looked at again after the grace
        drain(sync)
        assert paced(sync) == {f"{game_id}:{head}:1": due} and queue.job_ids == []
    clock.advance(2)
    assert pace(store, queue, clock()) == [(game_id, head, 1)]
    drain(sync)
    assert bot_records(sync, game_id) == [f"bot-{head}-1"]
    assert sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0).unsettled == []


def test_a_paced_bot_move_lost_after_it_was_taken_is_paced_again_by_the_sweeper(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=PACE)
    store, queue = SyncEventStore(sync), bot_queue(sync)
    head = store.head(game_id)
    clock.advance(1)
    assert pace(store, queue, clock()) == [(game_id, head, 1)]
    queue.empty()  # the process died between taking the move and its job running (or Redis lost it)
    drain(sync)
    assert bot_records(sync, game_id) == [] and paced(sync) == {}
    swept = sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0)
    assert swept.unsettled == [game_id]
    drain(sync)
    assert paced(sync) == {f"{game_id}:{head}:1": clock() + PACE}  # at a human pace again
    clock.advance(1)
    assert pace(store, queue, clock()) == [(game_id, head, 1)]
    assert queue.job_ids == [f"bot-{game_id}-{head}-1"]  # on the bots' own queue again
    drain(sync)
    assert bot_records(sync, game_id) == [f"bot-{head}-1"]
    accepted(sync, game_id)


def test_a_taken_back_seat_gets_its_timer_again_and_its_waiting_bot_move_does_nothing(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "six-nimmt", 2, 2, turn_seconds=10, takeover_after=1, bot_pace_ms=PACE)
    store, queue = SyncEventStore(sync), bot_queue(sync)
    run(sync, clock, lambda c: _own_move(c, game_id, 1))
    clock.advance(10)
    tick(store, lifecycle_queue(sync), clock())
    drain(sync)  # seat 0 timed out and a bot took it over
    assert folded(sync, clock, game_id).state.takeovers == {0: "timeouts"}
    for _ in range(20):  # seat 1, the person, plays until the bot of seat 0 is awaited
        f = folded(sync, clock, game_id)
        if 0 in f.table.to_act(f.state):
            break
        run(sync, clock, lambda c: _own_move(c, game_id, 1))
    head = store.head(game_id)
    assert f"{game_id}:{head}:0" in paced(sync)  # the bot waits: a person (seat 1) is at the table
    clock.advance(0.2)
    assert run(sync, clock, lambda c: c.reclaim(game_id, 0)) == 0
    timer = store.read_timer(game_id)
    assert int(timer["version"]) == head + 1 and "0" in timer["seats"].split(",")
    assert int(timer["deadline"]) == clock() + 10_000  # the player's own turn, from the reclaim
    clock.advance(1)
    pace(store, queue, clock())
    drain(sync)
    assert store.head(game_id) == head + 1 and bot_records(sync, game_id) == []
    assert 0 not in folded(sync, clock, game_id).state.bots
    run(sync, clock, lambda c: _own_move(c, game_id, 0))  # the player plays the seat again
    accepted(sync, game_id)


def test_a_paced_move_lost_with_the_indexes_is_found_when_they_are_rebuilt_and_paced_again(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 1, turn_seconds=0, bot_pace_ms=PACE)
    finished = table(sync, clock, "skull-king", 2, 0, turn_seconds=0)
    store, queue = SyncEventStore(sync), bot_queue(sync)
    for _ in range(400):
        drain(sync)
        if folded(sync, clock, finished).state.status == "finished":
            break
    head = store.head(game_id)
    sync.delete(PACED, DIRTY, INDEXES_MARK)  # the indexes' server lost its data
    assert rebuild_indexes(store) == 1  # the game waiting for its bot, not the finished one
    assert sync.zscore(DIRTY, game_id) is not None
    assert sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0).unsettled == [game_id]
    drain(sync)
    assert paced(sync) == {f"{game_id}:{head}:1": clock() + PACE}
    clock.advance(1)
    pace(store, queue, clock())
    drain(sync)
    assert bot_records(sync, game_id) == [f"bot-{head}-1"]


@pytest.fixture
def pool(redis_server: EmbeddedRedis, real_redis: redis.Redis) -> Iterator[subprocess.Popen[bytes]]:
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.pool", "--redis-url", redis_server.url, "--workers", "1"], env=env
    )
    yield process
    process.terminate()
    process.wait(timeout=30)


def test_the_worker_process_paces_the_bots_of_a_table_with_a_person(
    sync: redis.Redis, pool: subprocess.Popen[bytes]
) -> None:
    wall = lifecycle.wall_clock_ms
    game_id = table(sync, wall, "six-nimmt", 3, 1, turn_seconds=0, bot_pace_ms=300)  # type: ignore[arg-type]
    started = time.monotonic()
    run(sync, wall, lambda c: _own_move(c, game_id, 0))  # type: ignore[arg-type]  # all three choose
    wait_for(lambda: len(bot_records(sync, game_id)) >= 2, 30)
    answered = time.monotonic() - started
    print(f"\n[pace] both bots chose {answered * 1000:.0f} ms after the person (pace 300 ms)")
    assert answered >= 0.3  # a pace after the person's move, never before
    accepted(sync, game_id)
