"""The lean script client (``services.store.lean``) answers exactly as redis-py's ``Script`` does, on a
real server: the same replies and errors, ``NOSCRIPT`` loaded and called again, every caller its own
reply however many wait at once, and a lost, restarted or frozen server met as redis-py meets it
(retried, then its ``ConnectionError`` or ``TimeoutError``)."""

from __future__ import annotations

import asyncio
import hashlib
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from services.store.connection import PoolLimits, async_client, sync_client
from services.store.embedded import EmbeddedRedis
from services.store.lean import LeanScripts, lean_pipelines, lean_scripts

pytestmark = pytest.mark.redis

ECHO = "redis.call('SET', KEYS[1], ARGV[1]); return {KEYS[1], ARGV[1], #ARGV, redis.call('INCR', KEYS[2])}"
FAIL = "return redis.error_reply('CONFLICT 7')"
SEED = 20261207


def lean_for(url: str, **kwargs: object) -> LeanScripts:
    found = lean_scripts(async_client(url, PoolLimits()))
    assert found is not None
    for name, value in kwargs.items():
        setattr(found, name, value)
    return found


async def both(url: str, source: str, keys: list[str], args: list[bytes]) -> tuple[object, object]:
    """The script's reply through redis-py's ``Script`` and through the lean client, in turns."""
    client = async_client(url, PoolLimits())
    lean = lean_for(url)
    script = client.register_script(source)
    try:
        return await script(keys=keys, args=args), await lean.evalsha(script.sha, source, keys, args)
    finally:
        await lean.aclose()
        await client.aclose()


@settings(max_examples=40, deadline=None)
@given(value=st.binary(max_size=300), extra=st.lists(st.binary(max_size=20), max_size=5))
def test_a_scripts_reply_is_redis_pys_whatever_the_arguments(
    redis_server: EmbeddedRedis, value: bytes, extra: list[bytes]
) -> None:
    keys = ["lean:{k}:value", "lean:{k}:count"]
    by_redis_py, by_lean = asyncio.run(both(redis_server.url, ECHO, keys, [value, *extra]))
    assert by_redis_py[:3] == by_lean[:3]  # type: ignore[index]
    assert by_lean[3] == by_redis_py[3] + 1  # type: ignore[index]  # the counter, one call later


def test_a_scripts_error_is_the_same_response_error_and_the_connection_goes_on(
    redis_server: EmbeddedRedis,
) -> None:
    async def run() -> None:
        lean = lean_for(redis_server.url)
        sha = redis.Redis.from_url(redis_server.url).script_load(FAIL)
        with pytest.raises(ResponseError, match="CONFLICT 7"):
            await lean.evalsha(sha, FAIL, ["lean:{e}:x"], [])
        redis.Redis.from_url(redis_server.url).script_flush()
        unknown = hashlib.sha1(ECHO.encode()).hexdigest()  # as redis-py's Script computes it
        reply = await lean.evalsha(unknown, ECHO, ["lean:{e}:a", "lean:{e}:b"], [b"after"])
        assert reply[1] == b"after"  # NOSCRIPT: loaded from the source, called again
        await lean.aclose()

    asyncio.run(run())


def test_a_flushed_script_is_loaded_again_and_answers(
    real_redis: redis.Redis, redis_server: EmbeddedRedis
) -> None:
    async def run() -> None:
        lean = lean_for(redis_server.url)
        sha = real_redis.script_load(ECHO)
        keys = ["lean:{f}:a", "lean:{f}:b"]
        assert (await lean.evalsha(sha, ECHO, keys, [b"1"]))[3] == 1
        real_redis.script_flush()
        assert (await lean.evalsha(sha, ECHO, keys, [b"2"]))[3] == 2
        await lean.aclose()

    asyncio.run(run())


def test_every_caller_gets_its_own_reply_however_many_wait_and_some_give_up(
    real_redis: redis.Redis, redis_server: EmbeddedRedis
) -> None:
    rng = random.Random(SEED)

    async def run() -> None:
        lean = lean_for(redis_server.url)
        sha = real_redis.script_load(ECHO)

        async def one(n: int) -> tuple[int, bytes]:
            reply = await lean.evalsha(sha, ECHO, [f"lean:{{{n}}}:a", f"lean:{{{n}}}:b"], [str(n).encode()])
            return n, reply[1]

        tasks = [asyncio.create_task(one(n)) for n in range(300)]
        given_up = set(rng.sample(range(300), 30))
        await asyncio.sleep(0)  # the calls are written
        for n in given_up:
            tasks[n].cancel()
        for n, task in enumerate(tasks):
            if n in given_up:
                continue
            number, echoed = await task
            assert echoed == str(number).encode()
        assert (await one(1000))[1] == b"1000"  # later calls are not shifted by the dropped replies
        await lean.aclose()

    asyncio.run(run())


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    """A server of the test's own: it takes a free port below the ephemeral range, and a restart keeps
    that port (``EmbeddedRedis.start``). A port chosen by the test was fixed: taken meanwhile by
    another worker's server, the start failed instead of trying another."""
    with EmbeddedRedis(tmp_path / "redis", durable=False) as server:
        yield server


