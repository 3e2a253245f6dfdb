"""Figures for durable appends on the real test cluster (three primaries, one replica each, AOF
``appendfsync always``): how many appends get a short ack (``[1, 0]``: the replica's fsync not
confirmed within the timeout), and the latency of an append and of an HTTP command, per mode:

- ``waitaof-only``: ``WAITAOF 1 1 T`` alone after the append (the behaviour before issue 28);
- ``wait+waitaof``: ``WAIT 1 T/2`` then ``WAITAOF 1 1 T/2`` in the same pipeline (now);
- ``none``: no replica ack (``append_replicas`` 0).

A measurement, not a test: ``PYTHONPATH=. python -m tests.services.hardening.durable_acks_figures
[appends] [commands] [modes, comma-separated]`` prints one line per mode."""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from starlette.testclient import TestClient

import workers.stores
from bots import choose
from services.api.app import create_app
from services.operating.config import Settings
from services.store.connection import Acks, NotReplicated
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, bearer_only, practice
from tests.conftest import make_batch
from tests.support.cluster import LocalCluster

TIMEOUT_MS = 1000
SECRET = {"root": "ab" * 32, "master": "cd" * 32}


def waitaof_only(self: Acks) -> list[tuple[str | int, ...]]:
    return [("WAITAOF", 1, self.replicas, self.timeout_ms)]


@contextmanager
def mode(name: str) -> Iterator[Acks]:
    """The acks of ``name``; ``waitaof-only`` patches ``Acks.requests`` back to the old single command."""
    if name == "none":
        yield Acks(0)
        return
    saved = Acks.requests
    if name == "waitaof-only":
        Acks.requests = waitaof_only  # type: ignore[method-assign]
    try:
        yield Acks(1, "waitaof", TIMEOUT_MS)
    finally:
        Acks.requests = saved  # type: ignore[method-assign]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def appends(cluster: LocalCluster, queue: redis.Redis, acks: Acks, count: int) -> tuple[int, list[float]]:
    store = SyncEventStore(cluster.client(), queue, acks)
    game = uuid.uuid4().hex[:12]
    first = make_batch(1, 1, f"create-{game}")
    store.create(game, SECRET, first[0])
    previous, short, took = first[0].hash, 0, []
    for version in range(2, count + 2):
        batch = make_batch(version, 1, f"c{version}", previous)
        started = time.perf_counter()
        try:
            store.append(game, version - 1, f"c{version}", "fp", 0, batch)
        except NotReplicated:
            short += 1
        took.append((time.perf_counter() - started) * 1000)
        previous = batch[-1].hash
    return short, took


def commands(cluster: LocalCluster, queue: EmbeddedRedis, acks: Acks, count: int) -> tuple[int, list[float]]:
    os.environ[workers.stores.STORE_URL] = cluster.url
    os.environ[workers.stores.QUEUE_URL] = queue.url
    os.environ[workers.stores.CLUSTER] = "yes"
    settings = Settings(
        admin_token=ADMIN_TOKEN,
        redis_url=cluster.url,
        queue_url=queue.url,
        redis_cluster="yes",
        append_replicas=acks.replicas,
        append_ack="waitaof",
        append_ack_timeout_ms=TIMEOUT_MS,
        **UNLIMITED,
    )
    rng, took, refused = random.Random(5), [], 0
    with TestClient(create_app(settings), raise_server_exceptions=False) as raw:
        client = bearer_only(raw)
        while len(took) < count:
            body = {"game": "skull", "players": 3, "options": practice("skull", len(took))}
            key = {"Idempotency-Key": uuid.uuid4().hex}
            while (created := client.post("/games", json=body, headers=key)).status_code == 503:
                continue  # a short ack: the same key answers with the table once it is confirmed
            game_id = created.json()["game_id"]
            tokens = []
            for seat in range(3):
                key = {"Idempotency-Key": uuid.uuid4().hex}
                while True:  # a 503 is retried with the key: the same seat and token
                    joined = client.post(f"/games/{game_id}/players", json={"name": f"P{seat}"}, headers=key)
                    if joined.status_code != 503:
                        break
                tokens.append(joined.json()["token"])
            version = 0
            while len(took) < count:
                auth = {"Authorization": f"Bearer {tokens[0]}"}
                view = client.get(f"/games/{game_id}/view", headers=auth).json()
                if view["status"] == "finished" or view["version"] < version:
                    break
                seat = view["to_act"][0]
                auth = {"Authorization": f"Bearer {tokens[seat]}"}
                own = client.get(f"/games/{game_id}/view", headers=auth).json()
                sent: dict[str, Any] = {"command_id": uuid.uuid4().hex, "command": choose("skull", own, rng)}
                started = time.perf_counter()
                answer = client.post(f"/games/{game_id}/commands", json=sent, headers=auth)
                took.append((time.perf_counter() - started) * 1000)
                if answer.status_code == 503:
                    refused += 1
                elif answer.status_code == 200:
                    version = answer.json()["receipt"]["version"]
    return refused, took


def line(what: str, name: str, short: int, took: list[float]) -> str:
    return (
        f"{what:8} {name:13} n={len(took):4} short_acks={short:3} p50={statistics.median(took):8.2f} ms "
        f"p99={percentile(took, 0.99):8.2f} ms max={max(took):8.2f} ms"
    )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    command_count = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    modes = sys.argv[3].split(",") if len(sys.argv) > 3 else ["wait+waitaof", "none", "waitaof-only"]
    with (
        tempfile.TemporaryDirectory() as base,
        LocalCluster(Path(base) / "cluster") as cluster,
        EmbeddedRedis(Path(base) / "queue", durable=False) as queue_server,
    ):
        queue = redis.Redis.from_url(queue_server.url)
        for name in modes:
            with mode(name) as acks:
                if count:
                    print(line("appends", name, *appends(cluster, queue, acks, count)), flush=True)
                if command_count:
                    figures = commands(cluster, queue_server, acks, command_count)
                    print(line("commands", name, *figures), flush=True)


if __name__ == "__main__":
    main()
