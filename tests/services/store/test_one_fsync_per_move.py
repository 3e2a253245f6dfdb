"""Issue 38: a move costs the append-only file only its append. The hand-over to the projection
(pending flag, stream) and what a move's projection writes (views, checkpoint, dirty mark's clearing)
are memory only, so with ``appendfsync always`` a move costs one fsync; a consumer blocks on the
hand-over instead of polling; after a restart the games are found again from the durable dirty set
and no view a snapshot kept is served for a game that moved on (real durable server)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from projections.views import encode, seat_view, view_field
from services.fairness.transparency import log as transparency
from services.history.folding import StateCache
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import HANDOVER, game_keys
from services.store.queue import projection_queue
from tests.support.stored import StoredTable
from tests.support.waiting import wait_until
from workers.handover import Consumer, HandoverConsumer
from workers.projector import Projector

pytestmark = [pytest.mark.redis]


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "data", durable=True)
    yield server
    server.stop()


def aof_size(client: redis.Redis) -> int:
    return int(client.info("persistence")["aof_current_size"])


def aof_text(durable: EmbeddedRedis) -> bytes:
    """Everything the server's append-only files hold (base and increments)."""
    return b"".join(path.read_bytes() for path in sorted(durable.data_dir.rglob("*.aof*")) if path.is_file())


def started(store: SyncEventStore, game_id: str, seed: int = 1) -> StoredTable:
    table = StoredTable(store, game_id, "skull", 3, {}, seed)
    table.join_all(3)
    return table


def test_a_move_s_projection_adds_nothing_to_the_append_only_file_beyond_its_append(
    durable: EmbeddedRedis,
) -> None:
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    table = started(store, "m1")
    projector = Projector(store, StateCache())
    consumer = Consumer(store, projector)
    assert consumer.recover() == 1  # the table's creation and joins (written here without their hand-over)
    rng = random.Random(7)
    moves = quiet = 0
    while table.state.status == "playing" and moves < 12:
        before_fold = projector.cache.get("m1")
        before = aof_size(client)
        table.step(rng)
        appended = aof_size(client)
        assert appended > before  # the move is durable
        assert consumer.take_all() == 1  # handed over once, taken without any RQ job
        assert store.checkpoint("m1") == store.head("m1")
        head = projector.cache.get("m1")
        assert head is not None
        moves += 1
        if transparency.loggable(before_fold, head):  # a round's or the game's end: noted for the public log
            continue
        quiet += 1
        assert aof_size(client) == appended, f"move {moves}: the projection wrote to the append-only file"
    assert quiet >= 3 and projection_queue(client).count == 0
    written = aof_text(durable)
    assert HANDOVER.encode() not in written and game_keys("m1").pending.encode() not in written
    assert b"checkpoint" not in written  # the views and their checkpoint: memory only


def test_the_consumer_blocks_on_the_hand_over_writes_nothing_while_idle_and_projects_without_a_job(
    durable: EmbeddedRedis,
) -> None:
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    table = started(store, "b1")
    consumer = HandoverConsumer(SyncEventStore(redis.Redis.from_url(durable.url)), block_ms=500)
    consumer.start()
    try:
        wait_until(lambda: store.checkpoint("b1") == store.head("b1"), 30, "the start projected")
        time.sleep(0.2)
        client.config_resetstat()
        size = aof_size(client)
        time.sleep(1.0)  # idle: blocked on XREAD, not polling
        stats = client.info("commandstats")
        calls = {name: int(stat["calls"]) for name, stat in stats.items()}
        calls.pop("cmdstat_config", None)
        calls.pop("cmdstat_info", None)
        assert sum(calls.values()) <= 6, calls  # one XREAD per 500 ms block, not hundreds of polls
        assert aof_size(client) == size  # and nothing written
        table.step(random.Random(3))
        wait_until(lambda: store.checkpoint("b1") == store.head("b1"), 30, "the move projected")
        assert projection_queue(client).count == 0
    finally:
        stopped = time.monotonic()
        consumer.stop(timeout=5)
    assert not consumer.is_alive() and time.monotonic() - stopped < 2  # within its block's timeout


def test_after_a_restart_the_views_a_snapshot_kept_are_not_served_and_the_dirty_games_are_projected(
    durable: EmbeddedRedis,
) -> None:
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    moved = started(store, "r1")
    started(store, "r2", seed=2)  # a game that does not move after the snapshot
    consumer = Consumer(store, Projector(store, StateCache()))
    assert consumer.recover() == 2  # written here without their hand-overs
    before = store.read_seat_view("r1", view_field(0))
    assert before[1] is not None
    client.bgrewriteaof()  # the rewrite's snapshot holds both games' views
    deadline = time.monotonic() + 30
    while (info := client.info("persistence"))["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline, "the AOF rewrite never ended"
        time.sleep(0.02)
    moved.step(random.Random(5))
    consumer.take_all()  # in memory: the views at the new head, the dirty mark cleared
    assert store.read_seat_view("r1", view_field(0))[0] == store.head("r1")
    durable.kill()  # a crash: the snapshot and the durable writes after it come back
    durable.start()
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    checkpoint, view = store.read_seat_view("r1", view_field(0))
    assert view is None and checkpoint < store.head("r1")  # the snapshot's older views are not served
    assert store.read_seat_view("r2", view_field(0))[1] is not None  # a game that did not move keeps its own
    assert store.dirty_games(0, 10) == ["r1"]  # the append's durable mark came back
    assert not client.exists(HANDOVER) and not client.exists(game_keys("r1").pending)
    projector = Projector(store, StateCache())
    assert Consumer(store, projector).recover() == 1  # a consumer starting or reconnecting
    folded = projector.cache.get("r1")
    assert folded is not None
    expected = encode(seat_view(folded.state, folded.version, 0))
    assert store.read_seat_view("r1", view_field(0)) == (store.head("r1"), expected)
    assert store.dirty_games(0, 10) == []
