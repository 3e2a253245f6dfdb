"""The online lifecycle's jobs and the loop that fires due timers.

- ``TimerLoop`` (a thread of the worker process, next to the sweeper) takes the games whose timer is
  due from the global deadline index and queues one ``fire_timer`` job per (game, armed version),
  with a deterministic job id so that repeated ticks and several worker processes collapse.
- ``PaceLoop`` (another thread, every 50 ms) takes the paced bot moves that are due from the paced
  index (a bot at a table with a person waits the table's ``bot_pace_ms``:
  ``services.table.lifecycle.bot_delay_ms``) and queues their ``play_bot`` jobs, each exactly once, on the
  bots' own queue (``services.store.queue.bot_queue``).
- ``fire_timer`` runs the timeout (or the expiry) through the write side, ``GameCommands``, with the
  command id ``timeout-<version>-<seat>`` and expected version = the armed version: the first run
  appends, any other run is a duplicate or loses on the version, and a player's command that got in
  first wins the same way. A due timer of several seats (a simultaneous selection) is played one
  seat at a time, lowest seat first: each timeout keeps the others' deadline. The id lives in the
  system's own scope (``services.store.keys.dedup_field``), so no player's id can take it; a run
  that finds it taken (by an earlier run) gets that run's answer and reads the timer again. A run
  whose command is refused for any other reason than a newer version reads the game again and, if
  the timer still waits on the same version, takes its deadline off (``drop_timer``): the table
  then waits for its players instead of the timer loop queueing the same refused job for ever.
- ``settle_lifecycle`` arms the timer and queues the bots of a batch whose appending process died
  (or lost Redis) before it could, or whose bots' jobs were lost or failed: the sweeper queues it
  for a caught-up game left in the dirty set with its timer behind its head or a bot to act
  (``workers.sweeper``).
- ``play_bot`` lets a bot act for its seat: its own seat's view (``projections.views.seat_view``),
  ``bots.choose`` with its chance (``bot_rng``: a keyed HMAC stream from the game's secret
  master seed, the version and the seat, which no seat can compute), and the write side's
  ``bot_command`` (id ``bot-<version>-<seat>``, expected version ``version``, in the system's scope).

RQ jobs are synchronous; they run the async write side in their process's one event loop with its
async Redis clients (``async_client_for``, replaceable by tests that run on fakeredis), made by the
process's first job and kept (``_Session``); a job that fails drops them, the next makes new ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis
import structlog
from rq import Queue, get_current_job

from bots import BotRandom
from bots.levels import choose
from domain.fairness import SecretSeeds
from projections.views import seat_view
from services.errors import AppError
from services.history.folding import Folded, StateCache
from services.operating.config import Settings
from services.store import indexes
from services.store.connection import AsyncStoreClient
from services.store.event_store import EventStore, SyncEventStore
from services.store.lean import lean_scripts
from services.store.packing import with_hiredis_packing
from services.store.queue import BotJobs, bot_queue, enqueue_bot, enqueue_timer, projection_queue
from services.store.tokens import TokenStore
from services.table import tracing
from services.table.commands import GameCommands
from services.table.lifecycle import Clock, Lifecycle, lifecycle_behind, timer_seats, wall_clock_ms
from services.table.tracing import TracedAppendNotifier
from workers.stores import async_store_clients

T = TypeVar("T")
MAX_TIMEOUTS_PER_JOB = 12
PACE_BATCH = 100  # paced moves taken per round trip

log = structlog.get_logger("tablestream.lifecycle")
_cache = StateCache()


def default_async_client(connection: redis.Redis) -> aioredis.Redis:
    """An async client to the server of the job's (sync) connection (TCP or unix socket)."""
    kw = connection.connection_pool.connection_kwargs
    common: dict[str, Any] = {
        "db": kw.get("db", 0),
        "username": kw.get("username"),
        "password": kw.get("password"),
    }
    if kw.get("path"):
        return with_hiredis_packing(aioredis.Redis(unix_socket_path=kw["path"], **common))
    return with_hiredis_packing(
        aioredis.Redis(host=kw.get("host", "localhost"), port=kw.get("port", 6379), **common)
    )


async_client_for: Callable[[redis.Redis], aioredis.Redis] = default_async_client
clock: Clock = wall_clock_ms


def bot_rng(seeds: SecretSeeds, game_id: str, version: int, seat: int) -> BotRandom:
    """The bot's only chance on the game at ``version``: fixed when the game was created (its secret
    master seed), the same for every run of the same job, and unpredictable to every seat, during
    the game and after it (``SecretSeeds.bot_key``; docs/security.md)."""
    return BotRandom(seeds.bot_key(game_id, version, seat))


def bot_move(folded: Folded, seat: int, seeds: SecretSeeds) -> dict[str, Any]:
    """The bot's command for ``seat``, from that seat's own view only."""
    view = seat_view(folded.state, folded.version, seat)
    level = folded.state.bot_level(seat)
    return choose(folded.state.game, view, level, bot_rng(seeds, folded.game_id, folded.version, seat))


