"""The live hub: one shard-channel subscription per game with open streams, on the node that holds
the game, given back when the last stream leaves, and taken again after the server comes back."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
import redis.asyncio as aioredis

from services.store.embedded import EmbeddedRedis
from services.store.keys import game_keys
from services.store.live_updates import LiveHub

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
