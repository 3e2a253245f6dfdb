"""The write path's own records, kept small for the append-only file (docs/benchmarks.md, "Write
amplification"): the timer as one field, the dedup record with a short fingerprint and the seat's
version in the same write, the hand-over set standing for the pending flag beside the indexes. Run
against fakeredis, a real server and a real cluster; records written before are honoured."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from projections.views import view_field
from services.errors import AppError
from services.history.folding import StateCache
from services.history.records import command_fingerprint, stored_fingerprint
from services.store import operations as ops
from services.store import requests
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import game_keys
from services.store.operations import TimerPlan
from services.store.timer_record import pack, timer_fields
from services.table.commands import GameCommands
from tests.conftest import Clients, IndexClients, make_batch
from tests.services.store.test_event_store_contract import start
from tests.services.table.test_commands import FLOWER, handler_on, started_table

pytestmark = pytest.mark.anyio

OLD_TURN = {"version": "1", "deadline": "5000000", "kind": "turn", "seats": "0,1", "turn_seconds": "60"}
TURN = {"kind": "turn", "seats": "1", "turn_seconds": 60}


def written(client: redis.Redis) -> int:
    """The server's count of changes (what goes to the append-only file), from ``INFO``."""
    return int(client.info("persistence")["rdb_changes_since_last_save"])


# -- the timer --------------------------------------------------------------------------------------


def test_a_timer_packs_into_one_field_and_reads_back_as_its_fields() -> None:
    turn = {"version": 7, "deadline": 1_796_199_158_493, "kind": "turn", "seats": "0,2", "turn_seconds": 60}
    assert pack(turn) == "7 1796199158493 turn 0,2 60"
    assert timer_fields({b"t": pack(turn).encode()}) == {name: str(value) for name, value in turn.items()}
    assert pack({"version": 8, "deadline": 9, "kind": "expire"}) == "8 9 expire"
    assert timer_fields({"t": "8"}) == {"version": "8"}  # cleared
    assert timer_fields({"t": "8 - turn 1 60"}) == {
        "version": "8",
        "kind": "turn",
        "seats": "1",
        "turn_seconds": "60",
    }
    assert timer_fields({b"version": b"3", b"deadline": b"4"}) == {"version": "3", "deadline": "4"}  # before
    for bad in ({"seat": 0}, {"version": 1, "kind": "two words"}, {"version": 1, "seats": "-"}):
        with pytest.raises(ValueError):
            pack(bad)


async def test_an_append_honours_a_timer_stored_before_as_five_fields_and_replaces_it_by_one_field(
    store_backend: Clients, event_store: EventStore, sync_store: SyncEventStore
) -> None:
    log = start(sync_store, "t1")
    client, k = store_backend[0], game_keys("t1")
    client.hset(k.timer, mapping=OLD_TURN)
    assert sync_store.read_timer("t1") == OLD_TURN
    # seat 0 moved, seat 1 is still awaited: it keeps the stored deadline, not the plan's fresh one
    entries = make_batch(2, 1, "c2", log[-1].hash)
    result = await event_store.append("t1", 1, "c2", "fp", 0, entries, timer=TimerPlan(9_000_000, TURN))
    assert (result.status, result.armed) == ("ok", 5_000_000)
    assert client.hgetall(k.timer) == {b"t": b"2 5000000 turn 1 60"}
    assert sync_store.read_timer("t1") == {
        "version": "2",
        "deadline": "5000000",
        "kind": "turn",
        "seats": "1",
        "turn_seconds": "60",
    }
    entries = make_batch(3, 1, "c3", entries[-1].hash)
    result = await event_store.append("t1", 2, "c3", "fp", 1, entries, timer=TimerPlan(None, {}))
    assert result.status == "ok" and result.armed is None
    assert client.hgetall(k.timer) == {b"t": b"3"}  # cleared, for the last version


async def test_arming_and_dropping_replace_a_timer_stored_before_as_five_fields_by_one_field(
    store_backend: Clients, event_store: EventStore, sync_store: SyncEventStore
) -> None:
    start(sync_store, "t2")
    client, k = store_backend[0], game_keys("t2")
    client.hset(k.timer, mapping=OLD_TURN)
    assert await event_store.drop_timer("t2", 1)
    assert client.hgetall(k.timer) == {b"t": b"1 - turn 0,1 60"}
    assert not await event_store.drop_timer("t2", 1)  # no deadline left to drop
    client.delete(k.timer)
    client.hset(k.timer, mapping=OLD_TURN)
    assert sync_store.arm_timer("t2", 2, 7_000_000, {"kind": "expire"})
    assert client.hgetall(k.timer) == {b"t": b"2 7000000 expire"}
    assert not sync_store.arm_timer("t2", 2, 8_000_000, {"kind": "expire"})  # never the same version twice
    assert sync_store.arm_timer("t2", 3, None, {})
    assert sync_store.read_timer("t2") == {"version": "3"}


