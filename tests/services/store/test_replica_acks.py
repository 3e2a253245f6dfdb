"""Appends that wait for replicas (``TABLESTREAM_APPEND_REPLICAS``): confirmed on a real cluster's
replicas (``WAITAOF 1 1``), and refused with ``NotReplicated`` (HTTP 503 ``not_replicated``) when
no replica confirms; a retry of the same command id waits again and then gets its receipt."""

from __future__ import annotations

import pytest
import redis

from services.store.connection import Acks, NotReplicated
from services.store.event_store import SyncEventStore
from services.store.keys import game_keys
from services.store.operations import AppendResult
from tests.conftest import make_batch
from tests.support.cluster import LocalCluster

pytestmark = pytest.mark.redis

SECRET = {"root": "ab" * 32, "master": "cd" * 32}


def test_acks_ask_for_wait_then_waitaof_within_the_timeout_or_wait_and_count_the_replies() -> None:
    # WAIT first (its ack request makes the replica report without its once-a-second cycle), the
    # two timeouts adding up to the one the settings promise, and never WAIT N 0 (for ever)
    assert Acks(2, "waitaof", 500).requests() == [("WAIT", 2, 250), ("WAITAOF", 1, 2, 250)]
    assert Acks(2, "waitaof", 1001).requests() == [("WAIT", 2, 500), ("WAITAOF", 1, 2, 501)]
    assert Acks(1, "waitaof", 1).requests() == [("WAITAOF", 1, 1, 1)]
    assert Acks(2, "waitaof", 500).request() == ("WAITAOF", 1, 2, 250)  # the reply that is judged
    assert Acks(1, "wait", 300).requests() == [("WAIT", 1, 300)]
    assert Acks(1, "waitaof").enough([1, 1]) and not Acks(1, "waitaof").enough([1, 0])
    assert not Acks(1, "waitaof").enough([0, 1])  # not fsynced on the primary itself
    assert Acks(2, "wait").enough(2) and not Acks(2, "wait").enough(1)
    with pytest.raises(ValueError, match="append_ack"):
        Acks(1, "fsync")  # type: ignore[arg-type]


def test_an_append_no_replica_confirms_is_stored_but_not_acknowledged_and_its_retry_waits_again(
    real_redis: redis.Redis,
) -> None:
    lonely = SyncEventStore(real_redis, acks=Acks(1, "wait", 50))  # a server without replicas
    first = make_batch(1, 1, "create-g")
    with pytest.raises(NotReplicated):
        lonely.create("g", SECRET, first[0])
    assert real_redis.xlen(game_keys("g").events) == 1  # stored on the primary, not acknowledged
    batch = make_batch(2, 2, "c1", first[0].hash)
    with pytest.raises(NotReplicated):
        lonely.append("g", 1, "c1", "fp", 0, batch)
    with pytest.raises(NotReplicated):  # the retry finds the command recorded and waits again
        lonely.append("g", 1, "c1", "fp", 0, batch)
    answered = SyncEventStore(real_redis).append("g", 1, "c1", "fp", 0, batch)
    assert answered == AppendResult("dup", first=2, last=3, fingerprint="fp")  # applied once
    assert real_redis.xlen(game_keys("g").events) == 3


def test_appends_on_a_cluster_are_acknowledged_once_a_replica_has_them_in_its_aof(
    real_cluster: LocalCluster, real_redis: redis.Redis
) -> None:
    store = SyncEventStore(real_cluster.client(), real_redis, Acks(1, "waitaof", 2000))
    log = make_batch(1, 1, "create-c")
    assert store.create("c", SECRET, log[0])
    previous = log[0].hash
    for version in range(2, 12):
        batch = make_batch(version, 1, f"c{version}", previous)
        assert store.append("c", version - 1, f"c{version}", "fp", 0, batch).status == "ok"
        previous = batch[-1].hash
    replica = real_cluster.replica_of(real_cluster.primary_for_key(game_keys("c").events)).client()
    replica.execute_command("READONLY")  # a replica answers reads of its primary's slots
    assert replica.xlen(game_keys("c").events) == 11  # already on the replica when acknowledged
