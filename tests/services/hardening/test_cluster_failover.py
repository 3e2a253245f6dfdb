"""A primary of the store's Redis Cluster killed with SIGKILL under load: its replica is promoted,
the load resumes, and every command that got a receipt is still in its stream; every game verifies.

Appends wait for one replica's AOF (``append_replicas=1``, ``WAITAOF 1 1``), so an acknowledged
event is on the replica that takes over. Until the dead node is back as the new primary's replica,
that shard has no replica to confirm on: its commands get 503 ``not_replicated`` (no receipt, no
promise), and clients retry them with the same command id."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import redis

from bots import choose
from services.history.verify import verify_export
from services.store.embedded import EmbeddedRedis
from services.store.keys import game_keys
from tests.api.conftest import Api, practice
from tests.api.test_cluster import api_on_cluster
from tests.support.cluster import LocalCluster

pytestmark = [pytest.mark.redis, pytest.mark.slow]

RETRY_SECONDS = 60.0
TABLES = 3
PLAYERS = 3


def retried(call: Callable[[], httpx.Response], outages: list[str]) -> httpx.Response:
    """``call`` until it is not a 503 (the shard failing over or without its replica), within a
    deadline; each 503's code is noted."""
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        response = call()
        if response.status_code != 503:
            return response
        outages.append(response.json().get("error", {}).get("code", response.json().get("reason", "?")))
        assert time.monotonic() < deadline, f"still 503 after {RETRY_SECONDS} s: {response.text}"
        threading.Event().wait(0.05)  # a client's back-off between retries


def join(client: Any, game_id: str, name: str, outages: list[str]) -> str:
    """A seat's token. Before any node is killed a shard may still be linking its replica back after
    the previous test's failover, or a loaded machine may miss the replica's ack: that 503 is
    retried with the same Idempotency-Key, so a join the primary kept is answered with its seat and
    token instead of taking a second seat."""
    key = {"Idempotency-Key": f"join-{uuid.uuid4().hex}"}
    joined = retried(
        lambda: client.post(f"/games/{game_id}/players", json={"name": name}, headers=key), outages
    )
    assert joined.status_code == 201, joined.text
    return str(joined.json()["token"])


def create(client: Any, seed: int, outages: list[str]) -> str:
    """A new table's id; a 503 is retried with the same Idempotency-Key (one table per key)."""
    key = {"Idempotency-Key": f"create-{uuid.uuid4().hex}"}
    body = {"game": "skull", "players": PLAYERS, "options": practice("skull", seed)}
    created = retried(lambda: client.post("/games", json=body, headers=key), outages)
    assert created.status_code == 201, created.text
    return str(created.json()["game_id"])


@pytest.fixture
def durable_api(
    real_cluster: LocalCluster,
    redis_server: EmbeddedRedis,
    real_redis: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Api]:
    """The API on the cluster, each append waiting for one replica's AOF."""
    with api_on_cluster(
        real_cluster, redis_server, monkeypatch, append_replicas=1, append_ack="waitaof"
    ) as client:
        yield Api(client, real_redis)


def test_a_killed_primary_loses_no_acknowledged_command_and_every_game_verifies(
    durable_api: Api, real_cluster: LocalCluster
) -> None:
    client, rng, outages = durable_api.client, random.Random(17), []
    receipts: list[dict[str, Any]] = []
    tables: dict[str, list[str]] = {}
    for n in range(TABLES):
        game_id = create(client, n, outages)
        tables[game_id] = [join(client, game_id, f"P{seat}", outages) for seat in range(PLAYERS)]
    victim = real_cluster.primary_for_key(game_keys(next(iter(tables))).events)

    def act(game_id: str) -> bool:
        """One bot command on ``game_id``; ``False`` once the game is over."""
        view = retried(lambda: client.get(f"/games/{game_id}/view"), outages).json()
        if view["status"] == "finished":
            return False
        seat = view["to_act"][0]
        auth = {"Authorization": f"Bearer {tables[game_id][seat]}"}
        own = retried(lambda: client.get(f"/games/{game_id}/view", headers=auth), outages).json()
        body = {
            "command_id": uuid.uuid4().hex,
            "command": choose("skull", own, rng),
            "expected_version": own["version"],
        }
        answer = retried(lambda: client.post(f"/games/{game_id}/commands", json=body, headers=auth), outages)
        if answer.status_code == 200:
            receipts.append(answer.json()["receipt"])
        else:
            assert answer.json()["error"]["code"] == "version_conflict", answer.text
        return True

    failures: list[BaseException] = []

    def load() -> None:  # the players, while the main thread kills and replaces a primary
        try:
            running = list(tables)
            while running:
                running = [game_id for game_id in running if act(game_id)]
        except BaseException as exc:
            failures.append(exc)

    players = threading.Thread(target=load, name="players")
    players.start()
    deadline = time.monotonic() + RETRY_SECONDS
    while len(receipts) < 10 and players.is_alive():
        assert time.monotonic() < deadline
        threading.Event().wait(0.01)
    real_cluster.kill(victim)  # SIGKILL, mid-load
    promoted = real_cluster.wait_for_failover(victim)
    assert promoted.port != victim.port
    acknowledged_at_failover = len(receipts)
    real_cluster.restart(victim)  # back, as the new primary's replica: its shard confirms again
    players.join(RETRY_SECONDS * 3)
    assert not players.is_alive() and not failures, failures
    assert len(receipts) > acknowledged_at_failover  # the load resumed after the failover

    cluster = real_cluster.client()
    for receipt in receipts:  # every acknowledged command is in its stream, with the hash it was given
        entry = cluster.xrange(
            game_keys(receipt["game_id"]).events, f"0-{receipt['version']}", f"0-{receipt['version']}"
        )
        assert entry and entry[0][1][b"h"].decode() == receipt["hash"], receipt
    durable_api.project()
    for game_id in tables:
        report = verify_export(client.get(f"/games/{game_id}/export").json())
        assert report.ok, report.render()
    print(f"{len(receipts)} receipts; 503s during the failover: {sorted(set(outages))} x{len(outages)}")