def commands_for(
    aclient: AsyncStoreClient, sync: redis.Redis, now: Clock, index: aioredis.Redis | None = None
) -> GameCommands:
    """The write side as the API builds it, on the job's connections."""
    store = EventStore(aclient, index, Settings.from_env().acks)
    return GameCommands(
        store,
        TokenStore(aclient),
        TracedAppendNotifier(store, projection_queue(sync)),
        _cache,
        Lifecycle(store, BotJobs(bot_queue(sync)), now),
    )


def _run(
    sync: redis.Redis, work: Callable[[GameCommands], Awaitable[T]], span: str = "", game_id: str = ""
) -> T:
    """``work`` on the write side; tracing on, in a span of its own named ``span`` (a trace per
    timer or bot move: the command's append, hand-over and drain are its children)."""
    if span and tracing.configure_once():
        inner = work

        async def traced(commands: GameCommands) -> T:
            with tracing.job_span(span, None, (), **{tracing.GAME_ID: game_id}):
                return await inner(commands)

        work = traced

    session = _session_for(sync)

    async def main() -> T:
        commands = commands_for(session.aclient, sync, clock, session.index)
        try:
            return await work(commands)
        finally:
            await commands.store.aclose_nodes()

    try:
        return session.runner.run(main())
    except BaseException:
        # a job that failed may have left a connection mid-reply (a timeout's signal): start afresh
        _close_session()
        raise


class _Session:
    """The event loop and async Redis clients the lifecycle jobs of one worker process share, made
    by its first job, instead of a loop and a client per job: its sync connection (the job's), the
    client factory it was made with (tests replace it) and the process it belongs to."""

    def __init__(self, sync: redis.Redis) -> None:
        self.sync, self.factory, self.pid = sync, async_client_for, os.getpid()
        self.runner = asyncio.Runner()
        own = async_store_clients(sync)  # the store's, when the job's connection is only the queue's
        self.aclient, self.index = own if own is not None else (async_client_for(sync), None)

    def serves(self, sync: redis.Redis) -> bool:
        return self.sync is sync and self.factory is async_client_for and self.pid == os.getpid()

    def close(self) -> None:
        async def aclose() -> None:
            for client in {id(c): c for c in (self.aclient, self.index) if c is not None}.values():
                lean = lean_scripts(client)  # the jobs' stores share its lean connection
                if lean is not None:
                    await lean.aclose()
                await client.aclose()

        try:
            if self.pid == os.getpid():  # a forked child leaves its parent's loop alone
                self.runner.run(aclose())
        finally:
            self.runner.close()


_session: _Session | None = None


def _session_for(sync: redis.Redis) -> _Session:
    global _session
    if _session is None or not _session.serves(sync):
        _close_session()
        _session = _Session(sync)
    return _session


def _close_session() -> None:
    global _session
    session, _session = _session, None
    if session is not None:
        with contextlib.suppress(Exception):
            session.close()


async def fire(commands: GameCommands, game_id: str, version: int, now: Clock) -> list[str]:
    """Play what the timer armed at ``version`` calls for, while it is due; returns what was done
    (``"timeout:<seat>"``, ``"expired"``), empty when the timer moved on (a command won)."""
    done: list[str] = []
    for _ in range(MAX_TIMEOUTS_PER_JOB):
        timer = await commands.store.read_timer(game_id)
        if int(timer.get("version", 0)) != version or "deadline" not in timer:
            return done
        if int(timer["deadline"]) > now():
            return done
        try:
            if timer.get("kind") == "expire":
                await commands.expire(game_id, version)
                return [*done, "expired"]
            folded = await commands.load(game_id)
            awaited = sorted(timer_seats(timer) & set(folded.table.to_act(folded.state)))
            if folded.version != version or not awaited:
                return done
            outcome = await commands.timeout(game_id, version, awaited[0], bot_move)
        except AppError as lost:
            log.info("timer_lost", game_id=game_id, version=version, code=lost.code)
            await _end_refused(commands, game_id, version, lost)
            return done
        done.append(f"timeout:{awaited[0]}")
        version = outcome.version
    return done


async def _end_refused(commands: GameCommands, game_id: str, version: int, lost: AppError) -> None:
    """After the timer's command at ``version`` was refused: a newer version (a command got in
    first) armed its own timer; otherwise, if the game and its timer still stand at ``version``,
    nothing this job can do will change, so the timer's deadline is taken off rather than fired
    again and again (logged as ``timer_dropped``: a table that waits for its players)."""
    if lost.code == "version_conflict":
        return
    timer = await commands.store.read_timer(game_id)
    if int(timer.get("version", 0)) != version or "deadline" not in timer:
        return
    try:
        folded = await commands.load(game_id)
    except AppError:
        folded = None
    if folded is not None and folded.version != version:
        return
    if await commands.store.drop_timer(game_id, version):
        log.warning("timer_dropped", game_id=game_id, version=version, code=lost.code)


