"""Coalesced hand-overs: at most one projection pending per game, a consumer's batch projecting many
games (no RQ job), and nothing ever left unprojected, whatever is lost on the way (fakeredis)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

import fakeredis
import pytest
import redis
from hypothesis import example, given, settings
from hypothesis import strategies as st

import workers.projector
import workers.stores
from projections.views import materialise
from services.history.folding import StateCache, advance
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import DIRTY, HANDOVER, game_keys
from services.store.operations import Handover
from services.store.queue import AppendNotifier, lifecycle_queue, projection_queue
from services.store.requests import Operation
from services.store.rq_workers import run_burst
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from services.telemetry import metrics
from workers.handover import Consumer
from workers.lifecycle import bot_move
from workers.projector import ENDED
from workers.sweeper import sweep

GAMES = 3
T = TypeVar("T")
Loss = Literal["none", "handover"]
Point = Literal["read_handovers", "begin_projection", "write_views"]
POINTS: tuple[Point, ...] = ("read_handovers", "begin_projection", "write_views")


class Died(BaseException):
    """The worker process was killed here (SIGKILL): nothing after this point runs, not even RQ's
    failure handling."""


# -- the world: one fake Redis, the write side, a projection worker with hooks ---------------------


class Hooks:
    """One thing to do the first time a projection reaches ``point`` (an append, a failure, death)."""

    def __init__(self) -> None:
        self.point: Point | None = None
        self.action: Callable[[], None] = lambda: None

    def arm(self, point: Point, action: Callable[[], None]) -> None:
        self.point, self.action = point, action

    def fire(self, point: Point) -> None:
        if point == self.point:
            self.point = None
            self.action()


HOOKS = Hooks()


STEPS: dict[str, Point] = {
    "read_handovers": "read_handovers",  # a consumer read the stream, before its claims
    "begin_projection": "begin_projection",
    "write_views": "write_views",
    "project_views": "write_views",  # the views written (with the indexes, when on the store's server)
}


def _delegates(operation: Generator[Any, Any, Any]) -> Iterator[str]:
    """The names of the operation and of the sub-operations it is delegating to, outermost first."""
    current: Any = operation
    while current is not None:
        yield current.__name__
        current = current.gi_yieldfrom


def _hooked(operation: Operation[T]) -> Operation[T]:
    """``operation``, firing ``HOOKS`` once a request of one of its projection steps (``STEPS``) has
    been answered by Redis, before the operation goes on with the reply."""
    send: Callable[[], Any] = operation.__next__
    while True:
        try:
            request = send()
        except StopIteration as done:
            return cast(T, done.value)
        points = [STEPS[name] for name in _delegates(operation) if name in STEPS]
        try:
            reply = yield request
        except Exception as error:
            send = functools.partial(operation.throw, error)
            continue
        for point in points:
            HOOKS.fire(point)
        send = functools.partial(operation.send, reply)


class HookedStore(SyncEventStore):
    """The projector's store, firing ``HOOKS`` right after each step of a projection (whether the
    projector runs one game or a batch in lockstep)."""

    def run(self, operation: Operation[T]) -> T:
        return super().run(_hooked(operation))

    def run_all(self, operations: Sequence[Operation[T]]) -> list[T | Exception]:
        return super().run_all([_hooked(operation) for operation in operations])


@contextlib.contextmanager
def hooked_projector() -> Iterator[None]:
    """The projection jobs run on ``HookedStore`` with a fresh fold cache (a fresh worker process)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(workers.stores, "SyncEventStore", HookedStore)
        patch.setattr(workers.projector, "_cache", StateCache())
        HOOKS.point = None
        try:
            yield
        finally:
            HOOKS.point = None


@pytest.fixture(autouse=True)
def hooked() -> Iterator[None]:
    with hooked_projector():
        yield


