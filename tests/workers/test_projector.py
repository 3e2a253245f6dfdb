"""Projections: exactly-once effect under duplicated, reordered and racing pokes; the lag sweeper."""

from __future__ import annotations

import msgspec
import pytest
import redis

import workers.stores
from projections.views import materialise
from services.history.folding import StateCache, advance
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import ACTIVITY, DIRTY, LOBBY, LOBBY_CHANNEL, LOBBY_ORDER, WAITING
from services.store.projection import ProjectionWrite, project_views
from services.store.queue import enqueue_projection, lifecycle_queue, projection_queue
from services.store.rq_workers import run_burst
from tests.conftest import Clients, IndexClients
from tests.services.table.test_commands import FLOWER, handler_on, started_table
from tests.support.cluster import LocalCluster
from workers.projector import Projector
from workers.sweeper import sweep

pytestmark = pytest.mark.anyio


async def played_game(clients: Clients, commands: int = 2, index: IndexClients = None) -> str:
    handler = handler_on(clients, index)
    game_id = await started_table(handler, 3)
    for seat in range(commands):
        await handler.command(game_id, seat, f"c{seat}", FLOWER, None)
    return game_id


def views_of(clients: Clients, game_id: str) -> dict[bytes, bytes]:
    return clients[0].hgetall(f"ts:{{{game_id}}}:views")


async def test_projecting_reaches_the_head_and_again_changes_nothing(store_backend: Clients) -> None:
    game_id = await played_game(store_backend)
    store = SyncEventStore(store_backend[0])
    assert Projector(store).catch_up(game_id) == store.head(game_id)
    before = views_of(store_backend, game_id)
    assert Projector(store).catch_up(game_id) == store.head(game_id)
    assert views_of(store_backend, game_id) == before


async def test_materialised_views_are_byte_identical_to_a_fold_from_scratch(store_backend: Clients) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    store = SyncEventStore(store_backend[0])
    projector = Projector(store)
    for seat in range(3):  # incremental: one projection per command, reusing the cached fold
        await handler.command(game_id, seat, f"c{seat}", FLOWER, None)
        projector.catch_up(game_id)
    scratch = advance(game_id, None, store.read(game_id))
    expected = materialise(scratch.state, scratch.version)
    stored = views_of(store_backend, game_id)
    for field, data in expected.items():
        assert stored[field.encode()] == data


async def test_a_late_projection_never_moves_the_checkpoint_backwards(store_backend: Clients) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    store = SyncEventStore(store_backend[0])
    early = advance(game_id, None, store.read(game_id))
    await handler.command(game_id, 0, "late", FLOWER, None)
    head = Projector(store).catch_up(game_id)
    # a slow worker that folded only the early version now tries to write what it computed
    outcome = store.write_views(game_id, 0, early.version, materialise(early.state, early.version))
    assert outcome in ("stale", "mismatch")
    assert store.checkpoint(game_id) == head


@pytest.fixture
def queue_connection(
    request: pytest.FixtureRequest,
    store_backend: Clients,
    index_backend: IndexClients,
    monkeypatch: pytest.MonkeyPatch,
) -> redis.Redis:
    """RQ's connection: the store's own server, or, when the store is a cluster, the standalone server
    of the queue and the indexes, with the jobs told where the store is (``workers.stores``)."""
    if index_backend is None:
        return store_backend[0]
    cluster: LocalCluster = request.getfixturevalue("real_cluster")
    standalone: EmbeddedRedis = request.getfixturevalue("redis_server")
    monkeypatch.setenv(workers.stores.STORE_URL, cluster.url)
    monkeypatch.setenv(workers.stores.QUEUE_URL, standalone.url)
    monkeypatch.setenv(workers.stores.CLUSTER, "yes")
    return index_backend[0]


async def test_duplicate_and_reordered_pokes_through_rq_leave_views_at_the_head(
    store_backend: Clients, index_backend: IndexClients, queue_connection: redis.Redis
) -> None:
    sync = store_backend[0]
    games = [await played_game(store_backend, commands, index_backend) for commands in (1, 2, 3)]
    queue = projection_queue(queue_connection)
    for game_id in [games[2], games[0], games[2], games[1], games[0], games[2]]:
        enqueue_projection(queue, game_id)
    job = queue.jobs[0]
    assert list(job.args) == [games[2]]  # a poke carries the game id only (JSON)
    run_burst(queue_connection, [queue])
    store = SyncEventStore(sync, index_backend[0] if index_backend else None)
    for game_id in games:
        assert store.checkpoint(game_id) == store.head(game_id)
    assert queue.failed_job_registry.count == 0