def test_a_stale_arm_and_an_append_that_finds_no_deadline_to_clear_write_nothing_to_the_timer(
    real_redis: redis.Redis,
) -> None:
    store = SyncEventStore(real_redis)
    log = start(store, "t3")
    assert store.arm_timer("t3", 1, None, {})  # cleared at version 1: no deadline
    before = written(real_redis)
    assert not store.arm_timer("t3", 1, None, {})
    assert written(real_redis) == before
    # two appends while a projection of the game is pending: the one clearing a timer that has no
    # deadline writes exactly what the one leaving the timer alone writes (its event and record)
    real_redis.set(game_keys("t3").pending, 1)
    costs = []
    for version, timer in ((1, None), (2, TimerPlan(None, {}))):
        entries = make_batch(version + 1, 1, f"c{version}", log[-1].hash)
        before = written(real_redis)
        result = store.run(ops.append("t3", version, f"c{version}", "fp", 0, entries, timer=timer))
        assert result.status == "ok"
        costs.append(written(real_redis) - before)
        log.extend(entries)
    assert costs[0] == costs[1]
    assert store.read_timer("t3") == {"version": "1"}


# -- the dedup record and the seat's version -----------------------------------------------------------


async def test_an_append_writes_its_record_with_a_short_fingerprint_and_its_seats_version_in_one_hash(
    store_backend: Clients, index_backend: IndexClients, event_store: EventStore, sync_store: SyncEventStore
) -> None:
    log = start(sync_store, "d1")
    client, k = store_backend[0], game_keys("d1")
    client.delete(k.pending)  # as a projection that began
    digest = command_fingerprint(0, {"command": FLOWER, "expected_version": None})
    entries = make_batch(2, 2, "c1", log[-1].hash)
    assert (await event_store.append("d1", 1, "c1", digest, 0, entries)).status == "ok"
    short = stored_fingerprint(digest)
    assert len(short) == 22 and short != digest
    assert client.hgetall(k.seat_commands) == {b"0:c1": f"{short} 2 3".encode(), b"0": b"3"}
    assert not client.exists(k.seats)
    assert await event_store.seat_version("d1", 0) == 3
    assert await event_store.command_entry("d1", "c1", seat=0) == (short, 2, 3)
    retry = await event_store.append("d1", 1, "c1", digest, 0, entries)
    assert (retry.status, retry.fingerprint, retry.first, retry.last) == ("dup", short, 2, 3)
    beside = index_backend is None and not isinstance(client, redis.RedisCluster)
    assert client.exists(k.pending) and beside in (True, False)  # the flag, whatever the layout (memory only)


async def test_a_seats_version_written_before_in_the_seats_hash_still_counts(store_backend: Clients) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    client, k = store_backend[0], game_keys(game_id)
    placed = await handler.command(game_id, 0, "c0", FLOWER, None)
    client.hdel(k.seat_commands, "0")
    client.hset(k.seats, "0", placed.version)  # where appends wrote it before
    later = await handler.command(game_id, 1, "c1", FLOWER, None)
    for seat, version in ((0, placed.version), (1, later.version), (2, 0)):
        assert await handler.store.seat_version(game_id, seat) == version
        reads = await handler.store.view_reads(game_id, view_field(seat), seat, StateCache())
        assert reads.seat_version == version


async def test_a_dedup_record_written_before_with_the_whole_digest_answers_retries_as_ever(
    store_backend: Clients,
) -> None:
    first, second = handler_on(store_backend), handler_on(store_backend)
    game_id = await started_table(first, 3)
    original = await first.command(game_id, 0, "old-1", FLOWER, None)
    client, k = store_backend[0], game_keys(game_id)
    digest = command_fingerprint(0, {"command": FLOWER, "expected_version": None})
    client.hset(k.seat_commands, "0:old-1", f"{digest} {original.first} {original.version}")  # as before
    handlers: list[GameCommands] = [first, second]  # the one-round-trip path (a cached head), then a load
    for handler in handlers:
        replay = await handler.command(game_id, 0, "old-1", FLOWER, None)
        assert replay.duplicate
        assert (replay.first, replay.version, replay.hash) == (
            original.first,
            original.version,
            original.hash,
        )
        with pytest.raises(AppError) as reused:
            await handler.command(game_id, 0, "old-1", {"type": "place_disc", "disc": "skull"}, None)
        assert reused.value.code == "command_id_reused"
    assert (await first.load(game_id)).version == original.version


def test_the_timer_scripts_are_sent_with_the_one_shared_reading_of_the_packed_timer() -> None:
    shared = (Path(requests.__file__).parent / "lua" / "timer_record.lua").read_text(encoding="utf-8")
    for name in ("append", "arm_timer", "drop_timer"):
        assert shared in requests.SCRIPTS[name]  # type: ignore[index]
    sent = [line for text in requests.SCRIPTS.values() for line in text.splitlines()]
    assert not [line for line in sent if line.startswith("-- include:")]