class LossyNotifier:
    """The API's notifier, or the same process dying after the append (``handover``: nothing after
    the append script ran; on one server the script handed the game over itself)."""

    def __init__(self, store: EventStore, sync: redis.Redis, loss: Loss) -> None:
        self.store, self.loss = store, loss
        self.real = AppendNotifier(store, projection_queue(sync))

    async def __call__(self, game_id: str, handover: Handover) -> None:
        if self.loss == "none":
            await self.real(game_id, handover)


@dataclass
class World:
    """Games on one server. ``split``: the write side sees the indexes as living elsewhere (as on a
    cluster, through a client of their own), so it hands games over in a round trip after the
    append, not in the append script's own step."""

    server: fakeredis.FakeServer
    sync: redis.Redis
    split: bool = False
    games: list[str] = field(default_factory=list)
    consumer: Consumer | None = None

    def the_consumer(self) -> Consumer:
        """The worker's standing consumer (on the hooked store, with a fold cache of its own)."""
        if self.consumer is None:
            index = fakeredis.FakeRedis(server=self.server) if self.split else None
            store = HookedStore(self.sync, index)
            self.consumer = Consumer(store, workers.projector.Projector(store, StateCache()))
        return self.consumer

    def write(self, loss: Loss, work: Callable[[GameCommands], Any]) -> Any:
        """Run write-side calls as an API process would: its own loop and async client."""

        async def main() -> Any:
            client = fakeredis.FakeAsyncRedis(server=self.server)
            index = fakeredis.FakeAsyncRedis(server=self.server) if self.split else None
            try:
                store = EventStore(client, index)
                return await work(
                    GameCommands(store, TokenStore(client), LossyNotifier(store, self.sync, loss))
                )
            finally:
                await client.aclose()
                if index is not None:
                    await index.aclose()

        return asyncio.run(main())

    def move(self, index: int, loss: Loss = "none") -> None:
        """The first awaited seat of game ``index`` plays its bot's move (nothing once it is over)."""
        game_id = self.games[index % len(self.games)]

        async def work(commands: GameCommands) -> None:
            folded = await commands.load(game_id)
            seats = folded.table.to_act(folded.state)
            if seats:
                seat = seats[0]
                move = bot_move(folded, seat, await commands.seeds(game_id))
                await commands.command(game_id, seat, f"m-{folded.version}-{seat}", move, folded.version)

        self.write(loss, work)

    def work_one(self) -> int:
        """The consumer takes one batch of hand-overs (without blocking) and projects it; a batch whose
        read failed is read again next time. Returns how many entries it read."""
        try:
            return self.the_consumer().take()
        except ConnectionError:
            return 0

    def die_in_next_batch(self) -> None:
        """The consumer takes a batch and is killed inside it (``Died`` armed in ``HOOKS``): the worker
        process is started again, with a new consumer reading the stream from its start."""
        with contextlib.suppress(Died):
            self.the_consumer().take()
        self.consumer = None
        HOOKS.point = None

    def work_all(self) -> None:
        """The worker: its queued projection jobs (the sweeper's), then its consumer until the stream
        has nothing more."""
        run_burst(self.sync, [projection_queue(self.sync)], max_jobs=100, logging_level="ERROR")
        while self.work_one():
            pass

    def lose_handovers(self) -> None:
        """What a restart of Redis loses of the hand-over: the stream and the pending flags (memory
        only). The worker's consumer reads the new stream from its start."""
        self.sync.delete(HANDOVER, *(game_keys(game_id).pending for game_id in self.games))
        if self.consumer is not None:
            self.consumer.last_id = "0-0"

    def sweep(self) -> None:
        sweep(SyncEventStore(self.sync), projection_queue(self.sync), lifecycle_queue(self.sync), grace_ms=0)

    def assert_projected_to_the_fold(self) -> None:
        assert unprojected(self.sync, self.games) == []


