"""The local Redis Cluster for tests: three primaries with a replica each, keys spread by hash tag,
and a SIGKILLed primary replaced by its replica without losing a write acknowledged by WAITAOF."""

from __future__ import annotations

import time

import pytest
import redis

from tests.support.cluster import SLOTS, LocalCluster

pytestmark = pytest.mark.redis


def test_the_cluster_has_three_primaries_each_with_one_replica_and_every_slot_covered(
    real_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    primaries, replicas = real_cluster.primaries(), real_cluster.replicas()
    assert len(primaries) == 3 and len(replicas) == 3
    assert len({node.pid for node in primaries + replicas}) == 6
    # the client's own slot map (from CLUSTER SLOTS): every slot has a primary and one replica
    slot_map = cluster_client.nodes_manager.slots_cache
    assert sorted(slot_map) == list(range(SLOTS))
    pairs = {tuple(node.port for node in nodes) for nodes in slot_map.values()}
    assert {primary for primary, _ in pairs} == {node.port for node in primaries}
    assert {replica for _, replica in pairs} == {node.port for node in replicas}
    for primary_port, replica_port in pairs:
        replica = next(node for node in replicas if node.port == replica_port)
        with replica.client() as client:
            replication = client.info("replication")
        assert replication["role"] == "slave" and replication["master_link_status"] == "up"
        assert replication["master_port"] == primary_port


def test_keys_with_different_hash_tags_land_on_several_primaries(
    real_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    keys = [f"ts:{{game-{n}}}:events" for n in range(12)]
    for key in keys:
        cluster_client.xadd(key, {"d": key})
    owners = real_cluster.slot_owner_ports(keys)
    assert len(set(owners.values())) == 3
    assert owners == {key: cluster_client.get_node_from_key(key).port for key in keys}  # type: ignore[no-untyped-call]
    sizes = {}
    for primary in real_cluster.primaries():
        with primary.client() as client:
            sizes[primary.port] = client.dbsize()
            for key in keys:
                if owners[key] == primary.port:
                    assert client.xlen(key) == 1  # a plain connection to the owner has it
    assert sizes == {port: list(owners.values()).count(port) for port in set(owners.values())}


@pytest.mark.slow
def test_a_killed_primary_is_replaced_by_its_replica_with_the_writes_waitaof_acknowledged(
    real_cluster: LocalCluster, cluster_client: redis.RedisCluster
) -> None:
    key = "ts:{game-1}:events"
    owner = cluster_client.get_node_from_key(key)  # type: ignore[no-untyped-call]
    with cluster_client.get_redis_connection(owner).pipeline(transaction=False) as pipe:
        pipe.set(key, "acknowledged")
        pipe.execute_command("WAITAOF", 1, 1, 5000)  # type: ignore[no-untyped-call]
        assert pipe.execute() == [True, [1, 1]]  # fsynced on the primary and on its replica
    victim = real_cluster.primary_for_key(key)
    assert victim.port == owner.port
    replica = real_cluster.replica_of(victim)

    started = time.monotonic()
    real_cluster.kill(victim)
    promoted = real_cluster.wait_for_failover(victim, timeout=15)
    print(f"failover in {time.monotonic() - started:.2f} s")

    assert promoted is replica
    assert victim not in real_cluster.primaries()
    assert real_cluster.primary_for_key(key) is promoted
    assert cluster_client.get(key) == b"acknowledged"  # the client from before the kill finds it
    assert cluster_client.set(key, "after")

    real_cluster.reset()
    assert real_cluster.replica_of(promoted) is victim  # back as the new primary's replica
    assert cluster_client.get(key) == b"after"