def test_a_restarted_server_is_reached_again_and_a_dead_one_is_a_connection_error(
    own_server: EmbeddedRedis,
) -> None:
    async def run() -> None:
        lean = lean_for(own_server.url, backoff=(0.05,))
        keys = ["lean:{r}:a", "lean:{r}:b"]
        sha = redis.Redis.from_url(own_server.url).script_load(ECHO)
        assert (await lean.evalsha(sha, ECHO, keys, [b"before"]))[1] == b"before"
        own_server.restart()  # the connection is lost; the script cache with it
        assert (await lean.evalsha(sha, ECHO, keys, [b"after"]))[1] == b"after"
        own_server.stop()
        with pytest.raises(RedisConnectionError):
            await lean.evalsha(sha, ECHO, keys, [b"never"])
        await lean.aclose()

    asyncio.run(run())


def test_a_frozen_server_is_a_timeout_within_the_socket_timeout(own_server: EmbeddedRedis) -> None:
    async def run() -> None:
        lean = lean_for(own_server.url, timeout=0.3, retries=0)
        keys = ["lean:{t}:a", "lean:{t}:b"]
        sha = redis.Redis.from_url(own_server.url).script_load(ECHO)
        await lean.evalsha(sha, ECHO, keys, [b"warm"])
        redis.Redis.from_url(own_server.url).execute_command("CLIENT", "PAUSE", 3000, "ALL")
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(RedisTimeoutError):
            await lean.evalsha(sha, ECHO, keys, [b"frozen"])
        assert loop.time() - started < 2.5, "given up at the timeout, not when the server woke"
        await lean.aclose()

    asyncio.run(run())


def test_only_a_standalone_servers_plain_tcp_client_gets_a_lean_connection(
    redis_server: EmbeddedRedis,
) -> None:
    assert lean_scripts(async_client(redis_server.url, PoolLimits())) is not None
    assert lean_scripts(fakeredis.FakeAsyncRedis()) is None
    assert lean_scripts(aioredis.Redis(unix_socket_path="/tmp/none.sock")) is None
    assert lean_scripts(aioredis.Redis.from_url("rediss://127.0.0.1:1/0")) is None
    assert lean_scripts(redis.Redis.from_url(redis_server.url)) is None  # a sync client: not for asyncio
    assert lean_pipelines(redis.Redis.from_url(redis_server.url)) is not None
    assert lean_pipelines(fakeredis.FakeRedis()) is None
    assert lean_pipelines(redis.Redis(unix_socket_path="/tmp/none.sock")) is None


def redis_py_pipeline(url: str, commands: list[tuple[object, ...]]) -> list[object]:
    with redis.Redis.from_url(url).pipeline(transaction=False) as pipe:
        for args in commands:
            pipe.execute_command(*args)
        return pipe.execute(raise_on_error=False)


@settings(max_examples=30, deadline=None)
@given(values=st.lists(st.binary(max_size=200), min_size=1, max_size=12))
def test_a_pipeline_of_scripts_replies_as_redis_pys_pipeline_each_reply_or_error_in_its_place(
    redis_server: EmbeddedRedis, values: list[bytes]
) -> None:
    sync = redis.Redis.from_url(redis_server.url)
    echo, fail = sync.script_load(ECHO), sync.script_load(FAIL)
    commands: list[tuple[object, ...]] = []
    for n, value in enumerate(values):
        sha = fail if n % 5 == 4 else echo
        commands.append(("EVALSHA", sha, 2, f"lean:{{p{n}}}:a", f"lean:{{p{n}}}:b", value))
    pipes = lean_pipelines(sync)
    assert pipes is not None
    by_lean = pipes.execute(commands)
    by_redis_py = redis_py_pipeline(redis_server.url, commands)
    for mine, theirs in zip(by_lean, by_redis_py, strict=True):
        if isinstance(theirs, Exception):
            assert type(mine) is type(theirs) and str(mine) == str(theirs)
        else:
            assert mine[:3] == theirs[:3] and mine[3] + 1 == theirs[3]  # type: ignore[index]


def test_a_pipeline_meets_a_missing_script_in_its_place_and_a_restarted_server_again(
    own_server: EmbeddedRedis,
) -> None:
    sync = sync_client(own_server.url, PoolLimits())  # the workers' client: its retries
    pipes = lean_pipelines(sync)
    assert pipes is not None and pipes.retries > 0
    sha = sync.script_load(ECHO)
    call = ("EVALSHA", sha, 2, "lean:{s}:a", "lean:{s}:b", b"v")
    assert pipes.execute([call])[0][1] == b"v"
    own_server.restart()  # the connection is lost, and the script cache with it
    (missing,) = pipes.execute([call])
    assert isinstance(missing, NoScriptError)
    sync = redis.Redis.from_url(own_server.url)
    sync.script_load(ECHO)
    assert pipes.execute([call, call])[1][3] == 2
    own_server.stop()
    with pytest.raises(RedisConnectionError):
        pipes.execute([call])


def test_each_thread_has_its_own_pipeline_connection(redis_server: EmbeddedRedis) -> None:
    sync = redis.Redis.from_url(redis_server.url)
    pipes = lean_pipelines(sync)
    assert pipes is not None
    sha = sync.script_load(ECHO)
    answers: dict[int, list[bytes]] = {}

    def run(number: int) -> None:
        got = []
        for n in range(200):
            reply = pipes.execute(
                [("EVALSHA", sha, 2, f"lean:{{t{number}}}:a", f"lean:{{t{number}}}:b", f"{n}")]
            )
            got.append(reply[0][1])
        answers[number] = got

    threads = [threading.Thread(target=run, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(answers[number] == [str(n).encode() for n in range(200)] for number in range(4))