def unprojected(sync: redis.Redis, game_ids: list[str]) -> list[str]:
    """The games whose stored views are not exactly ``materialise`` of the fold of all their events
    (checkpoint and the fields' version at the head included; none for an ended game)."""
    store = SyncEventStore(sync)
    behind = []
    for game_id in game_ids:
        folded = advance(game_id, None, store.read(game_id))
        expected = {}  # an ended game's views are not kept
        if folded.state.status not in ENDED:
            expected = {k.encode(): v for k, v in materialise(folded.state, folded.version).items()}
            expected[b"at"] = str(folded.version).encode()
        stored = sync.hgetall(game_keys(game_id).views)
        if int(stored.pop(b"checkpoint", 0)) != folded.version or stored != expected:
            behind.append(game_id)
    return behind


def new_world(players: int = 3, split: bool = False) -> World:
    server = fakeredis.FakeServer()
    world = World(server, fakeredis.FakeRedis(server=server), split)

    async def table(commands: GameCommands) -> str:
        game_id, _ = await commands.create("skull", players, {"turn_seconds": 0})
        for seat in range(players):
            await commands.join(game_id, f"P{seat}", "")
        return game_id

    world.games = [world.write("none", table) for _ in range(GAMES)]
    world.work_all()  # a quiet start: every game projected, nothing pending
    return world


# -- what the hand-over does, step by step ---------------------------------------------------------


def handed(world: World) -> list[str]:
    """The games in the hand-over stream, in order (each entry once)."""
    return [fields[b"g"].decode() for _, fields in world.sync.xrange(HANDOVER)]


def test_a_game_is_handed_over_once_however_many_appends_come_before_its_projection() -> None:
    world = new_world()
    queue = projection_queue(world.sync)
    for _ in range(4):
        world.move(0)
        world.move(1)
    assert handed(world) == world.games[:2]  # one hand-over each for eight appends on two games
    assert queue.count == 0  # and no RQ job
    assert world.work_one() == 2
    assert world.sync.exists(HANDOVER) == 0  # read whole: dropped with the claims
    assert all(world.sync.get(game_keys(g).pending) is None for g in world.games)
    assert queue.count == 0
    world.assert_projected_to_the_fold()


def test_an_append_while_a_batch_is_projected_is_handed_over_again_and_taken_by_the_next_read() -> None:
    world = new_world()
    world.move(0)
    HOOKS.arm("begin_projection", lambda: world.move(0))  # flag cleared, head read: handed over again
    assert world.work_one() == 1
    assert handed(world) == [world.games[0]]
    assert world.work_one() == 1 and world.work_one() == 0
    world.assert_projected_to_the_fold()
    HOOKS.arm("write_views", lambda: world.move(0))  # after the head was read: handed over again
    world.move(0)
    world.work_all()
    assert projection_queue(world.sync).count == 0
    world.assert_projected_to_the_fold()


@pytest.mark.parametrize("split", [False, True], ids=["one-server", "indexes-elsewhere"])
def test_an_append_between_a_projection_s_read_and_its_write_keeps_the_game_marked_and_handed_over(
    split: bool,
) -> None:
    world = new_world(split=split)
    game_id = world.games[0]
    world.move(0)
    world.sync.delete(HANDOVER)
    index = fakeredis.FakeRedis(server=world.server) if split else None
    projector = workers.projector.Projector(HookedStore(world.sync, index), StateCache())
    HOOKS.arm("begin_projection", lambda: world.move(0))  # flag cleared, tail read: then an append
    projected = projector.catch_up(game_id)
    store = SyncEventStore(world.sync)
    assert projected == store.checkpoint(game_id) == store.head(game_id) - 1  # the views of the fold
    assert world.sync.zscore(DIRTY, game_id) is not None  # behind its head: still marked
    assert handed(world) == [game_id]  # and handed over again by the append
    assert projector.catch_up(game_id) == store.head(game_id)
    assert world.sync.zscore(DIRTY, game_id) is None