async def test_the_sweeper_pokes_exactly_the_games_whose_projection_lags(
    store_backend: Clients, index_backend: IndexClients, queue_connection: redis.Redis
) -> None:
    sync = store_backend[0]
    store = SyncEventStore(sync, index_backend[0] if index_backend else None)
    current = await played_game(store_backend, index=index_backend)
    lagging = await played_game(store_backend, index=index_backend)
    Projector(store, StateCache()).catch_up(current)
    queue = projection_queue(queue_connection)
    lifecycle = lifecycle_queue(queue_connection)
    assert sweep(store, queue, lifecycle, grace_ms=0).lagging == [lagging]
    run_burst(queue_connection, [queue])
    assert sweep(store, queue, lifecycle, grace_ms=0).lagging == []
    assert store.checkpoint(lagging) == store.head(lagging)


async def test_a_move_writes_no_lobby_entry_but_a_change_the_lobby_shows_does(store_backend: Clients) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    store = SyncEventStore(store_backend[0])
    projector = Projector(store)
    projector.catch_up(game_id)
    listed = store.lobby(10)
    assert [msgspec.json.decode(entry)["status"] for entry in listed] == ["playing"]
    await handler.command(game_id, 0, "c0", FLOWER, None)  # a move: the lobby shows nothing new
    projector.catch_up(game_id)
    assert store.lobby(10) == listed  # not written again (its version is that of its last change)
    fresh = Projector(store)  # another process, which never wrote it: writes it
    await handler.command(game_id, 1, "c1", FLOWER, None)
    fresh.catch_up(game_id)
    (entry,) = store.lobby(10)
    assert msgspec.json.decode(entry)["version"] == store.head(game_id)


async def test_a_late_projection_write_with_its_indexes_never_moves_the_views_backwards(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    game_id = await started_table(handler, 3)
    store = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    early = advance(game_id, None, store.read(game_id))
    await handler.command(game_id, 0, "late", FLOWER, None)
    head = Projector(store).catch_up(game_id)
    before = views_of(store_backend, game_id)
    # a slow worker that folded only the early version now tries to write what it computed
    late = ProjectionWrite(0, early.version, materialise(early.state, early.version), early.version)
    projected = store.run(project_views(game_id, late))
    assert projected.outcome in ("stale", "mismatch")
    assert projected.checkpoint == head == store.checkpoint(game_id)
    assert views_of(store_backend, game_id) == before


async def test_projections_announce_each_lobby_change_once_and_a_move_not_at_all(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    indexes: redis.Redis = (index_backend or store_backend)[0]  # type: ignore[assignment]
    pubsub = indexes.pubsub()
    pubsub.subscribe(LOBBY_CHANNEL)
    assert pubsub.get_message(timeout=5) is not None  # the subscription's confirmation
    handler = handler_on(store_backend, index_backend)
    store = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    game_id, _ = await handler.create("skull", 3, {"turn_seconds": 0})  # no timer: nothing pending
    Projector(store).catch_up(game_id)
    assert indexes.zscore(WAITING, game_id) is not None
    for seat in range(3):
        await handler.join(game_id, f"P{seat}", "")
        Projector(store).catch_up(game_id)  # a fresh process each time: it remembers no entry it wrote
    await handler.command(game_id, 0, "c0", FLOWER, None)
    Projector(store).catch_up(game_id)  # a move: the entry says nothing new but its version
    announced = []
    while (message := pubsub.get_message(timeout=0.5)) is not None:
        announced.append(msgspec.json.decode(message["data"]))
    pubsub.close()
    assert [(entry["seats_taken"], entry["status"]) for entry in announced] == [
        (0, "waiting"),
        (1, "waiting"),
        (2, "waiting"),
        (3, "playing"),
    ]
    assert indexes.zrange(LOBBY_ORDER, 0, -1) == [game_id.encode()]  # placed once
    assert msgspec.json.decode(indexes.hget(LOBBY, game_id))["version"] == store.head(game_id)
    assert indexes.zscore(WAITING, game_id) is None  # started: no longer counts as waiting
    assert indexes.zscore(ACTIVITY, game_id) is not None
    assert indexes.zscore(DIRTY, game_id) is None  # at its head, nothing pending: clean
