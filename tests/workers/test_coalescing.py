"""Coalesced projection pokes: at most one projection pending per game, a drain job projecting many
games, and nothing ever left unprojected, whatever is lost on the way (fakeredis)."""

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
from rq.job import Job
from rq.serializers import JSONSerializer

import workers.projector
import workers.stores
from projections.views import materialise
from services import metrics
from services.commands import GameCommands
from services.history.folding import StateCache, advance
from services.store.event_store import EventStore, SyncEventStore
from services.store.indexes import Claim
from services.store.keys import DIRTY, DRAIN_PENDING, POKED, game_keys
from services.store.operations import Handover
from services.store.queue import AppendNotifier, lifecycle_queue, projection_queue, run_burst
from services.store.requests import Operation
from services.store.tokens import TokenStore
from workers.lifecycle import bot_move
from workers.projector import ENDED
from workers.sweeper import sweep

GAMES = 3
T = TypeVar("T")
Loss = Literal["none", "handover", "enqueue"]
Point = Literal["take_poked", "begin_projection", "write_views"]
POINTS: tuple[Point, ...] = ("take_poked", "begin_projection", "write_views")


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

    def take_poked(self, limit: int, claim: Claim = "keep") -> list[str]:
        games = super().take_poked(limit, claim)
        HOOKS.fire("take_poked")
        return games


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
    the append script ran; on one server the script handed the game over itself) or after the
    hand-over, before queueing the drain job (``enqueue``)."""

    def __init__(self, store: EventStore, sync: redis.Redis, loss: Loss) -> None:
        self.store, self.loss = store, loss
        self.real = AppendNotifier(store, projection_queue(sync))

    async def __call__(self, game_id: str, handover: Handover) -> None:
        if self.loss == "none":
            await self.real(game_id, handover)
        elif self.loss == "enqueue" and not handover.handed:
            await self.store.publish_appended(game_id, handover.poke, handover.deadline)


@dataclass
class World:
    """Games on one server. ``split``: the write side sees the indexes as living elsewhere (as on a
    cluster, through a client of their own), so it hands games over in a round trip after the
    append, not in the append script's own step."""

    server: fakeredis.FakeServer
    sync: redis.Redis
    split: bool = False
    games: list[str] = field(default_factory=list)

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

    def work_one(self) -> None:
        """A worker runs the next queued projection job (RQ's failure handling and retries included)."""
        run_burst(self.sync, [projection_queue(self.sync)], max_jobs=1, logging_level="ERROR")

    def die_in_next_job(self) -> None:
        """A worker takes the next job and is killed inside it (``Died`` armed in ``HOOKS``)."""
        queue = projection_queue(self.sync)
        job_id = queue.pop_job_id() if queue.count else None
        if job_id is not None:
            with contextlib.suppress(Died):
                Job.fetch(job_id, connection=self.sync, serializer=JSONSerializer).perform()
        HOOKS.point = None

    def work_all(self) -> None:
        run_burst(self.sync, [projection_queue(self.sync)], logging_level="ERROR")

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


def test_a_game_is_handed_over_once_however_many_appends_come_before_its_projection() -> None:
    world = new_world()
    queue = projection_queue(world.sync)
    assert queue.count == 0
    for _ in range(4):
        world.move(0)
        world.move(1)
    assert queue.count == 1  # one drain job for eight appends on two games
    assert sorted(world.sync.smembers(POKED)) == sorted(g.encode() for g in world.games[:2])
    world.work_one()
    assert queue.count == 0 and world.sync.scard(POKED) == 0
    assert world.sync.get(DRAIN_PENDING) is None
    assert all(world.sync.get(game_keys(g).pending) is None for g in world.games)
    world.assert_projected_to_the_fold()


def test_an_append_while_a_drain_job_runs_is_projected_by_the_same_job_and_queues_none() -> None:
    world = new_world()
    world.move(0)
    HOOKS.arm("begin_projection", lambda: world.move(0))  # flag cleared, head read: handed over again
    world.work_one()
    assert projection_queue(world.sync).count == 0  # the job held DRAIN_PENDING and took it itself
    assert world.sync.get(DRAIN_PENDING) is None and world.sync.scard(POKED) == 0
    world.assert_projected_to_the_fold()
    HOOKS.arm("write_views", lambda: world.move(0))  # after the head was read: handed over again
    world.move(0)
    world.work_one()
    assert projection_queue(world.sync).count == 0
    world.assert_projected_to_the_fold()


