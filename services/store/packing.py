"""Commands packed into the Redis protocol by hiredis's C packer on redis-py's asyncio connections.

redis-py's synchronous connections already pack with ``hiredis.pack_command`` when hiredis is
installed (``redis.connection.HiredisRespSerializer``); its asyncio connections always pack in
Python, argument by argument (``Connection.pack_command``). An append carries 30-40 arguments (its
keys, the events, the chain, the record, the timer): redis-py's packer spends about 85 us on one,
hiredis about 12 us, with the same bytes on the wire (``tests/services/store/test_packing.py``).
``with_hiredis_packing`` gives a client's pool a connection class that packs with hiredis; every
other part of the connection (reading, retries, health checks, timeouts) stays redis-py's.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import Any, TypeVar

import hiredis
import redis.asyncio as aioredis
from redis.exceptions import DataError

C = TypeVar("C", bound=type)


def pack(args: tuple[Any, ...]) -> bytes:
    """One command in the Redis protocol, as redis-py's own packers write it: a first argument with
    spaces ('CONFIG GET') is split into words; a bool or another type Redis has no form for is a
    ``DataError``, as redis-py's encoder says."""
    first = args[0]
    if isinstance(first, str):
        if " " in first:
            args = tuple(first.encode().split()) + args[1:]
    elif b" " in first:
        args = tuple(first.split()) + args[1:]
    try:
        return hiredis.pack_command(args)  # bytes, str, int, float and memoryview
    except TypeError:
        pass
    args = tuple(bytes(arg) if isinstance(arg, bytearray) else arg for arg in args)
    for arg in args:
        if isinstance(arg, bool) or not isinstance(arg, (bytes, str, int, float, memoryview)):
            raise DataError(
                f"Invalid input of type: '{type(arg).__name__}'. "
                "Convert to a bytes, string, int or float first."
            )
    return hiredis.pack_command(args)


class HiredisPacking:
    """Mixed in before a redis-py asyncio connection class: packs with hiredis."""

    def pack_command(self, *args: Any) -> list[bytes]:
        return [pack(args)]

    def pack_commands(self, commands: Iterable[Iterable[Any]]) -> list[bytes]:
        return [b"".join(pack(tuple(command)) for command in commands)]


@cache
def packed(connection_class: C) -> C:
    """``connection_class`` (TCP, unix socket or TLS) with hiredis's packer; one class per class."""
    return type(f"Hiredis{connection_class.__name__}", (HiredisPacking, connection_class), {})  # type: ignore[return-value]


def with_hiredis_packing(client: aioredis.Redis) -> aioredis.Redis:
    """The client, whose pool now makes connections that pack with hiredis (made before: none yet)."""
    pool = client.connection_pool
    pool.connection_class = packed(pool.connection_class)
    return client


def cluster_with_hiredis_packing(client: aioredis.RedisCluster) -> aioredis.RedisCluster:
    """The cluster client, not yet initialised, whose nodes make connections that pack with hiredis:
    the nodes it starts from and every node it learns of later (made from the same keyword
    arguments, ``connection_class`` among them)."""
    kwargs = client.nodes_manager.connection_kwargs
    kwargs["connection_class"] = packed(kwargs.get("connection_class", aioredis.Connection))
    client.connection_kwargs["connection_class"] = kwargs["connection_class"]
    for node in client.nodes_manager.startup_nodes.values():
        node.connection_class = kwargs["connection_class"]
    return client
