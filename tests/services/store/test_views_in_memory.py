"""Views are derived data, kept in memory only: the views write leaves its fields out of the
append-only file (and the replicas) and writes only the checkpoint durably. After a restart the
fields are gone, or older ones from a snapshot remain; either way no reader may take them for the
views at the checkpoint (real durable server, ``appendfsync always``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from projections.views import encode, seat_view, view_field
from services.history.folding import StateCache
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import game_keys
from tests.workers.test_backup import Plan, store_game
from workers.backup import rebuild_all
from workers.projector import Projector

pytestmark = [pytest.mark.redis]

VIEWS = {"public": b'{"game":"skull","version":3}', "seat:0": b'{"hand":[1]}', "spectator": b'{"hand":null}'}


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "data", durable=True)
    yield server
    server.stop()


def aof_size(client: redis.Redis) -> int:
    return int(client.info("persistence")["aof_current_size"])


def test_a_views_write_puts_its_checkpoint_in_the_append_only_file_and_not_its_fields(
    durable: EmbeddedRedis,
) -> None:
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    big = {**VIEWS, "public": b'{"pad":"' + b"x" * 20_000 + b'"}'}
    before = aof_size(client)
    assert store.write_views("g", 0, 3, big) == "written"
    grown = aof_size(client) - before
    assert grown < 200  # the checkpoint's HSET, not 20 KB of views
    assert store.read_view("g", "seat:0") == (3, b'{"hand":[1]}')
    durable.kill()  # a crash: only what the append-only file holds comes back
    durable.start()
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    assert client.hgetall(game_keys("g").views) == {b"checkpoint": b"3"}
    assert store.read_view("g", "seat:0") == (3, None)
    assert store.read_seat_view("g", "seat:0") == (3, None)
    assert store.write_views("g", 3, 4, VIEWS) == "written"  # the next projection goes on from it
    assert store.read_view("g", "spectator") == (4, b'{"hand":null}')


def test_older_views_from_a_rewritten_append_only_file_are_not_taken_for_the_checkpoint_s(
    durable: EmbeddedRedis,
) -> None:
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    assert store.write_views("g", 0, 3, VIEWS) == "written"
    client.bgrewriteaof()  # the rewrite's snapshot holds the views at 3
    deadline = time.monotonic() + 30
    while (info := client.info("persistence"))["aof_rewrite_in_progress"] or info["aof_rewrite_scheduled"]:
        assert time.monotonic() < deadline, "the AOF rewrite never ended"
        time.sleep(0.02)
    assert store.write_views("g", 3, 5, {**VIEWS, "seat:0": b'{"hand":[2]}'}) == "written"
    durable.kill()
    durable.start()
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    stored = client.hgetall(game_keys("g").views)
    assert stored[b"checkpoint"] == b"5" and stored[b"at"] == b"3"  # fields of 3 under checkpoint 5
    assert store.read_view("g", "seat:0") == (5, None)
    assert store.read_seat_view("g", "seat:0") == (5, None)


def test_after_a_crash_every_view_is_rebuilt_from_the_streams_to_the_same_bytes(
    durable: EmbeddedRedis,
) -> None:
    client = redis.Redis.from_url(durable.url)
    store = SyncEventStore(client)
    game_id = "crash-skull-king"
    store_game(store, game_id, Plan("skull-king", (None, None, None, None), 9, finish=False))
    projector = Projector(store, StateCache())
    projector.catch_up(game_id)
    folded = projector.cache.get(game_id)
    assert folded is not None
    expected = {seat: encode(seat_view(folded.state, folded.version, seat)) for seat in (0, 1, 2, 3, None)}
    assert {seat: store.read_seat_view(game_id, view_field(seat))[1] for seat in expected} == expected
    durable.kill()
    durable.start()
    store = SyncEventStore(redis.Redis.from_url(durable.url))
    assert store.read_seat_view(game_id, view_field(0)) == (0, None)  # views and checkpoint: memory only
    assert store.dirty_games(0, 10) == [game_id]  # the durable mark is back: the sweeper projects it again
    assert rebuild_all(store) == 1
    rebuilt = {seat: store.read_seat_view(game_id, view_field(seat)) for seat in expected}
    assert rebuilt == {seat: (folded.version, view) for seat, view in expected.items()}
