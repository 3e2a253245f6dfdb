"""Retention on a fake clock: expired tables, abandoned games and idle unverified accounts are
removed on their schedule, finished games are kept, and the size a finished game keeps is measured
(``services.store.retention``, ``workers.sweeper.retire``)."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

import fakeredis
import pytest
import redis
from starlette.testclient import TestClient

from bots import choose
from domain.disputes import DisputeOpened, DisputeResolved, Party
from domain.games import game_names
from projections.views import seat_view
from services.accounts.registry import Accounts
from services.api.app import create_app
from services.errors import UnauthorizedError
from services.operating.config import Settings
from services.store import chat as store_chat
from services.store import disputes as store_disputes
from services.store import retention
from services.store.chat import chat_keys
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import (
    ACCOUNTS_SEEN,
    ACTIVITY,
    DIRTY,
    EXPIRED,
    LOBBY,
    LOBBY_ORDER,
    PACED,
    account_seated_key,
    game_keys,
    history_key,
)
from services.store.queue import lifecycle_queue, projection_queue
from services.store.requests import Call, Operation, Pipelined, Request
from services.store.retention import DAY_MS, HOUR_MS, RetentionPolicy
from services.store.your_tables import account_tables_key, note_table
from services.table.commands import GameCommands
from services.table.lifecycle import wall_clock_ms
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED
from tests.conftest import Clients, IndexClients
from tests.services.table.test_commands import FLOWER, handler_on, started_table
from workers.projector import Projector
from workers.sweeper import Sweeper, backfill_retention, retire

pytestmark = pytest.mark.anyio
T = TypeVar("T")

POLICY = RetentionPolicy()  # 1 day after expiry, 14 days abandoned, 30 days idle accounts


async def finished_game(handler: GameCommands, game: str = "six-nimmt", seed: int = 0) -> str:
    """A game played to its end by seeded bots through the write side."""
    rng = random.Random(seed)
    game_id, _ = await handler.create(game, 3, {})
    for seat in range(3):
        await handler.join(game_id, f"P{seat}", f"seed-{seat}")
    while (folded := await handler.load(game_id)).state.status == "playing":
        seat = sorted(folded.table.to_act(folded.state))[0]
        view = seat_view(folded.state, folded.version, seat)
        await handler.command(game_id, seat, uuid.uuid4().hex, choose(game, view, rng), None)
    assert folded.state.status == "finished"
    return game_id


def lifecycle_settled(sync: SyncEventStore, *game_ids: str) -> None:
    """Clear the games' dirty marks, as once their lifecycle is settled: the write side of these tests
    arms no timer, so the projector keeps them marked (a marked game is never removed)."""
    sync.index.zrem(DIRTY, *game_ids)


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
    lifecycle_settled(sync, *games)
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
    sync.run(note_table(idle.account_id, "a-table-left-long-ago", now - DAY_MS))  # its "Your tables"

    assert retire(sync, now + 29 * DAY_MS, POLICY).accounts == []
    assert retire(sync, now + 31 * DAY_MS, POLICY).accounts == [idle.account_id]
    assert not sync.redis.exists(account_tables_key(idle.account_id))  # removed with the account
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
    lifecycle_settled(sync, finished, expired, playing)
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
    for game in game_names():
        sizes = []
        for seed in range(3):
            game_id = await finished_game(handler, game, seed)
            Projector(sync).catch_up(game_id)
            sizes.append((size(game_id), sync.head(game_id)))
        mean = sum(s for s, _ in sizes) / len(sizes)
        versions = sum(v for _, v in sizes) / len(sizes)
        print(f"\n[retention] finished {game} (3 players): {mean / 1024:.1f} KiB, {versions:.0f} versions")
        assert all(size > 0 for size, _ in sizes)


# -- races between a pass and the game's or account's use (issue 24's review) ---------------------


def asks(request: Request, *args: str) -> bool:
    """Whether ``request`` (a call, or a pipeline of calls) sends a command beginning with ``args``."""
    calls = (
        request.calls if isinstance(request, Pipelined) else (request,) if isinstance(request, Call) else ()
    )
    return any(call.args[: len(args)] == args for call in calls)


async def run_interleaved(
    sync: SyncEventStore,
    operation: Operation[T],
    after: Callable[[Request], bool],
    then: Callable[[], Awaitable[object]],
) -> tuple[T, bool]:
    """Run ``operation`` on ``sync`` one request at a time, and await ``then()`` once, just after the
    first request that ``after`` picks was answered (the use that races with the pass). Returns the
    operation's result and whether ``then`` ran."""
    fired = False
    request = operation.send(None)
    while True:
        reply = sync._execute(request)
        if not fired and after(request):
            fired = True
            await then()
        try:
            request = operation.send(reply)
        except StopIteration as stop:
            return stop.value, fired


