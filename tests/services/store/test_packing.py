"""hiredis packs the async clients' commands into the same bytes redis-py's own packer writes."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from services.store.connection import PoolLimits, async_client, async_cluster_client
from services.store.embedded import EmbeddedRedis
from services.store.packing import HiredisPacking, pack
from tests.support.cluster import LocalCluster

ARGUMENT = st.one_of(
    st.binary(max_size=64),
    st.text(max_size=32),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.binary(max_size=16).map(bytearray),
    st.binary(max_size=16).map(memoryview),
)
NAME = st.sampled_from(["EVALSHA", "XADD", "HSET", "CONFIG GET", b"CLIENT SETNAME", b"GET"])


def python_packed(*args: object) -> bytes:
    return b"".join(bytes(part) for part in Connection().pack_command(*args))


@given(NAME, st.lists(ARGUMENT, max_size=40))
def test_a_command_is_packed_into_the_bytes_redis_py_writes(name: str | bytes, args: list[object]) -> None:
    assert pack((name, *args)) == python_packed(name, *args)


@given(st.lists(st.tuples(NAME, st.lists(ARGUMENT, max_size=8)), min_size=1, max_size=6))
def test_a_pipeline_is_packed_into_the_bytes_redis_py_writes(
    commands: list[tuple[object, list[object]]],
) -> None:
    flat = [(name, *args) for name, args in commands]
    packed = b"".join(HiredisPacking().pack_commands(flat))
    assert packed == b"".join(bytes(part) for part in Connection().pack_commands(flat))


@pytest.mark.parametrize("value", [True, None, object(), [1, 2]])
def test_a_value_redis_has_no_form_for_is_refused_as_redis_py_refuses_it(value: object) -> None:
    with pytest.raises(DataError):
        python_packed("SET", "k", value)
    with pytest.raises(DataError):
        pack(("SET", "k", value))


@pytest.mark.redis
async def test_the_store_clients_pack_with_hiredis_and_a_script_and_a_pipeline_round_trip(
    redis_server: EmbeddedRedis, anyio_backend: str
) -> None:
    client = async_client(redis_server.url, PoolLimits())
    try:
        await client.flushall()
        assert issubclass(client.connection_pool.connection_class, HiredisPacking)
        script = client.register_script("return {KEYS[1], ARGV[1], ARGV[2], ARGV[3]}")
        assert await script(keys=["ts:{g}:k"], args=["zażółć", 12, 2.5]) == [
            b"ts:{g}:k",
            "zażółć".encode(),
            b"12",
            b"2.5",
        ]
        async with client.pipeline(transaction=True) as pipe:
            pipe.set("a", b"\x00\xff" * 5000).rpush("l", *range(100)).get("a").lrange("l", 98, -1)
            assert await pipe.execute() == [True, 100, b"\x00\xff" * 5000, [b"98", b"99"]]
    finally:
        await client.aclose()


def test_a_plain_async_client_keeps_redis_pys_packer() -> None:
    assert not issubclass(aioredis.Redis().connection_pool.connection_class, HiredisPacking)


@pytest.mark.redis
async def test_the_cluster_client_packs_with_hiredis_on_every_node_and_a_script_round_trips(
    real_cluster: LocalCluster, anyio_backend: str
) -> None:
    client = async_cluster_client(real_cluster.url, PoolLimits())
    try:
        script = client.register_script("return {KEYS[1], ARGV[1]}")
        for game in ("a", "b", "c", "d", "e", "f"):  # keys in slots of every primary
            assert await script(keys=[f"ts:{{{game}}}:k"], args=["ż"]) == [
                f"ts:{{{game}}}:k".encode(),
                "ż".encode(),
            ]
        nodes = client.get_primaries()
        assert len(nodes) == 3
        for node in nodes:
            assert node.connection_class is not None and issubclass(node.connection_class, HiredisPacking)
    finally:
        await client.aclose()
