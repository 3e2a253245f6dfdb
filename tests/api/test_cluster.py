"""The service with its event store on a real Redis Cluster (3 primaries, 1 replica each) and its
queue on a separate standalone server: whole games over HTTP, keys spread over the primaries, live
wake-ups on each game's shard channel, the sweeper, lost indexes rebuilt, export and verify."""

from __future__ import annotations

import random
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis
import redis.asyncio as aioredis
from starlette.testclient import TestClient

import workers.stores
from bots import choose
from domain.games import specs
from services.api.app import create_app
from services.cli.demo import play_game
from services.cli.processes import stop_process
from services.cli.worker import worker_command
from services.history.verify import verify_export
from services.operating.config import Settings
from services.store.embedded import EmbeddedRedis, die_with_parent
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import game_keys
from services.store.live_updates import LiveHub
from services.store.queue import lifecycle_queue, projection_queue
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only, practice
from tests.api.test_full_game import parse_sse
from tests.support.cluster import LocalCluster
from workers.sweeper import rebuild_indexes, sweep

pytestmark = pytest.mark.redis

GAMES = [(game.name, game.min_players) for game in specs()]


@pytest.fixture
def queue_server(real_redis: redis.Redis) -> redis.Redis:
    """The queue's own standalone server (RQ and, beside it, the indexes), emptied."""
    return real_redis


@contextmanager
def api_on_cluster(
    cluster: LocalCluster, queue: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch, **settings: Any
) -> Iterator[TestClient]:
    """The API as deployed on a cluster: ``--redis-url`` a cluster node, ``--queue-url`` the
    standalone server; the projection jobs (run by ``Api.project``) find the store as a worker
    process does (``workers.stores``). ``settings`` adds to the deployment's."""
    monkeypatch.setenv(workers.stores.STORE_URL, cluster.url)
    monkeypatch.setenv(workers.stores.QUEUE_URL, queue.url)
    monkeypatch.setenv(workers.stores.CLUSTER, "yes")
    deployed = Settings(
        admin_token=ADMIN_TOKEN,
        redis_url=cluster.url,
        queue_url=queue.url,
        redis_cluster="yes",
        **UNLIMITED,
        **settings,
    )
    with TestClient(create_app(deployed), raise_server_exceptions=False) as client:
        client.headers["X-Request-ID"] = f"cluster-{uuid.uuid4().hex[:8]}"
        yield bearer_only(client)


@pytest.fixture
def cluster_api(
    real_cluster: LocalCluster,
    redis_server: EmbeddedRedis,
    queue_server: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Api]:
    with api_on_cluster(real_cluster, redis_server, monkeypatch) as client:
        yield Api(client, queue_server)


def store_of(cluster: LocalCluster, queue: redis.Redis) -> SyncEventStore:
    return SyncEventStore(cluster.client(), queue)


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_whole_game_is_played_over_http_with_the_store_on_a_cluster_and_the_queue_on_its_own_server(
    cluster_api: Api, real_cluster: LocalCluster, queue_server: redis.Redis, game: str, players: int
) -> None:
    final, tokens = play_game(
        cluster_api.client, game, players, random.Random(5), out=lambda _: None, options=practice(game, 5)
    )
    cluster_api.project()
    game_id = final["game_id"]
    assert final["status"] == "finished" and final["winners"]
    assert cluster_api.view(game_id) == final  # the projection reached the head, on the cluster
    seat_view = cluster_api.client.get(
        f"/games/{game_id}/view", headers={"Authorization": f"Bearer {tokens[0]}"}
    ).json()
    assert seat_view["version"] == final["version"] and seat_view["seat"] == 0
    board = cluster_api.client.get(f"/games/{game_id}/scores").json()
    assert board["totals"] == final["scores"]
    cluster = real_cluster.client()
    assert cluster.xlen(game_keys(game_id).events) == final["version"]
    assert queue_server.keys("ts:{*") == []  # no key of a game on the queue's server
    report = verify_export(cluster_api.client.get(f"/games/{game_id}/export").json())
    assert report.ok, report.render()
    with cluster_api.client.stream(
        "GET", f"/games/{game_id}/live", headers={"Last-Event-ID": "3"}
    ) as response:
        messages = parse_sse(response.iter_lines())
    assert [m["id"] for m in messages] == list(
        range(4, final["version"] + 1)
    )  # the live stream, from the cluster