async def act(commands: GameCommands, game_id: str, version: int, seat: int) -> bool:
    """The bot of ``seat`` acts on the game at ``version``; ``False`` if the game moved on."""
    folded = await commands.load(game_id)
    state = folded.state
    if folded.version != version or seat not in state.bots or seat not in folded.table.to_act(state):
        return False
    seeds = await commands.seeds(game_id)
    try:
        await commands.bot_command(game_id, version, seat, bot_move(folded, seat, seeds))
    except AppError as lost:
        log.info("bot_lost", game_id=game_id, version=version, seat=seat, code=lost.code)
        return False
    return True


async def settle(commands: GameCommands, game_id: str, version: int) -> bool:
    """Run the lifecycle of the game's batch at ``version`` again (arm its timer, queue its bots) if
    the process that appended it did not, or its bots have not moved yet
    (``services.table.lifecycle.lifecycle_behind``; a bot's job still queued or running is not queued
    twice, a failed one is queued again); ``False`` when there is nothing to do or the game has
    moved on (its newer batch arms it)."""
    folded = await commands.load(game_id)
    if folded.version != version or commands.lifecycle is None:
        return False
    if not lifecycle_behind(await commands.store.read_timer(game_id), folded):
        return False
    await commands.lifecycle.after_append(folded)
    log.warning("lifecycle_repaired", game_id=game_id, version=version)
    return True


def fire_timer(game_id: str, version: int) -> list[str]:
    """RQ entry point (``services.store.queue.TIMER_JOB``)."""
    job = get_current_job()
    assert job is not None, "fire_timer() runs inside an RQ job"
    return _run(
        job.connection, lambda commands: fire(commands, game_id, version, clock), "lifecycle.timer", game_id
    )


def play_bot(game_id: str, version: int, seat: int) -> bool:
    """RQ entry point (``services.store.queue.BOT_JOB``)."""
    job = get_current_job()
    assert job is not None, "play_bot() runs inside an RQ job"
    return _run(
        job.connection, lambda commands: act(commands, game_id, version, seat), "lifecycle.bot", game_id
    )


def settle_lifecycle(game_id: str, version: int) -> bool:
    """RQ entry point (``services.store.queue.SETTLE_JOB``, queued by the sweeper)."""
    job = get_current_job()
    assert job is not None, "settle_lifecycle() runs inside an RQ job"
    return _run(
        job.connection, lambda commands: settle(commands, game_id, version), "lifecycle.settle", game_id
    )


def tick(store: SyncEventStore, queue: Queue, now_ms: int) -> list[tuple[str, int]]:
    """Queue a ``fire_timer`` job for every due timer; returns (game id, armed version) pairs."""
    fired = []
    for game_id in store.due_timers(now_ms):
        timer = store.settle_timer(game_id, now_ms)
        if timer is not None:
            version = int(timer["version"])
            enqueue_timer(queue, game_id, version)
            fired.append((game_id, version))
    return fired


def pace(
    store: SyncEventStore, queue: Queue, now_ms: int, batch: int = PACE_BATCH
) -> list[tuple[str, int, int]]:
    """Queue the job of every paced bot move due at ``now_ms`` (``services.table.lifecycle.bot_delay_ms``);
    returns the (game id, version, seat) this call took. Each move is taken by one caller only (its
    ZREM in ``indexes.take_due_bots``), however many worker processes run this loop; one lost
    between its take and its queueing (the process died) leaves its game marked dirty with a bot to
    act, and the sweeper's ``settle_lifecycle`` paces it again."""
    taken: list[tuple[str, int, int]] = []
    while True:
        due = store.run(indexes.take_due_bots(now_ms, batch))
        for game_id, version, seat in due:
            enqueue_bot(queue, game_id, version, seat)
        taken += due
        if len(due) < batch:
            return taken


class _Loop(threading.Thread):
    """Runs ``step(store, queue, now)`` every ``interval`` seconds until ``stop()``."""

    def __init__(
        self,
        name: str,
        step: Callable[[SyncEventStore, Queue, int], object],
        store: SyncEventStore,
        queue: Queue,
        interval: float,
        now: Clock,
    ):
        super().__init__(name=name, daemon=True)
        self._step, self._store, self._queue, self._interval, self._now = step, store, queue, interval, now
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self._step(self._store, self._queue, self._now())
            except Exception:  # a flaky connection must not kill the loop; the next tick retries
                log.exception("lifecycle_tick_failed", loop=self.name)

    def stop(self) -> None:
        self._stopped.set()


class TimerLoop(_Loop):
    """Queues the jobs of due timers (``tick``) every ``interval`` seconds."""

    def __init__(
        self, store: SyncEventStore, queue: Queue, interval: float = 0.5, now: Clock = wall_clock_ms
    ):
        super().__init__("tablestream-timers", tick, store, queue, interval, now)


class PaceLoop(_Loop):
    """Queues the jobs of due paced bot moves (``pace``, on ``queue``: the bots' own,
    ``services.store.queue.bot_queue``) every ``interval`` seconds: short, so that a
    bot acts within about 50 ms of its due time (a pace is about a second). An idle pass is one read
    of the paced index."""

    def __init__(
        self, store: SyncEventStore, queue: Queue, interval: float = 0.05, now: Clock = wall_clock_ms
    ):
        super().__init__("tablestream-pace", pace, store, queue, interval, now)