@pytest.mark.parametrize("split", [False, True], ids=["one-server", "indexes-elsewhere"])
def test_an_append_between_a_projection_s_read_and_its_write_keeps_the_game_marked_and_handed_over(
    split: bool,
) -> None:
    world = new_world(split=split)
    game_id = world.games[0]
    world.move(0)
    index = fakeredis.FakeRedis(server=world.server) if split else None
    projector = workers.projector.Projector(HookedStore(world.sync, index), StateCache())
    HOOKS.arm("begin_projection", lambda: world.move(0))  # flag cleared, tail read: then an append
    projected = projector.catch_up(game_id)
    store = SyncEventStore(world.sync)
    assert projected == store.checkpoint(game_id) == store.head(game_id) - 1  # the views of the fold
    assert world.sync.zscore(DIRTY, game_id) is not None  # behind its head: still marked
    assert world.sync.sismember(POKED, game_id)  # and handed over again by the append
    assert projector.catch_up(game_id) == store.head(game_id)
    assert world.sync.zscore(DIRTY, game_id) is None


def _claims(monkeypatch: pytest.MonkeyPatch, after: Callable[[Claim], None] = lambda _: None) -> list[Claim]:
    """The claims of every take of handed-over games, in order; ``after(claim)`` runs after each."""
    claims: list[Claim] = []
    take = HookedStore.take_poked

    def counted(store: HookedStore, limit: int, claim: Claim = "keep") -> list[str]:
        claims.append(claim)
        games = take(store, limit, claim)
        after(claim)
        return games

    monkeypatch.setattr(HookedStore, "take_poked", counted)
    return claims


def test_a_drain_job_holds_its_claim_while_it_drains_and_a_game_handed_over_after_its_release_queues_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = new_world()
    released: list[bool] = []

    def after(claim: Claim) -> None:
        if claim == "release" and not released:
            released.append(True)
            world.move(1)  # after the job's last take, which cleared DRAIN_PENDING

    claims = _claims(monkeypatch, after)
    world.move(0)
    world.work_one()
    assert claims[0] == "hold" and claims[-1] == "release"
    assert set(claims[1:-1]) <= {"keep"}  # it looked again while nothing came, then let go
    assert projection_queue(world.sync).count == 1
    world.work_one()
    assert projection_queue(world.sync).count == 0
    world.assert_projected_to_the_fold()


def test_a_drain_job_ends_at_once_when_the_worker_s_other_queues_have_jobs_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = new_world()
    claims = _claims(monkeypatch)
    world.move(0)
    lifecycle_queue(world.sync).enqueue_call("workers.lifecycle.settle_lifecycle", args=(world.games[2], 1))
    world.work_one()
    assert claims == ["hold", "release"]  # no look for more: a bot's move is waiting
    assert world.sync.get(DRAIN_PENDING) is None
    world.assert_projected_to_the_fold()


def test_a_drain_job_ends_after_its_time_however_much_keeps_coming(monkeypatch: pytest.MonkeyPatch) -> None:
    world = new_world()
    monkeypatch.setattr(workers.projector, "DRAIN_SECONDS", 0.0)
    claims = _claims(monkeypatch)
    world.move(0)
    world.work_one()
    assert claims == ["hold", "release"]
    world.assert_projected_to_the_fold()


def test_a_game_whose_hand_over_was_lost_is_projected_by_the_sweeper_despite_its_pending_flag() -> None:
    world = new_world(split=True)  # on one server the append script hands over in its own step
    world.move(2, loss="handover")
    assert world.sync.get(game_keys(world.games[2]).pending) is not None
    assert world.sync.scard(POKED) == 0
    world.move(2)  # its flag is still set: not handed over again
    assert projection_queue(world.sync).count == 0
    world.sweep()
    world.work_all()
    world.assert_projected_to_the_fold()
    assert world.sync.get(game_keys(world.games[2]).pending) is None
    world.move(2)  # and the next append hands it over again
    assert projection_queue(world.sync).count == 1


