"""Durable mode on the real cluster (``append_replicas=1``, ``WAITAOF``): a retried command or join
whose record exists is answered only once the replica has it. With the shard's replica stopped
(SIGSTOP) the retry is a 503 ``not_replicated``, never a 200 the replica could not back; once the
replica is back the same retry gets the first try's receipt, or the first try's seat and token."""

from __future__ import annotations

import os
import random
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from bots import choose
from services.store.embedded import EmbeddedRedis
from services.store.keys import game_keys
from tests.api.conftest import Api, practice
from tests.api.test_cluster import api_on_cluster
from tests.services.hardening.test_cluster_failover import retried
from tests.support.cluster import LocalCluster

pytestmark = [pytest.mark.redis, pytest.mark.slow]


@pytest.fixture
def durable_api(
    real_cluster: LocalCluster,
    redis_server: EmbeddedRedis,
    real_redis: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Api]:
    with api_on_cluster(
        real_cluster, redis_server, monkeypatch, append_replicas=1, append_ack="waitaof",
        append_ack_timeout_ms=400,
    ) as client:  # fmt: skip
        yield Api(client, real_redis)


@contextmanager
def replica_stopped(cluster: LocalCluster, game_id: str) -> Iterator[None]:
    """The replica of ``game_id``'s shard stopped (SIGSTOP: alive, silent) for the block, then
    continued, and the cluster healthy again before the block's caller goes on."""
    replica = cluster.replica_of(cluster.primary_for_key(game_keys(game_id).events))
    assert replica.pid is not None
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(replica.pid, signal.SIGCONT)
    cluster.wait_healthy()


def join(client: Any, game_id: str, name: str, outages: list[str]) -> Any:
    key = {"Idempotency-Key": f"join-{uuid.uuid4().hex}"}
    path = f"/games/{game_id}/players"
    return retried(lambda: client.post(path, json={"name": name}, headers=key), outages)


def table(client: Any, outages: list[str], seed: int) -> str:
    key = {"Idempotency-Key": f"create-{uuid.uuid4().hex}"}
    body = {"game": "skull", "players": 3, "options": practice("skull", seed)}
    created = retried(lambda: client.post("/games", json=body, headers=key), outages)
    assert created.status_code == 201, created.text
    return str(created.json()["game_id"])


def test_a_retried_command_waits_for_the_replica_and_is_a_503_while_the_replica_cannot_confirm(
    durable_api: Api, real_cluster: LocalCluster
) -> None:
    client, outages = durable_api.client, list[str]()
    game_id = table(client, outages, 1)
    tokens = [join(client, game_id, f"P{seat}", outages).json()["token"] for seat in range(3)]
    seat = retried(lambda: client.get(f"/games/{game_id}/view"), outages).json()["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    own = retried(lambda: client.get(f"/games/{game_id}/view", headers=auth), outages).json()
    body = {"command_id": uuid.uuid4().hex, "command": choose("skull", own, random.Random(8))}
    first = retried(lambda: client.post(f"/games/{game_id}/commands", json=body, headers=auth), outages)
    assert first.status_code == 200, first.text

    with replica_stopped(real_cluster, game_id):
        unconfirmed = client.post(f"/games/{game_id}/commands", json=body, headers=auth)
    assert unconfirmed.status_code == 503, unconfirmed.text  # not a 200 the replica could not back
    assert unconfirmed.json()["error"]["code"] == "not_replicated"

    again = retried(lambda: client.post(f"/games/{game_id}/commands", json=body, headers=auth), outages)
    assert again.status_code == 200, again.text
    receipt = ("game_id", "version", "hash", "key_id")  # the first try's, applied once (signed again)
    assert [again.json()["receipt"][k] for k in receipt] == [first.json()["receipt"][k] for k in receipt]


def test_a_join_answered_503_is_retried_to_the_same_seat_and_token_once_the_replica_is_back(
    durable_api: Api, real_cluster: LocalCluster
) -> None:
    client, outages = durable_api.client, list[str]()
    game_id = table(client, outages, 2)
    assert join(client, game_id, "P0", outages).json()["seat"] == 0
    key = {"Idempotency-Key": f"join-{uuid.uuid4().hex}"}

    def ada() -> Any:
        return client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=key)

    with replica_stopped(real_cluster, game_id):
        unconfirmed = ada()
        assert unconfirmed.status_code == 503, unconfirmed.text
        assert unconfirmed.json()["error"]["code"] == "not_replicated"
        still = ada()  # its record exists, the replica cannot confirm it: 503 again, no second seat
        assert still.status_code == 503 and still.json()["error"]["code"] == "not_replicated"

    seated = retried(ada, outages)
    assert seated.status_code == 201, seated.text
    assert seated.json()["seat"] == 1
    assert retried(ada, outages).json() == seated.json()
    own = client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {seated.json()['token']}"})
    assert own.status_code == 200 and own.json()["seat"] == 1
    last = join(client, game_id, "P2", outages)  # the table had one seat left, not none
    assert last.status_code == 201 and last.json()["seat"] == 2