def test_of_consumers_racing_on_a_hand_over_only_the_one_whose_clear_took_the_flag_projects_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = new_world()
    world.move(0)
    world.move(1)
    writes: list[str] = []
    real = workers.projector.project_views

    def counted(game_id: str, write: Any) -> Any:
        writes.append(game_id)
        return real(game_id, write)

    monkeypatch.setattr(workers.projector, "project_views", counted)
    first, second = Consumer(SyncEventStore(world.sync)), Consumer(SyncEventStore(world.sync))
    second.batch = 1  # reads one entry: the stream is not dropped under the other
    assert second.take() == 1 and writes == [world.games[0]]
    assert first.take() == 2  # both read; the first game's flag is gone: only the second is written
    assert writes == [world.games[0], world.games[1]]
    world.assert_projected_to_the_fold()


def test_a_consumer_drops_the_stream_only_once_it_read_all_of_it() -> None:
    world = new_world()
    for index in range(3):
        world.move(index)
    consumer = world.the_consumer()
    consumer.batch = 2
    assert consumer.take() == 2 and handed(world) == world.games  # more after what it read: kept
    assert consumer.take() == 1 and world.sync.exists(HANDOVER) == 0
    world.move(0)  # a stream made again: its ids go on past the last one read
    assert consumer.take() == 1
    world.assert_projected_to_the_fold()


def test_a_game_whose_hand_over_was_lost_is_projected_by_the_sweeper_despite_its_pending_flag() -> None:
    world = new_world(split=True)  # on one server the append script hands over in its own step
    world.move(2, loss="handover")
    assert world.sync.get(game_keys(world.games[2]).pending) is not None
    assert handed(world) == []
    world.move(2)  # its flag is still set: not handed over again
    assert handed(world) == []
    world.sweep()
    world.work_all()
    world.assert_projected_to_the_fold()
    assert world.sync.get(game_keys(world.games[2]).pending) is None
    world.move(2)  # and the next append hands it over again
    assert handed(world) == [world.games[2]]


@pytest.mark.parametrize("point", ["read_handovers", "begin_projection", "write_views"])
def test_a_consumer_killed_in_its_batch_leaves_the_games_to_the_sweeper_or_the_next_consumer(
    point: Point,
) -> None:
    world = new_world()
    world.move(0)
    world.move(1)
    HOOKS.arm(point, die)
    world.die_in_next_batch()
    world.move(2)
    world.work_all()  # the next consumer: the stream from its start, the games it can claim
    world.sweep()  # the rest (claimed by the dead one, views never written): by the sweeper
    world.work_all()
    world.assert_projected_to_the_fold()


def test_after_a_restart_lost_the_hand_overs_the_dirty_games_are_projected_again() -> None:
    world = new_world()
    world.move(0)
    world.move(1)
    world.lose_handovers()
    assert world.work_one() == 0
    world.move(0)  # its flag went with the restart: handed over again at once
    assert handed(world) == [world.games[0]]
    recovered = Consumer(SyncEventStore(world.sync)).recover()  # a consumer starting or reconnecting
    assert recovered >= 2
    world.assert_projected_to_the_fold()


# -- the property ------------------------------------------------------------------------------------

games = st.integers(0, GAMES - 1)
appends = st.tuples(st.just("append"), games, st.just("none"))
lossy_appends = st.tuples(st.just("append"), games, st.just("handover"))
works = st.tuples(st.just("work"), st.none(), st.none())
racing_works = st.tuples(st.just("work_with_append"), st.sampled_from(POINTS), games)
steps = st.lists(
    st.one_of(
        appends,
        appends,
        works,
        racing_works,
        racing_works,
        lossy_appends,
        st.tuples(st.just("work_failing"), st.sampled_from(POINTS), st.none()),
        st.tuples(st.just("work_dying"), st.sampled_from(POINTS), st.none()),
        st.tuples(st.just("lose_handovers"), st.none(), st.none()),
        st.tuples(st.just("sweep"), st.none(), st.none()),
    ),
    max_size=24,
)