@pytest.mark.parametrize("loss", ["enqueue", "handover"])
def test_a_lost_drain_job_is_queued_again_by_the_sweeper(loss: Loss) -> None:
    """On one server a process dying right after the append script loses no more than the job."""
    world = new_world()
    world.move(1, loss=loss)
    assert world.sync.smembers(POKED) == {world.games[1].encode()}
    world.move(0)  # a drain job is claimed (lost): none is queued for this one either
    assert projection_queue(world.sync).count == 0
    swept = sweep(SyncEventStore(world.sync), projection_queue(world.sync), lifecycle_queue(world.sync))
    assert swept.drained and swept.lagging == []  # within the grace: only the drain job
    world.work_all()
    world.assert_projected_to_the_fold()
    assert world.sync.get(DRAIN_PENDING) is None


# -- the property ------------------------------------------------------------------------------------

games = st.integers(0, GAMES - 1)
appends = st.tuples(st.just("append"), games, st.just("none"))
lossy_appends = st.tuples(st.just("append"), games, st.sampled_from(["handover", "enqueue"]))
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
        st.tuples(st.just("lose_queue"), st.none(), st.none()),
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
@example(steps=[("append", 0, "none"), ("work_with_append", "take_poked", 0)], finals=[])  # taken, flag set
@example(steps=[("append", 1, "enqueue"), ("append", 0, "none"), ("work", None, None)], finals=[1])
@example(steps=[("append", 0, "none"), ("work_dying", "take_poked", None), ("append", 1, "none")], finals=[])
@example(steps=[("append", 2, "handover"), ("append", 2, "none"), ("sweep", None, None)], finals=[2])
@pytest.mark.parametrize("split", [False, True], ids=["one-server", "indexes-elsewhere"])
def test_any_interleaving_of_appends_pokes_losses_and_workers_ends_with_every_game_at_its_fold(
    split: bool, steps: list[tuple[str, Any, Any]], finals: list[int]
) -> None:
    """Appends (whose hand-over or drain job may be lost), projection jobs (which may meet an append,
    fail or be killed at any step), a lost queue and sweeps, in any order; then the worker process
    goes on as it does (sweeps and jobs) and every game's views are exactly the fold of its events.
    Without any loss the queued jobs alone suffice, no sweep needed. Random by default (the hypothesis
    profile); a failure prints its seed and a ``@reproduce_failure`` blob that replays it."""
    with hooked_projector():
        run_interleaving(steps, finals, split)


def run_interleaving(steps: list[tuple[str, Any, Any]], finals: list[int], split: bool) -> None:
    world = new_world(split=split)
    lossy = False
    for kind, a, b in steps:
        if kind == "append":
            world.move(a, b)
            lossy |= b != "none"
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
            world.die_in_next_job()
            lossy = True
        elif kind == "lose_queue":
            lossy |= projection_queue(world.sync).count > 0
            projection_queue(world.sync).empty()
        elif kind == "sweep":
            world.sweep()
        HOOKS.point = None
    if not lossy:  # nothing lost: the queued jobs alone bring every game to its head
        world.work_all()
        world.assert_projected_to_the_fold()
    for index in finals:
        world.move(index)
    if lossy:
        for _ in range(2):  # the worker process: its sweeper's passes and its workers
            world.sweep()
            world.work_all()
    else:
        world.work_all()
    world.assert_projected_to_the_fold()
    assert world.sync.scard(POKED) == 0


def test_a_drain_job_counts_each_game_s_lag_from_the_take_before_it_not_from_the_job_s_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    world = new_world()
    lags: list[tuple[float, int]] = []
    monkeypatch.setattr(metrics, "projection_lag", lambda seconds, games=1: lags.append((seconds, games)))
    takes: list[float] = []

    def after(claim: Claim) -> None:
        takes.append(time.monotonic())
        if len(takes) == 3:  # the job has looked twice and found nothing: a game comes now
            world.move(1)

    _claims(monkeypatch, after)
    world.move(0)
    started = time.monotonic()
    world.work_one()
    assert [games for _, games in lags] == [1, 1], lags
    first, second = (seconds for seconds, _ in lags)
    assert first >= takes[0] - started  # since the job's queueing, at least until its first take
    assert second < time.monotonic() - takes[1]  # from the take before the one that found it
    assert second < time.monotonic() - started  # not the job's whole run
    world.assert_projected_to_the_fold()
