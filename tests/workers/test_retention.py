"""Retention on a fake clock: expired tables, abandoned games and idle unverified accounts are
removed on their schedule, finished games are kept, and the size a finished game keeps is measured
(``services.store.retention``, ``workers.sweeper.retire``)."""

from __future__ import annotations

import random
import time
import uuid

import fakeredis
import pytest
import redis
from starlette.testclient import TestClient

from projections.views import seat_view
from services.accounts import Accounts
from services.api.app import create_app
from services.commands import GameCommands
from services.config import Settings
from services.errors import UnauthorizedError
from services.lifecycle import wall_clock_ms
from services.store import retention
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import ACCOUNTS_SEEN, ACTIVITY, EXPIRED, LOBBY, LOBBY_ORDER, game_keys, history_key
from services.store.queue import lifecycle_queue, projection_queue
from services.store.retention import DAY_MS, HOUR_MS, RetentionPolicy
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED
from tests.conftest import Clients, IndexClients
from tests.services.test_commands import FLOWER, handler_on, started_table
from workers.bots import choose
from workers.projector import Projector
from workers.sweeper import Sweeper, backfill_retention, retire

pytestmark = pytest.mark.anyio

POLICY = RetentionPolicy()  # 1 day after expiry, 14 days abandoned, 30 days idle accounts


async def finished_game(handler: GameCommands, game: str = "six-nimmt", seed: int = 0) -> str:
    """A game played to its end by seeded bots through the write side."""
    rng = random.Random(seed)
    options = {"rounds": 1} if game == "six-nimmt" else {}
    game_id, _ = await handler.create(game, 3, options)
    for seat in range(3):
        await handler.join(game_id, f"P{seat}", f"seed-{seat}")
    while (folded := await handler.load(game_id)).state.status == "playing":
        seat = sorted(folded.table.to_act(folded.state))[0]
        view = seat_view(folded.state, folded.version, seat)
        await handler.command(game_id, seat, uuid.uuid4().hex, choose(game, view, rng), None)
    assert folded.state.status == "finished"
    return game_id


def stored(sync: redis.Redis, index: redis.Redis, game_id: str) -> dict[str, bool]:
    return {
        "events": bool(sync.exists(game_keys(game_id).events)),
        "secret": bool(sync.exists(game_keys(game_id).secret)),
        "lobby": index.hget(LOBBY, game_id) is not None and index.zscore(LOBBY_ORDER, game_id) is not None,
    }


