"""Unit tests of the hardening parts: rate limiter, pool wait, stream caps, data-dir lock, port check,
readiness, 503 for a Redis that is down, and the dirty set the sweeper reads."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest
import redis
from limits import parse
from starlette.testclient import TestClient

from services.api.app import create_app
from services.api.probes import Readiness
from services.api.rate_limits import LocalWindows, RateLimits
from services.api.stream_slots import StreamSlots
from services.cli.serve import DataDirLocked, bind_port, data_dir_lock
from services.errors import TooManyError, UnavailableError
from services.operating.config import Settings
from services.store.connection import UNAVAILABLE, PoolLimits, async_client, connect_to
from services.store.embedded import EmbeddedRedis, free_port
from services.store.event_store import SyncEventStore
from services.store.keys import DIRTY
from services.store.queue import lifecycle_queue, projection_queue
from workers.projector import Projector
from workers.sweeper import sweep

RATES = {"create": "3/minute", "join": "3/minute", "command": "3/minute"}


@pytest.mark.anyio
async def test_the_rate_limiter_refuses_past_the_rate_with_a_retry_after_and_counts_clients_apart() -> None:
    limits = RateLimits(dict(RATES))
    for _ in range(3):
        await limits.hit("create", "10.0.0.1")
    with pytest.raises(TooManyError) as refused:
        await limits.hit("create", "10.0.0.1")
    assert refused.value.code == "rate_limited"
    assert 1 <= refused.value.retry_after <= 60
    await limits.hit("create", "10.0.0.2")  # another client is not affected
    await limits.hit("join", "10.0.0.1")  # nor another action


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("seed", range(5))
def test_local_windows_never_allow_more_than_the_rate_in_any_window(seed: int) -> None:
    rng = random.Random(seed)
    clock = Clock()
    windows = LocalWindows(clock)
    item = parse("5/10 seconds")
    allowed: list[float] = []
    for _ in range(400):
        clock.now += rng.choice((0.0, 0.01, 0.5, 1.0, 3.0))
        wait = windows.hit(item, "command", "10.0.0.1")
        if wait is None:
            allowed.append(clock.now)
        else:
            assert 0 < wait <= 10
            inside = [t for t in allowed if t > clock.now - 10]
            assert len(inside) == 5  # refused only when the window is full
            assert min(inside) + 10 - clock.now == pytest.approx(wait)
    for i, start in enumerate(allowed):
        assert len([t for t in allowed[i:] if t < start + 10]) <= 5
    assert len(allowed) > 100


def test_local_windows_free_a_slot_when_the_window_moves_and_forget_idle_clients() -> None:
    clock = Clock()
    windows = LocalWindows(clock)
    item = parse("2/minute")
    assert windows.hit(item, "join", "a") is None
    clock.now += 30
    assert windows.hit(item, "join", "a") is None
    assert windows.hit(item, "join", "a") == pytest.approx(30)
    clock.now += 30
    assert windows.hit(item, "join", "a") is None  # the first hit left the window
    for client in range(100):
        windows.hit(item, "join", f"client-{client}")
    clock.now += 61
    windows.hit(item, "join", "b")  # a sweep: every client idle for a window is dropped
    assert len(windows) == 1


@pytest.mark.redis
@pytest.mark.anyio
async def test_api_processes_share_counts_through_a_redis_storage(redis_server: EmbeddedRedis) -> None:
    redis.Redis.from_url(redis_server.url).flushall()
    uri = f"async+redis://127.0.0.1:{redis_server.port}"
    first, second = RateLimits(dict(RATES), uri), RateLimits(dict(RATES), uri)
    for limits in (first, second, first):
        await limits.hit("command", "10.0.0.1")
    with pytest.raises(TooManyError) as refused:
        await second.hit("command", "10.0.0.1")
    assert 1 <= refused.value.retry_after <= 60


def test_the_rate_limiter_refuses_a_synchronous_storage() -> None:
    with pytest.raises(ValueError, match="async"):
        RateLimits(dict(RATES), "memory://")


def test_settings_come_from_the_environment_and_a_bad_value_is_refused() -> None:
    settings = Settings.from_env({"TABLESTREAM_LIVE_MAX_STREAMS": "7", "TABLESTREAM_CREATE_RATE": "1/second"})
    assert (settings.live_max_streams, settings.create_rate) == (7, "1/second")
    assert Settings.from_env({}).max_waiting_tables == 10_000
    with pytest.raises(ValueError, match="TABLESTREAM_REDIS_POOL_TIMEOUT"):
        Settings.from_env({"TABLESTREAM_REDIS_POOL_TIMEOUT": "soon"})


@pytest.mark.redis
@pytest.mark.anyio
async def test_a_full_pool_waits_for_a_connection_and_gives_up_after_its_timeout(
    redis_server: EmbeddedRedis,
) -> None:
    waits = async_client(redis_server.url, PoolLimits(max_connections=1, pool_timeout=3.0))
    try:
        held = asyncio.create_task(waits.blpop(["hardening:nothing"], timeout=0.3))  # holds the connection
        await asyncio.sleep(0)
        assert await waits.ping()  # waited for the held connection instead of failing
        await held
    finally:
        await waits.aclose()
    impatient = async_client(redis_server.url, PoolLimits(max_connections=1, pool_timeout=0.1))
    try:
        held = asyncio.create_task(impatient.blpop(["hardening:nothing"], timeout=1))
        await asyncio.sleep(0.05)
        with pytest.raises(UNAVAILABLE):
            await impatient.ping()
        await held
    finally:
        await impatient.aclose()


def test_stream_slots_cap_each_client_and_the_whole_server_and_come_back_once() -> None:
    slots = StreamSlots(total=3, per_client=2)
    a1, a2 = slots.take("a"), slots.take("a")
    with pytest.raises(TooManyError):
        slots.take("a")
    b1 = slots.take("b")
    with pytest.raises(UnavailableError):
        slots.take("c")
    a1.release()
    a1.release()  # twice is once
    assert slots.open == 2
    slots.take("c")
    b1.release()
    a2.release()
    assert slots.open == 1


def test_a_second_lock_on_the_data_directory_is_refused_and_names_the_holder(tmp_path: Path) -> None:
    with data_dir_lock(tmp_path), pytest.raises(DataDirLocked, match=r"pid \d+"), data_dir_lock(tmp_path):
        pass
    with data_dir_lock(tmp_path):  # released with the block
        pass


def test_a_port_in_use_is_reported_before_anything_starts() -> None:
    taken = bind_port("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(OSError, match=f"cannot listen on 127.0.0.1:{port}"):
            bind_port("127.0.0.1", port)
    finally:
        taken.close()


@pytest.fixture
def fake_app() -> Iterator[tuple[TestClient, fakeredis.FakeRedis, fakeredis.FakeServer]]:
    server = fakeredis.FakeServer()
    app = create_app(  # every probe checks again (no period), so each answer is of its own check
        Settings(ready_check_seconds=0),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, fakeredis.FakeRedis(server=server), server


def test_healthz_stays_ready_while_a_projection_lags_and_is_503_once_redis_stops_answering(
    fake_app: tuple[TestClient, fakeredis.FakeRedis, fakeredis.FakeServer],
) -> None:
    client, sync, server = fake_app
    assert client.get("/healthz").json() == {"status": "ok"}
    sync.zadd(DIRTY, {"old-game": int(time.time() * 1000) - 3_600_000})  # lagging for an hour
    lagging = client.get("/healthz")
    assert (lagging.status_code, lagging.json()) == (200, {"status": "ok"})  # the workers' business
    server.connected = False
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["reason"] == "redis_unreachable"
    assert response.headers["retry-after"]
    assert client.get("/livez").status_code == 200
    server.connected = True
    assert client.get("/healthz").status_code == 200


def test_a_redis_that_is_down_is_a_503_unavailable_with_retry_after_and_not_ready() -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    limits = PoolLimits(pool_timeout=0.5, socket_timeout=0.5, retries=0)
    with TestClient(
        create_app(Settings(), connect_to(dead, limits)), raise_server_exceptions=False
    ) as client:
        created = client.post("/games", json={"game": "skull", "players": 3})
        assert created.status_code == 503, created.text
        assert created.json()["error"]["code"] == "unavailable"
        assert int(created.headers["retry-after"]) >= 1
        assert client.get("/games/abc/view").status_code == 503
        health = client.get("/healthz")
        assert (health.status_code, health.json()["reason"]) == (503, "redis_unreachable")
        assert client.get("/livez").status_code == 200


def test_creating_tables_past_the_cap_on_waiting_tables_is_refused() -> None:
    server = fakeredis.FakeServer()
    settings = Settings(max_waiting_tables=2)
    app = create_app(
        settings, lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server))
    )
    with TestClient(app) as client:
        for _ in range(2):
            assert client.post("/games", json={"game": "skull", "players": 3}).status_code == 201
        refused = client.post("/games", json={"game": "skull", "players": 3})
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == "too_many_tables"


def test_the_sweeper_reads_only_marked_games_and_the_projector_clears_their_marks() -> None:
    server = fakeredis.FakeServer()
    sync = fakeredis.FakeRedis(server=server)
    app = create_app(
        Settings(), lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server))
    )
    with TestClient(app) as client:
        games = [
            client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"] for _ in range(3)
        ]
    store = SyncEventStore(sync)
    assert set(store.dirty_games(0, 100)) == set(games)
    Projector(store).catch_up(games[0])
    assert set(store.dirty_games(0, 100)) == set(games[1:])  # caught up: no longer marked
    sync.delete("rq:queue:projections")
    assert sorted(sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0).lagging) == sorted(
        games[1:]
    )
    sync.zrem(DIRTY, *games[1:])  # a game not marked is never looked at, however far it lags
    assert sweep(store, projection_queue(sync), lifecycle_queue(sync), grace_ms=0).lagging == []


class CountingStore:
    """A store's ping, counted; it waits for ``gate`` so checks can overlap, and fails while
    ``down``."""

    def __init__(self) -> None:
        self.checks = 0
        self.down = False
        self.gate = asyncio.Event()
        self.gate.set()

    async def ping(self) -> None:
        self.checks += 1
        await self.gate.wait()
        if self.down:
            raise redis.exceptions.ConnectionError("down")


@pytest.mark.anyio
async def test_probes_within_the_period_share_one_check_and_a_later_probe_checks_again() -> None:
    store, closing = CountingStore(), False
    readiness = Readiness(store.ping, lambda: closing, check_seconds=0.3)
    store.gate.clear()
    waiting = [asyncio.ensure_future(readiness.answer()) for _ in range(20)]
    await asyncio.sleep(0)  # every probe is waiting on the one check
    store.gate.set()
    answers = await asyncio.gather(*waiting)
    assert store.checks == 1 and {a.body for a in answers} == {b'{"status":"ok"}'}
    assert (await readiness.answer()).ready and store.checks == 1  # within the period: no check
    store.down = True
    deadline = time.monotonic() + 5
    while (answer := await readiness.answer()).ready:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    assert answer.status == 503 and b"redis_unreachable" in answer.body and store.checks == 2
    closing = True
    assert b"shutting_down" in (await readiness.answer()).body and store.checks == 2  # at once
