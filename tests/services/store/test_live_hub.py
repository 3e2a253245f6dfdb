"""The live hub: one shard-channel subscription per game with open streams, on the node that holds
the game, given back when the last stream leaves, and taken again after the server comes back."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore
from services.store.keys import game_keys
from services.store.live_updates import LiveHub
from services.store.tokens import TokenStore
from tests.conftest import make_batch

pytestmark = [pytest.mark.anyio, pytest.mark.redis]


async def subscribers(client: aioredis.Redis, game_id: str) -> int:
    channel = game_keys(game_id).live
    reply = await client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
    return int(reply[1])


async def test_a_game_is_subscribed_while_it_has_streams_and_only_its_streams_wake(
    real_redis_async: aioredis.Redis,
) -> None:
    hub = LiveHub(real_redis_async)
    try:
        async with hub.subscribe("a") as first, hub.subscribe("a") as second, hub.subscribe("b") as other:
            assert hub.channel_count == 2 and await subscribers(real_redis_async, "a") == 1
            await real_redis_async.execute_command("SPUBLISH", game_keys("a").live, b"appended")
            assert await first.wait(5.0) and await second.wait(5.0)
            assert not await other.wait(0.2)
        with anyio.fail_after(5):
            while await subscribers(real_redis_async, "a") or await subscribers(real_redis_async, "b"):
                await anyio.sleep(0.01)
        assert hub.channel_count == 0
    finally:
        await hub.close()


async def test_streams_are_woken_and_subscribed_again_after_their_redis_restarts(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis", durable=False)
    client = aioredis.Redis.from_url(server.url)
    hub = LiveHub(client)
    try:
        async with hub.subscribe("g") as wakeups:
            await client.execute_command("SPUBLISH", game_keys("g").live, b"appended")
            assert await wakeups.wait(5.0)
            server.kill()
            server.start()  # the same port while it is free
            assert await wakeups.wait(10.0)  # woken to re-read: messages may have been missed
            probe = aioredis.Redis.from_url(server.url)  # a connection made after the restart
            try:
                deadline = time.monotonic() + 10
                while await subscribers(probe, "g") == 0:  # subscribed again on the restarted server
                    assert time.monotonic() < deadline, "the hub did not subscribe again"
                    await anyio.sleep(0.02)
                while await wakeups.wait(0.0):  # drop wake-ups queued meanwhile
                    pass
                await probe.execute_command("SPUBLISH", game_keys("g").live, b"appended")
                assert await wakeups.wait(5.0)
            finally:
                await probe.aclose()
    finally:
        await hub.close()
        await client.aclose()
        server.stop()


async def changes_heard(hub: LiveHub, game_id: str) -> list[str]:
    """Watch ``game_id`` until its subscription is confirmed; the list ``on_change`` appends to."""
    heard: list[str] = []
    hub.on_change = heard.append
    hub.watch(game_id)
    with anyio.fail_after(5):
        while not hub.confirmed(game_id):
            await anyio.sleep(0.005)
    return heard


@pytest.mark.parametrize("change", ["append", "write_views", "arm_timer", "bind_token", "revoke_token"])
async def test_every_write_a_view_shows_is_heard_by_a_watcher_before_a_fence_passes(
    real_redis_async: aioredis.Redis, change: str
) -> None:
    """What an API process keeps of a game's views is dropped on these messages
    (``services.api.view_cache``): each write announces itself, and a fence passed after the write
    has dispatched its message."""
    await real_redis_async.flushall()
    store = EventStore(real_redis_async)
    tokens = TokenStore(real_redis_async)
    first = make_batch(1, 1, "create")
    assert await store.create("g", {"root": "00", "master": "11"}, first[0])
    hub = LiveHub(real_redis_async)
    try:
        heard = await changes_heard(hub, "g")
        if change == "append":
            await store.append("g", 1, "c1", "f1", 0, make_batch(2, 1, "c1", first[0].hash))
        elif change == "write_views":
            await store.write_views("g", 0, 1, {"spectator": b"{}"})
        elif change == "arm_timer":
            await store.arm_timer("g", 1, 10_000, {"kind": "expire"})
        elif change == "bind_token":
            await tokens.bind("g", "token", "0")
        else:
            await tokens.revoke("g", "token")
        assert await hub.fence("g")
        assert heard == ["g"]
        assert await hub.fence("g") and heard == ["g"]  # a fence alone changes nothing
    finally:
        await hub.close()


@dataclass
class PrivateHub:
    """A hub on a Redis server of its own (a test may kill or pause it), and a second client."""

    server: EmbeddedRedis
    hub: LiveHub
    other: aioredis.Redis


@asynccontextmanager
async def private_hub(tmp_path: Path) -> AsyncIterator[PrivateHub]:
    server = EmbeddedRedis(tmp_path / "redis", durable=False)
    client = aioredis.Redis.from_url(server.url)
    other = aioredis.Redis.from_url(server.url)
    hub = LiveHub(client)
    try:
        yield PrivateHub(server, hub, other)
    finally:
        with contextlib.suppress(RedisError):  # a paused server answers again
            await other.execute_command("CLIENT", "UNPAUSE")
        await hub.close()
        await client.aclose()
        await other.aclose()
        server.stop()


async def test_no_fence_passes_while_the_subscriber_is_lost_and_its_games_count_as_changed(
    tmp_path: Path,
) -> None:
    async with private_hub(tmp_path) as private:
        server, hub = private.server, private.hub
        heard = await changes_heard(hub, "g")
        server.kill()
        with anyio.fail_after(5):
            while not heard:  # the reading task finds its connection closed
                await anyio.sleep(0.005)
        assert heard == ["g"] and not hub.confirmed("g")
        assert not await hub.fence("g")  # messages may be missed while it is down
        server.start()
        with anyio.fail_after(10):
            while not hub.confirmed("g"):  # subscribed again
                await anyio.sleep(0.01)
        assert await hub.fence("g")


async def test_a_fence_fails_rather_than_waits_when_redis_stops_answering(tmp_path: Path) -> None:
    async with private_hub(tmp_path) as private:
        hub = private.hub
        await changes_heard(hub, "g")
        assert await hub.fence("g")
        await private.other.execute_command("CLIENT", "PAUSE", 4000, "ALL")  # nothing is answered for 4 s
        started = time.monotonic()
        with anyio.fail_after(3.5):
            assert not await hub.fence("g")  # given up on after FENCE_SECONDS: the caller reads Redis
        assert time.monotonic() - started >= 0.9


async def test_a_fence_waiting_when_the_hub_begins_to_close_fails_at_once(tmp_path: Path) -> None:
    """A view request waiting on a fence at shutdown reads Redis or is drained; it never holds the
    drain until the fence gives up."""
    passed: list[bool] = []
    async with private_hub(tmp_path) as private:
        hub = private.hub
        await changes_heard(hub, "g")
        await private.other.execute_command("CLIENT", "PAUSE", 3000, "ALL")  # the PING's answer is held back

        async def fence() -> None:
            passed.append(await hub.fence("g"))

        with anyio.fail_after(0.5):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(fence)
                await anyio.wait_all_tasks_blocked()  # the fence waits for its PING's answer
                hub.begin_close()
    assert passed == [False]
