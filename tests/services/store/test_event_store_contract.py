"""The event store contract, run against fakeredis and a real valkey-server alike.

Sync tests drive ``SyncEventStore``, async ones ``EventStore``; both must behave the same, so
several tests write with one and read with the other.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import fakeredis
import pytest
import redis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import RedisCluster

import services
import services.store.operations
from services.history.records import GENESIS_HASH, Entry, chain_hash
from services.store import indexes
from services.store import operations as ops
from services.store.event_store import CrossSlot, EventStore, SyncEventStore
from services.store.keys import DIRTY, HANDOVER, PACED, TIMERS, game_keys
from services.store.lean import LeanPipelines
from services.store.operations import AppendResult, BrokenStream, TimerPlan
from services.store.queue import AppendNotifier, projection_queue
from services.store.requests import SCRIPTS, Call, Operation, Pipelined, index_call
from tests.conftest import Clients, IndexClients, make_batch

pytestmark = pytest.mark.anyio

SECRET = {"root": "ab" * 32, "master": "cd" * 32}


def appended(result: AppendResult) -> tuple[int, int]:
    """The versions an append stored, after checking that it did (the hand-over flags in the result
    depend on where the indexes live: ``test_hand_over`` below)."""
    assert (result.status, result.head) == ("ok", result.last), result
    return result.first, result.last


def start(store: SyncEventStore, game_id: str) -> list[Entry]:
    first = make_batch(1, 1, f"create-{game_id}")
    assert store.create(game_id, SECRET, first[0])
    return first


def grow(store: SyncEventStore, game_id: str, log: list[Entry], count: int, seat: int | None = 0) -> None:
    """Append ``count`` chained entries as one command and add them to ``log``."""
    head = log[-1]
    entries = make_batch(head.version + 1, count, f"cmd-{head.version}", head.hash)
    result = store.append(game_id, head.version, f"cmd-{head.version}", f"fp-{head.version}", seat, entries)
    assert appended(result) == (head.version + 1, head.version + count)
    log.extend(entries)


def snapshot(client: redis.Redis, game_id: str) -> tuple[Any, ...]:
    k = game_keys(game_id)
    return (
        client.xrange(k.events),
        client.hgetall(k.commands),
        client.hgetall(k.seat_commands),
        client.hgetall(k.seats),
        client.hgetall(k.secret),
    )


# -- appends and reads ----------------------------------------------------------------------------------


def test_appends_get_contiguous_versions_from_one(sync_store: SyncEventStore, store_backend: Clients) -> None:
    log = start(sync_store, "g1")
    for count in (1, 3, 2):
        grow(sync_store, "g1", log, count)
    ids = [stream_id for stream_id, _ in store_backend[0].xrange(game_keys("g1").events)]
    assert ids == [f"0-{v}".encode() for v in range(1, 8)]
    assert sync_store.read("g1") == log
    assert sync_store.head("g1") == 7


def test_each_entry_keeps_its_exact_bytes_and_chain_hash(sync_store: SyncEventStore) -> None:
    log = start(sync_store, "g1")
    grow(sync_store, "g1", log, 4)
    previous = GENESIS_HASH
    for entry in sync_store.read("g1"):
        assert entry.hash == chain_hash(previous, entry.data)
        previous = entry.hash


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sizes=st.lists(st.integers(1, 4), min_size=0, max_size=8),
    after=st.integers(0, 30),
    limit=st.none() | st.integers(0, 30),
)
def test_read_after_and_limit_page_through_the_stream_exactly(
    sync_store: SyncEventStore,
    monkeypatch: pytest.MonkeyPatch,
    sizes: list[int],
    after: int,
    limit: int | None,
) -> None:
    monkeypatch.setattr(services.store.operations, "PAGE", 3)  # cross page boundaries with small streams
    game_id = f"g{time.monotonic_ns()}"
    log = start(sync_store, game_id)
    for count in sizes:
        grow(sync_store, game_id, log, count)
    expected = log[after:] if limit is None else log[after : after + limit]
    assert sync_store.read(game_id, after=after, limit=limit) == expected


async def test_the_async_store_reads_what_the_sync_store_wrote(
    sync_store: SyncEventStore, event_store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services.store.operations, "PAGE", 2)
    log = start(sync_store, "g1")
    grow(sync_store, "g1", log, 3)
    assert await event_store.read("g1") == log
    assert await event_store.read("g1", after=1, limit=2) == log[1:3]
    assert await event_store.head("g1") == 4
    assert await event_store.head("nope") == 0


def test_an_unknown_game_has_head_zero_and_no_entries(sync_store: SyncEventStore) -> None:
    assert sync_store.head("nope") == 0
    assert sync_store.read("nope") == []
    assert sync_store.secret("nope") is None
    assert sync_store.command_entry("nope", "c", seat=0) is None


def test_the_head_comes_from_the_last_id_not_the_length(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    client = store_backend[0]
    log = start(sync_store, "g1")
    grow(sync_store, "g1", log, 3)
    client.xdel(game_keys("g1").events, "0-2")  # tampering from outside the store
    assert client.xlen(game_keys("g1").events) == 3
    assert sync_store.head("g1") == 4
    stale = make_batch(4, 1, "late", log[-1].hash)
    assert sync_store.append("g1", 3, "late", "fp", 0, stale).status == "conflict"
    with pytest.raises(BrokenStream):
        sync_store.read("g1")


# -- racing writers -------------------------------------------------------------------------------------


def test_eight_threads_racing_at_one_version_let_exactly_one_win(sync_store: SyncEventStore) -> None:
    log = start(sync_store, "g1")
    barrier = threading.Barrier(8)
    results: dict[int, AppendResult] = {}

    def contend(i: int) -> None:
        entries = make_batch(2, i + 1, f"c{i}", log[-1].hash)
        barrier.wait()
        results[i] = sync_store.append("g1", 1, f"c{i}", f"fp{i}", i, entries)

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    winners = [i for i, r in results.items() if r.status == "ok"]
    assert len(results) == 8 and len(winners) == 1
    head = 1 + winners[0] + 1
    assert all(r == AppendResult("conflict", head=head) for i, r in results.items() if i != winners[0])
    assert sync_store.read("g1") == log + make_batch(2, winners[0] + 1, f"c{winners[0]}", log[-1].hash)


async def test_eight_tasks_racing_at_one_version_let_exactly_one_win(
    sync_store: SyncEventStore, event_store: EventStore
) -> None:
    log = start(sync_store, "g1")
    batches = [make_batch(2, i + 1, f"c{i}", log[-1].hash) for i in range(8)]
    results = await asyncio.gather(
        *(event_store.append("g1", 1, f"c{i}", f"fp{i}", i, b) for i, b in enumerate(batches))
    )
    winners = [i for i, r in enumerate(results) if r.status == "ok"]
    assert len(winners) == 1
    won = batches[winners[0]]
    assert [r.head for r in results if r.status == "conflict"] == [won[-1].version] * 7
    assert await event_store.read("g1") == log + won


# -- command-id dedup and seats ------------------------------------------------------------------------


def test_a_retried_command_id_appends_nothing_and_returns_the_original_range(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    log = start(sync_store, "g1")
    entries = make_batch(2, 2, "cmd", log[-1].hash)
    assert sync_store.append("g1", 1, "cmd", "fp-a", 3, entries).status == "ok"
    before = snapshot(store_backend[0], "g1")
    retried = sync_store.append("g1", 1, "cmd", "fp-a", 3, entries)
    assert retried == AppendResult("dup", first=2, last=3, fingerprint="fp-a")
    reused = sync_store.append("g1", 3, "cmd", "fp-b", 3, make_batch(4, 1, "cmd", entries[-1].hash))
    assert reused == AppendResult("dup", first=2, last=3, fingerprint="fp-a")
    assert snapshot(store_backend[0], "g1") == before
    assert sync_store.command_entry("g1", "cmd", seat=3) == ("fp-a", 2, 3)


async def test_dedup_survives_later_appends_and_seats_record_their_last_version(
    sync_store: SyncEventStore, event_store: EventStore
) -> None:
    log = start(sync_store, "g1")
    grow(sync_store, "g1", log, 2, seat=1)  # versions 2-3, command id cmd-1
    grow(sync_store, "g1", log, 1, seat=0)  # version 4
    grow(sync_store, "g1", log, 2, seat=None)  # versions 5-6: no seat acted
    again = await event_store.append("g1", 1, "cmd-1", "fp-1", 1, make_batch(2, 2, "cmd-1", log[0].hash))
    assert again == AppendResult("dup", first=2, last=3, fingerprint="fp-1")
    assert await event_store.command_entry("g1", "cmd-4", seat=None) == ("fp-4", 5, 6)
    assert [await event_store.seat_version("g1", s) for s in (0, 1, 2)] == [4, 3, 0]
    assert await event_store.head("g1") == 6


def test_two_seats_may_use_the_same_command_id_and_each_sees_only_its_own(sync_store: SyncEventStore) -> None:
    log = start(sync_store, "g1")
    first = make_batch(2, 1, "c1", log[-1].hash)
    assert sync_store.append("g1", 1, "c1", "fp-seat-0", 0, first).status == "ok"
    second = make_batch(3, 1, "c1", first[-1].hash)
    assert appended(sync_store.append("g1", 2, "c1", "fp-seat-1", 1, second)) == (3, 3)
    assert sync_store.command_entry("g1", "c1", seat=0) == ("fp-seat-0", 2, 2)
    assert sync_store.command_entry("g1", "c1", seat=1) == ("fp-seat-1", 3, 3)
    assert sync_store.command_entry("g1", "c1", seat=2) is None
    assert sync_store.command_entry("g1", "c1", seat=None) is None


def test_a_legacy_unscoped_dedup_record_still_dedups_for_its_own_seat_only(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    client = store_backend[0]
    log = start(sync_store, "g1")
    old = make_batch(2, 2, "c1", log[-1].hash)  # its command record says seat 0
    for entry in old:  # as the store wrote a command before ids were scoped per seat
        client.xadd(game_keys("g1").events, {"d": entry.data, "h": entry.hash}, id=f"0-{entry.version}")
    client.hset(game_keys("g1").commands, "c1", "fp-old 2 3")
    retry = sync_store.append("g1", 3, "c1", "fp-old", 0, make_batch(4, 1, "c1", old[-1].hash))
    assert retry == AppendResult("dup", first=2, last=3, fingerprint="fp-old")
    assert sync_store.command_entry("g1", "c1", seat=0) == ("fp-old", 2, 3)
    assert sync_store.command_entry("g1", "c1", seat=1) is None
    other = sync_store.append("g1", 3, "c1", "fp-new", 1, make_batch(4, 1, "c1", old[-1].hash))
    assert appended(other) == (4, 4)
    assert sync_store.command_entry("g1", "c1", seat=1) == ("fp-new", 4, 4)


def test_a_fingerprint_with_spaces_round_trips(sync_store: SyncEventStore) -> None:
    log = start(sync_store, "g1")
    sync_store.append("g1", 1, "c", "a b  c", None, make_batch(2, 1, "c", log[-1].hash))
    assert sync_store.command_entry("g1", "c", seat=None) == ("a b  c", 2, 2)


def test_a_conflict_writes_nothing(sync_store: SyncEventStore, store_backend: Clients) -> None:
    log = start(sync_store, "g1")
    grow(sync_store, "g1", log, 2)
    before = snapshot(store_backend[0], "g1")
    result = sync_store.append("g1", 1, "late", "fp", 0, make_batch(2, 1, "late", log[0].hash))
    assert result == AppendResult("conflict", head=3)
    assert snapshot(store_backend[0], "g1") == before
    assert sync_store.command_entry("g1", "late", seat=0) is None


def test_entries_not_following_the_expected_version_are_refused_before_redis(
    sync_store: SyncEventStore,
) -> None:
    log = start(sync_store, "g1")
    with pytest.raises(ValueError):
        sync_store.append("g1", 1, "c", "fp", 0, make_batch(3, 1, "c", log[-1].hash))
    with pytest.raises(ValueError):
        sync_store.append("g1", 1, "c", "fp", 0, [])
    with pytest.raises(ValueError):
        sync_store.append("g1", 0, "c", "fp", 0, make_batch(1, 1, "c"))
    assert sync_store.head("g1") == 1


# -- creation and the secret ---------------------------------------------------------------------------


def test_creating_a_game_twice_returns_false_and_keeps_the_first(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    first = start(sync_store, "g1")
    before = snapshot(store_backend[0], "g1")
    assert not sync_store.create("g1", {"root": "00", "master": "11"}, make_batch(1, 1, "other")[0])
    assert snapshot(store_backend[0], "g1") == before
    assert sync_store.read("g1") == first
    assert sync_store.secret("g1") == SECRET


def test_the_secret_is_stored_only_in_the_secret_key(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    client = store_backend[0]
    log = start(sync_store, "g1")
    grow(sync_store, "g1", log, 3)
    sync_store.write_views("g1", 0, 4, {"spectator": b"{}"})
    holders = []
    for key in client.scan_iter():
        kind = client.type(key)
        if kind == b"stream":
            dumped = repr(client.xrange(key))
        elif kind == b"hash":
            dumped = repr(client.hgetall(key))
        else:
            dumped = repr(client.dump(key))
        if any(value in dumped for value in SECRET.values()):
            holders.append(key)
    assert holders == [game_keys("g1").secret.encode()]


# -- views ---------------------------------------------------------------------------------------------


def test_write_views_is_a_compare_and_set_on_the_checkpoint(sync_store: SyncEventStore) -> None:
    assert sync_store.checkpoint("g1") == 0
    assert sync_store.write_views("g1", 0, 3, {"seat:0": b"a", "spectator": b"s"}) == "written"
    assert sync_store.read_view("g1", "seat:0") == (3, b"a")
    assert sync_store.write_views("g1", 0, 3, {"seat:0": b"old"}) == "stale"
    assert sync_store.write_views("g1", 1, 2, {"seat:0": b"old"}) == "stale"
    assert sync_store.write_views("g1", 1, 5, {"seat:0": b"skewed"}) == "mismatch"
    assert sync_store.read_view("g1", "seat:0") == (3, b"a")
    assert sync_store.write_views("g1", 3, 5, {"seat:0": b"b"}) == "written"
    assert sync_store.read_view("g1", "seat:0") == (5, b"b")
    assert sync_store.read_view("g1", "seat:9") == (5, None)
    with pytest.raises(ValueError):
        sync_store.write_views("g1", 5, 6, {"checkpoint": b"9"})


def test_a_written_view_is_published_on_the_games_shard_channel(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    pubsub = store_backend[0].pubsub(ignore_subscribe_messages=True)
    pubsub.ssubscribe(game_keys("g1").live)
    try:
        sync_store.write_views("g1", 0, 2, {"spectator": b"x"})
        assert sync_store.write_views("g1", 1, 4, {}) == "mismatch"  # publishes nothing
        assert sync_store.write_views("g1", 2, 3, {}) == "written"
        received: list[bytes] = []
        deadline = time.monotonic() + 5
        while len(received) < 2 and time.monotonic() < deadline:
            message = pubsub.get_sharded_message(timeout=0.05)
            if message is not None:
                received.append(message["data"])
        assert received == [b"2", b"3"]
    finally:
        pubsub.close()


async def test_a_written_view_reaches_an_async_subscriber(
    event_store: EventStore, store_backend: Clients
) -> None:
    client = store_backend[1]
    if isinstance(client, RedisCluster):
        await client.initialize()  # a cluster's pub/sub finds the channel's node in the slot map
    pubsub = client.pubsub(ignore_subscribe_messages=True)
    await pubsub.ssubscribe(game_keys("g1").live)
    receive = pubsub.get_sharded_message if isinstance(client, RedisCluster) else pubsub.get_message
    try:
        assert await event_store.write_views("g1", 0, 7, {"scores": b"{}"}) == "written"
        with anyio.fail_after(5):
            while (message := await receive(timeout=0.05)) is None:
                pass
        assert message["data"] == b"7"
        assert await event_store.read_view("g1", "scores") == (7, b"{}")
        assert await event_store.checkpoint("g1") == 7
    finally:
        await pubsub.aclose()


# -- many operations in lockstep (a worker's batch) -----------------------------------------------------


def project_and_read(game_id: str, new: int) -> Operation[tuple[str, int, int]]:
    """Three steps of one game: write its views, read its checkpoint, read its head."""
    written = yield from ops.write_views(game_id, 0, new, {"spectator": game_id.encode()})
    checkpoint = yield from ops.checkpoint(game_id)
    head = yield from ops.head(game_id)
    return written, checkpoint, head


def counting_pipelines(monkeypatch: pytest.MonkeyPatch, *clients: Any) -> list[int]:
    """How many pipelines the clients open, counted in the list returned (one element each): redis-py's,
    and those sent on a lean connection (``services.store.lean``: a round of scripts only)."""
    opened: list[int] = []
    real_execute = LeanPipelines.execute

    def executed(self: LeanPipelines, commands: Any) -> list[Any]:
        opened.append(1)
        return real_execute(self, commands)

    monkeypatch.setattr(LeanPipelines, "execute", executed)
    for client in {id(c): c for c in clients}.values():
        real = client.pipeline

        def counted(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            opened.append(1)
            return _real(*args, **kwargs)

        monkeypatch.setattr(client, "pipeline", counted)
    return opened


def test_operations_run_in_lockstep_each_get_what_they_get_alone_in_one_pipeline_per_step(
    sync_store: SyncEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    games = [f"batch{i}" for i in range(12)]  # on a cluster: several slots and primaries
    logs = {game_id: start(sync_store, game_id) for game_id in games}
    for i, game_id in enumerate(games):
        grow(sync_store, game_id, logs[game_id], i % 3 + 1)
    opened = counting_pipelines(monkeypatch, sync_store.redis, sync_store.index)
    results = sync_store.run_all([project_and_read(g, len(logs[g])) for g in games])
    assert results == [("written", len(logs[g]), len(logs[g])) for g in games]
    assert len(opened) == 3  # three steps, whatever the number of games
    assert sync_store.run(project_and_read("alone", 2)) == ("written", 2, 0)
    views = [sync_store.read_view(g, "spectator") for g in games]
    assert views == [(len(logs[g]), g.encode()) for g in games]


def test_an_operation_that_fails_in_lockstep_ends_with_its_error_and_the_others_finish(
    sync_store: SyncEventStore,
) -> None:
    start(sync_store, "g1")

    def refused_before_redis() -> Operation[Any]:
        return (yield from ops.write_views("g1", 3, 3, {}))  # ValueError before anything is sent

    def wrong_type() -> Operation[str]:
        try:
            yield Call(("HGET", game_keys("g1").events, "x"))  # the events key is a stream
        except redis.ResponseError as error:
            return f"caught {str(error).split()[0]}"
        return "not raised"

    def crossing() -> Operation[Any]:
        return (yield Pipelined((Call(("GET", game_keys("a").views)), Call(("GET", game_keys("b").views)))))

    outcomes = sync_store.run_all(
        [refused_before_redis(), wrong_type(), crossing(), project_and_read("g2", 4), ops.head("g1")]
    )
    assert isinstance(outcomes[0], ValueError)
    assert outcomes[1] == "caught WRONGTYPE"
    assert isinstance(outcomes[2], CrossSlot)
    assert outcomes[3:] == [("written", 4, 0), 1]


def test_a_script_the_server_lost_is_loaded_again_in_lockstep(
    sync_store: SyncEventStore, store_backend: Clients
) -> None:
    client = store_backend[0]
    sync_store.run(project_and_read("s0", 1))  # the script is loaded, then lost
    client.script_flush()  # every primary on a cluster: as after a restart without the scripts
    sha = hashlib.sha1(SCRIPTS["write_views"].encode()).hexdigest()
    assert not any(client.script_exists(sha))
    results = sync_store.run_all([project_and_read(f"s{i}", 2) for i in range(1, 7)])
    assert results == [("written", 2, 0)] * 6


# -- the hand-over to the projection workers --------------------------------------------------------


async def test_an_append_hands_its_game_over_once_in_its_own_step_where_the_indexes_are_beside_it(
    store_backend: Clients, index_backend: IndexClients, event_store: EventStore
) -> None:
    """On one server the append script marks the game dirty, hands it over and indexes its timer in
    the same atomic step; with the indexes elsewhere (a cluster) the notifier does it in a second
    trip. Either way: one hand-over (one entry of the hand-over stream) for appends while a
    projection is pending, and no job queued."""
    indexes = index_backend[0] if index_backend else store_backend[0]  # and the queue, beside them
    queue = projection_queue(indexes)
    notify = AppendNotifier(event_store, queue)
    log = start(SyncEventStore(store_backend[0], index_backend[0] if index_backend else None), "h1")
    await event_store.redis.delete(game_keys("h1").pending)  # as a projection that began
    beside = index_backend is None and not isinstance(store_backend[0], redis.RedisCluster)
    for n, deadline in enumerate((1_000_000, 2_000_000)):
        entries = make_batch(log[-1].version + 1, 1, f"h-{n}", log[-1].hash)
        plan = TimerPlan(deadline, {"kind": "turn", "seats": "0", "turn_seconds": 60})
        result = await event_store.append("h1", log[-1].version, f"h-{n}", "fp", 0, entries, timer=plan)
        log.extend(entries)
        assert (result.status, result.poke, result.handed) == ("ok", n == 0, beside)
        assert result.armed == deadline
        await notify("h1", result.handover())
        # never moved later (ZADD LT): a due entry is moved on by the timer loop (settle_timer)
        assert indexes.zscore(TIMERS, "h1") == 1_000_000
    assert indexes.zscore(DIRTY, "h1") is not None
    assert [fields for _, fields in indexes.xrange(HANDOVER)] == [{b"g": b"h1"}]
    assert queue.get_jobs() == []


# -- lobby and scanning --------------------------------------------------------------------------------


async def test_the_lobby_lists_games_newest_first_and_updates_in_place(
    sync_store: SyncEventStore, event_store: EventStore
) -> None:
    for game_id in ("a", "b", "c"):
        sync_store.put_lobby(game_id, f"{game_id}1".encode())
    await event_store.put_lobby("a", b"a2")  # an update keeps a's place
    assert sync_store.lobby(10) == [b"c1", b"b1", b"a2"]
    assert await event_store.lobby(2) == [b"c1", b"b1"]
    assert sync_store.lobby(0) == []


async def test_scanning_finds_every_game_once(sync_store: SyncEventStore, event_store: EventStore) -> None:
    games = {f"g{i}" for i in range(40)}
    for game_id in games:
        start(sync_store, game_id)
    sync_store.write_views("g0", 0, 1, {})
    sync_store.put_lobby("g0", b"{}")
    assert sorted(sync_store.scan_games()) == sorted(games)
    assert sorted(await event_store.scan_games()) == sorted(games)


# -- paced bots ----------------------------------------------------------------------------------------


async def test_paced_bot_moves_wait_until_due_keep_their_first_due_time_and_are_taken_once(
    sync_store: SyncEventStore, event_store: EventStore, index_backend: IndexClients
) -> None:
    assert await event_store.run(indexes.pace_bots("g:1", 7, [1, 2], 5_000)) == 2  # ids may hold colons
    assert await event_store.run(indexes.pace_bots("g:1", 7, [2], 9_000)) == 0  # NX: 5 000 stays
    assert await event_store.run(indexes.pace_bots("h", 3, [0], 6_000)) == 1
    assert await event_store.run(indexes.pace_bots("h", 3, [], 6_000)) == 0
    assert sync_store.run(indexes.take_due_bots(4_999)) == []
    assert sync_store.run(indexes.take_due_bots(5_000)) == [("g:1", 7, 1), ("g:1", 7, 2)]
    assert sync_store.run(indexes.take_due_bots(10_000)) == [("h", 3, 0)]
    assert sync_store.run(indexes.take_due_bots(10_000)) == []
    where = index_backend[0] if index_backend else sync_store.redis
    assert where.zcard(PACED) == 0  # the index lives beside the other indexes


def test_racing_takers_of_the_paced_moves_get_each_exactly_once(sync_store: SyncEventStore) -> None:
    moves = [(f"g{n}", n, n % 3) for n in range(60)]
    for game_id, version, seat in moves:
        sync_store.run(indexes.pace_bots(game_id, version, [seat], 1_000 + version))
    taken: list[tuple[str, int, int]] = []
    start = threading.Barrier(6)

    def taker() -> None:
        start.wait(10)
        while got := sync_store.run(indexes.take_due_bots(2_000, limit=7)):
            taken.extend(got)

    threads = [threading.Thread(target=taker) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(taken) == sorted(moves)


def test_a_paced_entry_that_is_not_a_move_is_dropped_not_taken(sync_store: SyncEventStore) -> None:
    assert indexes.parse_paced("a:b:4:5") == ("a:b", 4, 5)
    for junk in ("x", ":1:2", "g:one:2", "g:1:"):
        assert indexes.parse_paced(junk) is None
        sync_store.run(_zadd_paced(junk))
    sync_store.run(indexes.pace_bots("g", 1, [0], 10))
    assert sync_store.run(indexes.take_due_bots(100)) == [("g", 1, 0)]
    assert sync_store.run(indexes.take_due_bots(100)) == []  # the junk went with the first take


def _zadd_paced(member: str) -> Operation[None]:
    yield index_call("ZADD", PACED, 5, member)


# -- guards --------------------------------------------------------------------------------------------


def test_a_client_that_decodes_replies_is_refused() -> None:
    with pytest.raises(ValueError):
        SyncEventStore(fakeredis.FakeRedis(decode_responses=True))


def test_a_game_id_with_braces_is_refused() -> None:
    with pytest.raises(ValueError):
        game_keys("a}b")


def test_nothing_in_services_can_trim_or_delete_stream_entries() -> None:
    """Trimming an event stream is silent data loss (docs/design.md): no MAXLEN, MINID, XTRIM, XDEL."""
    root = Path(services.__file__).parent
    # whole words: a JSON Schema's "maxLength" (services/api/body_schemas.py) is not XADD's MAXLEN
    forbidden = re.compile(r"\b(maxlen|minid|xtrim|xdel|xackdel|xdelex)\b", re.IGNORECASE)
    offenders = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted([*root.rglob("*.py"), *root.rglob("*.lua")])
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if forbidden.search(line)
    ]
    assert offenders == []