def test_tables_land_on_several_primaries(cluster_api: Api, real_cluster: LocalCluster) -> None:
    owners: set[int] = set()
    for _ in range(40):  # random ids: each table lands on one of three primaries
        game_id = cluster_api.create("skull", 3)
        owners.add(real_cluster.slot_owner_ports([game_keys(game_id).events])[game_keys(game_id).events])
        if len(owners) >= 2:
            break
    assert len(owners) >= 2
    cluster_api.project()
    listed = {g["game_id"] for g in cluster_api.client.get("/games").json()["games"]}
    assert game_id in listed and len(listed) >= 2  # one lobby over the games of every primary


def games_on_every_primary(cluster: LocalCluster) -> list[str]:
    """One game id per primary."""
    chosen: dict[int, str] = {}
    for n in range(200):
        game_id = f"live{n}"
        port = cluster.slot_owner_ports([game_keys(game_id).live])[game_keys(game_id).live]
        chosen.setdefault(port, game_id)
        if len(chosen) == len(cluster.primaries()):
            break
    return list(chosen.values())


@pytest.mark.anyio
async def test_a_live_stream_wakes_on_its_games_shard_channel_on_every_primary(
    real_cluster: LocalCluster, anyio_backend: str
) -> None:
    client = aioredis.RedisCluster.from_url(real_cluster.url)
    hub = LiveHub(client)
    store = EventStore(client)
    games = games_on_every_primary(real_cluster)
    assert len(games) == 3
    try:
        for game_id in games:
            async with hub.subscribe(game_id) as wakeups:
                assert await store.write_views(game_id, 0, 1, {"spectator": b"{}"}) == "written"
                assert await wakeups.wait(5.0)  # the views write's SPUBLISH reached this stream
        assert hub.channel_count == 0  # unsubscribed once the last stream of a game left
    finally:
        await hub.close()
        await client.aclose()


def test_the_sweeper_projects_a_game_whose_hand_over_was_lost_and_rebuilds_lost_indexes(
    cluster_api: Api, real_cluster: LocalCluster, queue_server: redis.Redis
) -> None:
    game_id = cluster_api.started()
    store = store_of(real_cluster, queue_server)
    projections, lifecycle = projection_queue(queue_server), lifecycle_queue(queue_server)
    projections.empty()  # the hand-over is lost
    assert sweep(store, projections, lifecycle, grace_ms=0).lagging == [game_id]
    cluster_api.project()
    assert store.checkpoint(game_id) == store.head(game_id)

    seat = cluster_api.view(game_id)["to_act"][0]
    own = cluster_api.view(game_id, seat)
    moved = cluster_api.send(
        game_id, seat, choose(own["game"], own, random.Random(1)), expected_version=own["version"]
    )
    assert moved.status_code == 200, (
        moved.text
    )  # the game lags again; then the queue's server loses everything
    queue_server.flushall()
    assert not store.indexes_known()
    assert rebuild_indexes(store) == 1  # found on its primary by scanning every primary
    assert store.indexes_known()
    assert sweep(store, projection_queue(queue_server), lifecycle, grace_ms=0).lagging == [game_id]
    cluster_api.project()
    assert store.checkpoint(game_id) == store.head(game_id)


def test_a_worker_process_plays_a_table_of_bots_to_the_end_on_the_cluster(
    cluster_api: Api, real_cluster: LocalCluster, redis_server: EmbeddedRedis
) -> None:
    """The real worker pool, started as a deployment starts it (``--redis-cluster auto`` asks the
    store): its bot jobs play every seat through the write side on the cluster, its projection jobs
    write the views there, and the finished game verifies."""
    created = cluster_api.client.post(
        "/games", json={"game": "skull", "players": 3, "options": practice("skull", 8)}
    )
    game_id, host = created.json()["game_id"], created.json()["host_token"]
    command = worker_command(real_cluster.url, 1, 1.0, redis_server.url, "auto")
    worker = subprocess.Popen(command, preexec_fn=die_with_parent)
    try:
        seated = cluster_api.client.post(
            f"/games/{game_id}/bots", json={}, headers={"Authorization": f"Bearer {host}"}
        )
        assert seated.status_code == 200, seated.text
        deadline = time.monotonic() + 120
        while (view := cluster_api.view(game_id))["status"] != "finished":
            assert worker.poll() is None, "the worker process died"
            assert time.monotonic() < deadline, f"the bots stopped at version {view['version']}"
            threading.Event().wait(0.1)
        while SyncEventStore(real_cluster.client()).checkpoint(game_id) < view["version"]:
            assert time.monotonic() < deadline, "the worker did not project the last move"
            threading.Event().wait(0.05)
    finally:
        stop_process(worker)
    report = verify_export(cluster_api.client.get(f"/games/{game_id}/export").json())
    assert report.ok, report.render()
