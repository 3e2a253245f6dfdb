"""Durability on a real server: with ``appendfsync always`` every acknowledged append survives SIGKILL.

The benchmark-style lines (appends/s) are printed, never asserted: wall-clock numbers depend on the
machine. Clients here never retry, so a dead server shows up as an error instead of a stall.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.history.records import GENESIS_HASH, Entry, chain_hash
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore, SyncEventStore
from tests.conftest import make_batch

pytestmark = [pytest.mark.redis, pytest.mark.anyio]

Logs = dict[str, list[Entry]]


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "data", durable=True)
    yield server
    server.stop()


def sync_store(url: str) -> SyncEventStore:
    return SyncEventStore(redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0)))


def async_store(url: str) -> EventStore:
    return EventStore(aioredis.Redis.from_url(url, retry=AsyncRetry(NoBackoff(), 0)))


def report(capsys: pytest.CaptureFixture[str], what: str, appends: int, events: int, seconds: float) -> None:
    with capsys.disabled():
        print(
            f"\n[bench] {what}: {appends} appends ({events} events) in {seconds:.3f} s"
            f" = {appends / seconds:,.0f} appends/s, {events / seconds:,.0f} events/s"
        )


def next_batch(log: list[Entry], command_id: str) -> list[Entry]:
    """1 to 3 entries following ``log``."""
    head = log[-1]
    return make_batch(head.version + 1, 1 + head.version % 3, command_id, head.hash)


def start_games(store: SyncEventStore, count: int) -> Logs:
    logs: Logs = {}
    for i in range(count):
        first = make_batch(1, 1, f"create-{i}")
        assert store.create(f"g{i}", {"root": "00", "master": "11"}, first[0])
        logs[f"g{i}"] = first
    return logs


def append_sequentially(store: SyncEventStore, logs: Logs, appends: int) -> int:
    events = 0
    games = list(logs)
    for n in range(appends):
        game_id = games[n % len(games)]
        log = logs[game_id]
        entries = next_batch(log, f"c{n}")
        assert store.append(game_id, log[-1].version, f"c{n}", f"fp{n}", n % 4, entries).status == "ok"
        log.extend(entries)
        events += len(entries)
    return events


def assert_survived(store: SyncEventStore, logs: Logs) -> None:
    """Every acknowledged entry is back, with its bytes and its hash, and the chain holds."""
    for game_id, log in logs.items():
        stored = store.read(game_id)
        assert stored == log, game_id
        previous = GENESIS_HASH
        for entry in stored:
            assert entry.hash == chain_hash(previous, entry.data)
            previous = entry.hash


def test_every_acknowledged_append_survives_a_sigkill(
    durable: EmbeddedRedis, redis_server: EmbeddedRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    store = sync_store(durable.url)
    logs = start_games(store, 4)
    started = time.perf_counter()
    events = append_sequentially(store, logs, 2000)
    report(capsys, "AOF always, 1 sync client, sequential", 2000, events, time.perf_counter() - started)

    durable.kill()
    durable.start()
    assert_survived(sync_store(durable.url), logs)

    volatile = sync_store(redis_server.url)  # the same loop without persistence, for comparison
    volatile.redis.flushall()
    fresh = start_games(volatile, 4)
    started = time.perf_counter()
    events = append_sequentially(volatile, fresh, 2000)
    report(capsys, "no persistence, 1 sync client, sequential", 2000, events, time.perf_counter() - started)


async def test_concurrent_acknowledged_appends_survive_a_sigkill(
    durable: EmbeddedRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = start_games(sync_store(durable.url), 64)
    store = async_store(durable.url)

    async def writer(game_id: str, rounds: int) -> int:
        log, events = logs[game_id], 0
        for n in range(rounds):
            entries = next_batch(log, f"{game_id}-{n}")
            result = await store.append(game_id, log[-1].version, f"{game_id}-{n}", "fp", None, entries)
            assert result.status == "ok"
            log.extend(entries)
            events += len(entries)
        return events

    started = time.perf_counter()
    events = sum(await asyncio.gather(*(writer(game_id, 40) for game_id in logs)))
    seconds = time.perf_counter() - started
    report(capsys, "AOF always, 64 async callers", 64 * 40, events, seconds)
    await store.redis.aclose()

    durable.kill()
    durable.start()
    assert_survived(sync_store(durable.url), logs)


async def test_a_batch_in_flight_at_the_crash_is_either_whole_or_absent(durable: EmbeddedRedis) -> None:
    logs = start_games(sync_store(durable.url), 16)
    store = async_store(durable.url)
    in_flight: dict[str, tuple[str, list[Entry]]] = {}  # game -> the unanswered command
    acknowledged = 0
    crashed = asyncio.Event()

    async def writer(game_id: str) -> None:
        nonlocal acknowledged
        log = logs[game_id]
        for n in range(10_000):
            command_id = f"{game_id}-{n}"
            entries = next_batch(log, command_id)
            in_flight[game_id] = (command_id, entries)
            try:
                result = await store.append(game_id, log[-1].version, command_id, "fp", 0, entries)
            except redis.ConnectionError:
                return
            stored = (result.status, result.first, result.last)
            assert stored == ("ok", entries[0].version, entries[-1].version)
            del in_flight[game_id]
            log.extend(entries)
            acknowledged += 1
            if acknowledged == 300:
                durable.kill()  # mid-stream: the other writers have appends on the wire
                crashed.set()
            if crashed.is_set():
                return

    await asyncio.gather(*(writer(game_id) for game_id in logs))
    await store.redis.aclose()
    durable.start()
    after = sync_store(durable.url)
    for game_id, log in logs.items():
        stored = after.read(game_id)
        command_id, pending = in_flight.get(game_id, ("", []))
        if pending and stored == log + pending:  # ran and was fsynced, but its reply was lost
            assert after.command_entry(game_id, command_id, seat=0) == (
                "fp",
                pending[0].version,
                pending[-1].version,
            )
        else:
            assert stored == log, game_id
            assert not command_id or after.command_entry(game_id, command_id, seat=0) is None