def fail() -> None:
    raise ConnectionError("Redis went away mid-projection")


def die() -> None:
    raise Died


@pytest.mark.thorough
@settings(max_examples=max(10, settings().max_examples // 4))  # ~1 s an example (a quarter of the profile's)
@given(steps=steps, finals=st.lists(games, max_size=3))
@example(steps=[("append", 0, "none"), ("work_with_append", "write_views", 0)], finals=[])  # head read
@example(
    steps=[("append", 0, "none"), ("work_with_append", "read_handovers", 0)], finals=[]
)  # read, flag set
@example(steps=[("append", 1, "handover"), ("append", 0, "none"), ("work", None, None)], finals=[1])
@example(
    steps=[("append", 0, "none"), ("work_dying", "read_handovers", None), ("append", 1, "none")], finals=[]
)
@example(steps=[("append", 2, "handover"), ("append", 2, "none"), ("sweep", None, None)], finals=[2])
@pytest.mark.parametrize("split", [False, True], ids=["one-server", "indexes-elsewhere"])
def test_any_interleaving_of_appends_pokes_losses_and_workers_ends_with_every_game_at_its_fold(
    split: bool, steps: list[tuple[str, Any, Any]], finals: list[int]
) -> None:
    """Appends (whose hand-over may be lost), consumer batches (which may meet an append, fail or be
    killed at any step), hand-overs lost with a restart and sweeps, in any order; then the worker
    process goes on as it does (sweeps, its jobs and its consumer) and every game's views are exactly
    the fold of its events. Without any loss the consumer alone suffices, no sweep needed. Random by
    default (the hypothesis profile); a failure prints its seed and a ``@reproduce_failure`` blob
    that replays it."""
    with hooked_projector():
        run_interleaving(steps, finals, split)


def run_interleaving(steps: list[tuple[str, Any, Any]], finals: list[int], split: bool) -> None:
    world = new_world(split=split)
    lossy = False
    for kind, a, b in steps:
        if kind == "append":
            world.move(a, b)
            lossy |= b != "none" and split  # on one server the append script handed over itself
        elif kind == "work":
            world.work_one()
        elif kind == "work_with_append":
            HOOKS.arm(a, lambda game=b: world.move(game))
            world.work_one()
        elif kind == "work_failing":
            HOOKS.arm(a, fail)
            world.work_one()
            lossy = True
        elif kind == "work_dying":
            HOOKS.arm(a, die)
            world.die_in_next_batch()
            lossy = True
        elif kind == "lose_handovers":
            world.lose_handovers()
            lossy = True
        elif kind == "sweep":
            world.sweep()
        HOOKS.point = None
    if not lossy:  # nothing lost: the consumer alone brings every game to its head
        world.work_all()
        world.assert_projected_to_the_fold()
    for index in finals:
        world.move(index)
    if lossy:
        for _ in range(2):  # the worker process: its sweeper's passes, its jobs and its consumer
            world.sweep()
            world.work_all()
    else:
        world.work_all()
    world.assert_projected_to_the_fold()
    assert world.sync.exists(HANDOVER) == 0


def test_a_batch_counts_each_game_s_lag_from_its_hand_over(monkeypatch: pytest.MonkeyPatch) -> None:
    world = new_world()
    lags: list[tuple[float, int]] = []
    monkeypatch.setattr(metrics, "projection_lag", lambda seconds, games=1: lags.append((seconds, games)))
    world.move(0)
    world.move(1)
    time.sleep(0.05)
    started = time.monotonic()
    world.work_one()
    took = time.monotonic() - started
    ((seconds, count),) = lags
    assert count == 2
    assert 0.05 <= seconds < 0.05 + took + 5  # from the first hand-over (its entry's time), not the read
    world.assert_projected_to_the_fold()