async def test_expired_tables_then_abandoned_games_are_removed_on_schedule_and_finished_games_kept(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    index = sync.index
    finished = await finished_game(handler)
    expired, _ = await handler.create("skull", 3, {})
    await handler.join(expired, "Early", "")
    await handler.expire(expired, (await handler.load(expired)).version)
    playing = await started_table(handler, 3)
    await handler.command(playing, 0, "c0", FLOWER, None)
    waiting, _ = await handler.create("skull-king", 4, {})
    games = (finished, expired, playing, waiting)
    Projector(sync).catch_up_all(list(games))
    now = wall_clock_ms()

    assert retire(sync, now + HOUR_MS, POLICY).expired == []
    assert all(all(stored(sync.redis, index, g).values()) for g in games)

    first = retire(sync, now + 25 * HOUR_MS, POLICY)  # a day after the expiry
    assert (first.expired, first.abandoned) == ([expired], [])
    assert stored(sync.redis, index, expired) == {"events": False, "secret": False, "lobby": False}
    assert not any(key.startswith(f"ts:{{{expired}}}".encode()) for key in sync.redis.keys("ts:*"))
    assert all(all(stored(sync.redis, index, g).values()) for g in (finished, playing, waiting))

    assert retire(sync, now + 13 * DAY_MS, POLICY).abandoned == []
    later = retire(sync, now + 15 * DAY_MS, POLICY)  # two weeks without a move
    assert sorted(later.abandoned) == sorted([playing, waiting])
    for gone in (playing, waiting):
        assert stored(sync.redis, index, gone) == {"events": False, "secret": False, "lobby": False}
    assert stored(sync.redis, index, finished) == {"events": True, "secret": True, "lobby": True}

    years = retire(sync, now + 3650 * DAY_MS, POLICY)  # the history stays
    assert (years.expired, years.abandoned) == ([], [])
    assert (await handler.load(finished)).state.status == "finished"


async def test_a_game_that_moves_before_its_removal_stays(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    playing = await started_table(handler, 3)
    Projector(sync).catch_up(playing)
    picked = wall_clock_ms()
    await handler.command(playing, 0, "c0", FLOWER, None)
    while wall_clock_ms() <= picked:  # the move's projection is stamped after the pick
        await handler.load(playing)
    Projector(sync).catch_up(playing)
    policy = RetentionPolicy(abandoned_after_ms=DAY_MS)
    assert not sync.run(retention.remove_game(playing, retention.ACTIVITY, float(picked)))
    assert sync.redis.exists(game_keys(playing).events)
    assert retire(sync, picked + DAY_MS - 1, policy).abandoned == []


async def test_idle_accounts_without_password_or_game_are_removed_and_their_names_freed(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    store = EventStore(store_backend[1], index_backend[1] if index_backend else None)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    accounts = Accounts(store)
    idle, idle_token = await accounts.register("Idle", None)
    protected, _ = await accounts.register("Locked", "a long password")
    player, _ = await accounts.register("Player", None)
    sync.redis.zadd(history_key(player.account_id), {"some-finished-game": 1})  # it finished a game
    now = wall_clock_ms()

    assert retire(sync, now + 29 * DAY_MS, POLICY).accounts == []
    assert retire(sync, now + 31 * DAY_MS, POLICY).accounts == [idle.account_id]
    assert await accounts.load(idle.account_id) is None
    assert await accounts.load(protected.account_id) is not None
    assert await accounts.load(player.account_id) is not None
    with pytest.raises(UnauthorizedError):
        await accounts.authenticate(idle_token)
    again, _ = await accounts.register("Idle", None)  # the name is free again
    assert again.account_id != idle.account_id


async def test_an_account_in_use_is_not_idle(store_backend: Clients, index_backend: IndexClients) -> None:
    store = EventStore(store_backend[1], index_backend[1] if index_backend else None)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    accounts = Accounts(store)
    account, token = await accounts.register("Busy", None)
    start = wall_clock_ms()
    while wall_clock_ms() <= start:
        await accounts.load(account.account_id)
    await accounts.log_out(token)  # an append: it was used now, after ``start``
    assert retire(sync, start + 30 * DAY_MS, POLICY).accounts == []
    assert await accounts.load(account.account_id) is not None


async def test_games_and_accounts_stored_before_the_retention_indexes_are_backfilled_once(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    accounts = Accounts(EventStore(store_backend[1], index_backend[1] if index_backend else None))
    finished = await finished_game(handler)
    expired, _ = await handler.create("skull", 3, {})
    await handler.expire(expired, (await handler.load(expired)).version)
    playing = await started_table(handler, 3)
    Projector(sync).catch_up_all([finished, expired, playing])
    idle, _ = await accounts.register("Legacy", None)
    sync.index.delete(ACTIVITY, EXPIRED, ACCOUNTS_SEEN)  # as stored before these indexes existed
    later = wall_clock_ms() + 10 * DAY_MS

    assert not sync.run(retention.backfilled())
    assert backfill_retention(sync, later) == 4  # three games and one account
    assert sync.run(retention.backfilled())
    assert retire(sync, later + 25 * HOUR_MS, POLICY).expired == [expired]
    swept = retire(sync, later + 31 * DAY_MS, POLICY)
    assert (swept.abandoned, swept.accounts) == ([playing], [idle.account_id])
    assert sync.redis.exists(game_keys(finished).events)


async def test_the_sweeper_thread_backfills_then_retires_on_its_clock(
    fake_redis: redis.Redis, fake_redis_async: object
) -> None:
    handler = handler_on((fake_redis, fake_redis_async))  # type: ignore[arg-type]
    sync = SyncEventStore(fake_redis)
    expired, _ = await handler.create("skull", 3, {})
    await handler.expire(expired, (await handler.load(expired)).version)
    Projector(sync).catch_up(expired)
    fake_now = wall_clock_ms() + 2 * DAY_MS
    queue = projection_queue(fake_redis)
    sweeper = Sweeper(sync, queue, lifecycle_queue(fake_redis), interval=0.01, clock=lambda: fake_now)
    sweeper.start()
    try:
        deadline = time.monotonic() + 10
        while fake_redis.exists(game_keys(expired).events):
            assert time.monotonic() < deadline, "the sweeper did not remove the expired table"
            time.sleep(0.01)
    finally:
        sweeper.stop()
        sweeper.join(timeout=5)
    assert sync.run(retention.backfilled())


def test_taking_a_seat_is_a_use_of_the_account() -> None:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **UNLIMITED),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        registered = client.post("/accounts", json={"name": "Seated"}).json()
        start = wall_clock_ms()
        sync = SyncEventStore(fakeredis.FakeRedis(server=server))
        while wall_clock_ms() <= start:  # the join is stamped after ``start``
            sync.index.ping()
        game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        joined = client.post(
            f"/games/{game_id}/players", json={}, headers={"Authorization": f"Bearer {registered['token']}"}
        )
        assert joined.status_code == 201
    assert retire(sync, start + 30 * DAY_MS, POLICY).accounts == []
    assert retire(sync, wall_clock_ms() + 31 * DAY_MS, POLICY).accounts == [registered["account_id"]]


@pytest.mark.redis
async def test_the_bytes_a_finished_game_keeps_measured_with_memory_usage(
    real_redis: redis.Redis, real_redis_async: object
) -> None:
    """Prints the figure docs/security.md states: every key of a finished game (stream, command
    records, seats, secret, views, tokens, timer) plus its lobby entry, on a real Redis."""
    handler = handler_on((real_redis, real_redis_async))  # type: ignore[arg-type]
    sync = SyncEventStore(real_redis)

    def size(game_id: str) -> int:
        keys = real_redis.keys(f"ts:{{{game_id}}}:*")
        total = sum(int(real_redis.memory_usage(key, samples=0) or 0) for key in keys)
        return (
            total + len(real_redis.hget(LOBBY, game_id) or b"") + len(game_id) * 2 + 32
        )  # lobby hash + zset

    expired, _ = await handler.create("skull", 3, {})
    await handler.join(expired, "Early", "")
    await handler.expire(expired, (await handler.load(expired)).version)
    Projector(sync).catch_up(expired)
    print(f"\n[retention] an expired Skull table: {size(expired) / 1024:.1f} KiB (removed after a day)")
    for game in ("skull", "six-nimmt", "skull-king"):
        sizes = []
        for seed in range(3):
            game_id = await finished_game(handler, game, seed)
            Projector(sync).catch_up(game_id)
            sizes.append((size(game_id), sync.head(game_id)))
        mean = sum(s for s, _ in sizes) / len(sizes)
        versions = sum(v for _, v in sizes) / len(sizes)
        print(f"\n[retention] finished {game} (3 players): {mean / 1024:.1f} KiB, {versions:.0f} versions")
        assert all(size > 0 for size, _ in sizes)