async def idle_game(handler: GameCommands, sync: SyncEventStore) -> tuple[str, float]:
    """A playing, untimed game, projected and settled, with its activity score (as picked)."""
    game_id = await started_table(handler, 3)
    Projector(sync).catch_up(game_id)
    lifecycle_settled(sync, game_id)
    score = sync.index.zscore(ACTIVITY, game_id)
    assert score is not None
    return game_id, float(score)


async def test_a_game_whose_move_is_appended_after_it_was_picked_is_kept_while_its_projection_lags(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    game_id, picked = await idle_game(handler, sync)
    head = sync.head(game_id)

    async def move() -> None:  # acknowledged; no projection runs before the removal step ends
        await handler.command(game_id, 0, "late-move", FLOWER, None)

    removed, moved = await run_interleaved(
        sync, retention.remove_game(game_id, ACTIVITY, picked), lambda r: asks(r, "ZSCORE", ACTIVITY), move
    )
    assert moved
    assert not removed
    assert sync.head(game_id) > head  # the acknowledged move is stored
    assert sync.index.zscore(ACTIVITY, game_id) == picked  # still indexed: a later pass sees it again


async def test_an_idle_game_unchanged_since_it_was_picked_is_removed_with_its_paced_bot_entries(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    game_id, picked = await idle_game(handler, sync)
    other, _ = await idle_game(handler, sync)
    sync.index.zadd(PACED, {f"{game_id}:7:1": 1, f"{game_id}:8:2": 2, f"{other}:7:1": 3})

    assert sync.run(retention.remove_game(game_id, ACTIVITY, picked))
    assert stored(sync.redis, sync.index, game_id) == {"events": False, "secret": False, "lobby": False}
    assert sync.index.zscore(ACTIVITY, game_id) is None
    assert sync.index.zrange(PACED, 0, -1) == [f"{other}:7:1".encode()]  # a bot job finds nothing to fire on
    assert sync.redis.exists(game_keys(other).events)


async def test_a_game_marked_dirty_or_lagging_behind_its_head_is_not_removed(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    lagging, lagging_at = await idle_game(handler, sync)
    await handler.command(lagging, 0, "unprojected", FLOWER, None)  # appended before the pick, not projected
    lifecycle_settled(sync, lagging)  # even without its dirty mark, its views are behind its head
    dirty, dirty_at = await idle_game(handler, sync)
    sync.index.zadd(DIRTY, {dirty: 1})  # an append is under way (marked before it writes)

    assert not sync.run(retention.remove_game(lagging, ACTIVITY, lagging_at))
    assert not sync.run(retention.remove_game(dirty, ACTIVITY, dirty_at))
    assert sync.redis.exists(game_keys(lagging).events) and sync.redis.exists(game_keys(dirty).events)


async def test_a_finished_game_left_in_the_activity_index_is_never_removed(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    finished = await finished_game(handler)
    Projector(sync).catch_up(finished)
    lifecycle_settled(sync, finished)
    sync.index.zadd(
        ACTIVITY, {finished: 1}
    )  # a stale entry, as if its last projection's index write was lost

    assert not sync.run(retention.remove_game(finished, ACTIVITY, 1.0))
    assert (await handler.load(finished)).state.status == "finished"
    assert retire(sync, wall_clock_ms() + 3650 * DAY_MS, POLICY).abandoned == []


async def test_an_account_that_sets_a_password_after_it_was_picked_is_kept_with_its_name(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    store = EventStore(store_backend[1], index_backend[1] if index_backend else None)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    accounts = Accounts(store)
    account, token = await accounts.register("Racer", None)
    idle, _ = await accounts.register("Sleeper", None)
    later = wall_clock_ms() + 31 * DAY_MS

    async def set_password() -> None:  # between the pass's last look at the index and its delete
        await accounts.set_password(account, "a long password", token)

    removed, used = await run_interleaved(
        sync,
        retention.retire_accounts(later, POLICY),
        lambda r: asks(r, "ZSCORE", ACCOUNTS_SEEN, account.account_id),
        set_password,
    )
    assert used
    assert removed == [idle.account_id]  # the other idle account goes; the racer stays
    kept = await accounts.load(account.account_id)
    assert kept is not None and kept.password_hash is not None
    holder = await accounts.by_name("Racer")  # its name is still its own
    assert holder is not None and holder.account_id == account.account_id
    assert (await accounts.authenticate(token)).account_id == account.account_id


async def test_a_backlog_of_due_games_drains_in_full_batches_within_one_pass(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    games = [(await handler.create("skull", 3, {}))[0] for _ in range(8)]
    Projector(sync).catch_up_all(games)
    lifecycle_settled(sync, *games)
    # the first due (oldest activity; games projected in the same millisecond go by id) is kept: the
    # next batches start after it
    kept = sync.index.zrange(ACTIVITY, 0, 0)[0].decode()
    sync.index.zadd(DIRTY, {kept: 1})
    policy = RetentionPolicy(batch=2, max_batches=3)
    later = wall_clock_ms() + 15 * DAY_MS

    first = retire(sync, later, policy)
    assert len(first.abandoned) == 5  # three batches of two, less the one kept
    assert kept not in first.abandoned
    second = retire(sync, later, policy)
    assert sorted(first.abandoned + second.abandoned) == sorted(g for g in games if g != kept)
    assert sync.redis.exists(game_keys(kept).events)


async def test_an_account_that_begins_to_take_a_seat_after_it_was_picked_is_kept(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    store = EventStore(store_backend[1], index_backend[1] if index_backend else None)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    accounts = Accounts(store)
    account, token = await accounts.register("Joiner", None)
    later = wall_clock_ms() + 31 * DAY_MS

    async def join() -> None:  # the join route's first step, on the same clock as the pass
        assert await store.run(retention.account_seating(account.account_id, later))

    removed, joined = await run_interleaved(
        sync,
        retention.retire_accounts(later, POLICY),
        lambda r: asks(r, "ZSCORE", ACCOUNTS_SEEN, account.account_id),
        join,
    )
    assert joined
    assert removed == []
    assert (await accounts.authenticate(token)).account_id == account.account_id
    holder = await accounts.by_name("Joiner")
    assert holder is not None and holder.account_id == account.account_id


async def test_an_account_removed_after_it_was_authenticated_cannot_take_a_seat(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    store = EventStore(store_backend[1], index_backend[1] if index_backend else None)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    accounts = Accounts(store)
    account, token = await accounts.register("Late", None)
    assert (await accounts.authenticate(token)).account_id == account.account_id  # the join's check
    later = wall_clock_ms() + 31 * DAY_MS
    assert retire(sync, later, POLICY).accounts == [account.account_id]  # then the pass removes it

    assert not await store.run(retention.account_seating(account.account_id, later))  # the join is refused
    assert await accounts.load(account.account_id) is None
    assert not sync.redis.exists(account_seated_key(account.account_id))  # nothing left of it


async def test_an_expired_private_tables_chat_and_invite_code_are_removed_with_it(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    expired, _ = await handler.create("skull", 3, {"private": True})
    assert (sync.secret(expired) or {}).get("invite")  # the invite code sits in the secret hash
    await handler.join(expired, "Early", "")
    fields = {"channel": "table", "from": "seat:0", "name": "Early", "seat": 0, "text": "anyone?"}
    sync.run(store_chat.append(expired, "message", fields, wall_clock_ms(), 100))
    assert all(sync.redis.exists(key) for key in chat_keys(expired))
    await handler.expire(expired, (await handler.load(expired)).version)
    Projector(sync).catch_up(expired)
    lifecycle_settled(sync, expired)
    assert retire(sync, wall_clock_ms() + 25 * HOUR_MS, POLICY).expired == [expired]
    assert not any(key.startswith(f"ts:{{{expired}}}".encode()) for key in sync.redis.keys("ts:*"))


def open_dispute(sync: SyncEventStore, game_id: str, dispute_id: str, at_ms: int) -> None:
    """A dispute opened by seat 0 on round 1, as ``services.disputes.cases.Disputes.open`` records it."""
    opened = DisputeOpened(
        dispute_id=dispute_id,
        game_id=game_id,
        round=1,
        text="the deal looks wrong",
        seat=0,
        by=Party(role="seat", seat=0),
        at=at_ms,
    )
    assert sync.run(store_disputes.append(game_id, dispute_id, 0, opened, at_ms))
    sync.run(store_disputes.mark_open(game_id, dispute_id, at_ms))


def resolve_dispute(sync: SyncEventStore, game_id: str, dispute_id: str, at_ms: int) -> None:
    known = len(sync.run(store_disputes.read(game_id, dispute_id)))
    resolved = DisputeResolved(
        verdict="rejected",
        reason="the deal re-derives",
        by=Party(role="operator", operator="admin"),
        at=at_ms,
    )
    assert sync.run(store_disputes.append(game_id, dispute_id, known, resolved, at_ms))
    sync.run(store_disputes.mark_resolved(game_id, dispute_id))


def slot_keys(sync: SyncEventStore, game_id: str) -> list[bytes]:
    return [key for key in sync.redis.keys("ts:*") if key.startswith(f"ts:{{{game_id}}}".encode())]


async def test_an_abandoned_game_s_resolved_disputes_go_with_it_and_an_open_one_keeps_it_until_resolved(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    settled, _ = await idle_game(handler, sync)
    disputed, _ = await idle_game(handler, sync)
    now = wall_clock_ms()
    open_dispute(sync, settled, "a" * 16, now)
    resolve_dispute(sync, settled, "a" * 16, now + 1)
    open_dispute(sync, disputed, "b" * 16, now)
    open_dispute(sync, disputed, "c" * 16, now)
    resolve_dispute(sync, disputed, "c" * 16, now + 1)
    assert sync.redis.exists(store_disputes.stream_key(settled, "a" * 16), store_disputes.index_key(settled))

    first = retire(sync, now + 15 * DAY_MS, POLICY)
    assert first.abandoned == [settled]
    assert slot_keys(sync, settled) == []  # its resolved dispute's stream and index went with it
    assert sync.run(store_disputes.of_game(disputed)) == ["b" * 16, "c" * 16]  # an open one keeps all
    assert len(sync.run(store_disputes.read(disputed, "b" * 16))) == 1
    assert stored(sync.redis, sync.index, disputed) == {"events": True, "secret": True, "lobby": True}
    assert [(g, d) for g, d, _ in sync.run(store_disputes.open_disputes(10))] == [(disputed, "b" * 16)]

    assert retire(sync, now + 16 * DAY_MS, POLICY).abandoned == []  # still open: still kept
    resolve_dispute(sync, disputed, "b" * 16, now + 16 * DAY_MS)
    assert retire(sync, now + 16 * DAY_MS, POLICY).abandoned == [disputed]
    assert slot_keys(sync, disputed) == []
    assert sync.run(store_disputes.open_disputes(10)) == []


async def test_a_dispute_opened_after_the_pass_read_the_game_s_disputes_keeps_the_game(
    store_backend: Clients, index_backend: IndexClients
) -> None:
    handler = handler_on(store_backend, index_backend)
    sync = SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)
    game_id, picked = await idle_game(handler, sync)

    async def dispute() -> None:
        open_dispute(sync, game_id, "d" * 16, wall_clock_ms())

    removed, opened = await run_interleaved(
        sync,
        retention.remove_game(game_id, ACTIVITY, picked),
        lambda r: asks(r, "ZRANGE", store_disputes.index_key(game_id)),
        dispute,
    )
    assert opened and not removed
    assert sync.redis.exists(game_keys(game_id).events)
    assert len(sync.run(store_disputes.read(game_id, "d" * 16))) == 1  # the dispute and its game stay
