"""The nearest Python peer, the ``eventsourcing`` library (imported lazily: a dev dependency only),
and our own command path on the same per-command workload.

Per command: a four-seat Skull King table decides a legal command with the same rules, and the
batch of events it makes is saved durably, from 64 concurrent callers, one table each. Ours is
``GameCommands.command`` in process (decide, append with dedup and hash chain; Redis AOF
``always``) from 64 asyncio tasks; the peer is an ``Aggregate`` holding the table's state, folded by
the same rules (``PeerTable``: one aggregate event per batch), and ``Application.save`` from 64
threads, on SQLite (a WAL file, ``synchronous=FULL``: an fsync per commit, as ours) and on POPO
(memory: informational, no durability). Both caller patterns are measured, each side in turns with
the other: the caller keeps its aggregate (``kept``), or loads the table before every command
(``reload``). CPU per command counts the work wherever it runs: our process and the Redis server;
the peer's process (SQLite runs in it). Rebuild: the peer's ``repository.get`` of every table (its
events decoded and folded by the same rules) vs our read + decode + fold, both counted in the game's
events.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
import random
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.table import TableState
from services.bench.procs import cpu_seconds
from services.errors import AppError
from services.store.connection import PoolLimits, async_client
from services.store.event_store import EventStore
from services.store.operations import Handover
from services.store.tokens import TokenStore
from services.table.commands import GameCommands

CALLERS = 64


PATTERNS = ("kept", "reload")  # the caller keeps its aggregate / loads the table before each command


@dataclass(frozen=True)
class Turn:
    """One side's run of one pattern: commands accepted, the wall time, and the CPU they cost (ours:
    this process + the Redis server; the peer: this process, SQLite included, it runs in process)."""

    commands: int
    wall: float
    cpu: float

    @property
    def per_second(self) -> float:
        return self.commands / self.wall if self.wall > 0 else 0.0

    @property
    def cpu_per_command(self) -> float:
        return self.cpu / self.commands if self.commands else math.nan


@dataclass(frozen=True)
class PeerFigures:
    label: str
    rebuild_events_per_second: float
    ours_rebuild_events_per_second: float  # measured in turns with the peer's: the same minutes


def sqlite_synchronous(path: Path) -> int:
    """The ``synchronous`` level a fresh connection to ``path`` has (2 = FULL: every commit fsyncs
    the WAL), as the peer's own connections have it: the library leaves the default."""
    connection = sqlite3.connect(path)
    try:
        return int(connection.execute("PRAGMA synchronous").fetchone()[0])
    finally:
        connection.close()


async def ours_turn(
    url: str, redis_pid: int, seconds: float, pattern: str, game: str = "skull-king", players: int = 4
) -> Turn:
    """Our in-process command path (``GameCommands.command``: decide, append with dedup and hash
    chain, Redis AOF ``always``), 64 concurrent callers on fresh tables. ``kept``: the caller plays
    from the fold the process holds (the command path's own cache, as a peer caller holds its
    aggregate); ``reload``: it loads the table before every command."""
    client = async_client(url, PoolLimits(max_connections=CALLERS))  # the client the service runs on

    async def no_poke(game_id: str, handover: Handover) -> None:
        return None

    handler = GameCommands(EventStore(client), TokenStore(client), no_poke)
    tables: list[str] = []
    for _ in range(CALLERS):
        game_id, _ = await handler.create(game, players, {})
        for seat in range(players):
            await handler.join(game_id, f"P{seat}", "")
        tables.append(game_id)
    done = 0
    end = time.perf_counter() + seconds

    async def caller(index: int) -> None:
        nonlocal done
        rng = random.Random(index)
        game_id = tables[index]
        step = 0
        while time.perf_counter() < end:
            folded = handler.cache.get(game_id) if pattern == "kept" else None
            if folded is None:
                folded = await handler.load(game_id)
            if folded.state.status != "playing":
                return
            seat = rng.choice(sorted(folded.table.to_act(folded.state)))
            choice = msgspec.to_builtins(rng.choice(folded.table.legal_commands(folded.state, seat)))
            step += 1
            with contextlib.suppress(AppError):
                await handler.command(game_id, seat, f"c{index}-{step}", choice, None)
                done += 1

    cpu = time.process_time() + cpu_seconds(redis_pid)
    started = time.perf_counter()
    await asyncio.gather(*(caller(i) for i in range(CALLERS)))
    spent = time.perf_counter() - started
    cpu = time.process_time() + cpu_seconds(redis_pid) - cpu
    await client.aclose()
    return Turn(done, spent, cpu)


@functools.cache
def _aggregate() -> Any:
    """The peer's aggregate class, defined once (the library registers each class by its topic)."""
    from eventsourcing.domain import Aggregate, event

    class PeerTable(Aggregate):
        """A table whose state is folded by our rules; each aggregate event carries one batch of
        the game's events (as JSON-ready builtins: the library's transcoder stores them)."""

        @event("Opened")
        def __init__(self, game: str, batch: list[dict[str, Any]]) -> None:
            self.game = game
            self.state: TableState | None = None
            self.fold(batch)

        @event("Played")
        def play(self, batch: list[dict[str, Any]]) -> None:
            self.fold(batch)

        def fold(self, batch: list[dict[str, Any]]) -> None:
            table = table_for(self.game)
            self.state = table.fold(self.state, [msgspec.convert(e, table.event_type) for e in batch])

    return PeerTable


def _opened(index: int, game: str, players: int) -> tuple[Any, SecretSeeds, int]:
    """A peer table with every seat taken (the game started): the aggregate, its seeds, its events."""
    table = table_for(game)
    seeds = SecretSeeds(bytes([index]) * 32, bytes([index + 1]) * 32)
    batch = table.create(f"peer{index:04d}", players, {}, seeds.chain_commitment(0), False)
    aggregate = _aggregate()(game, [msgspec.to_builtins(e) for e in batch])
    events = len(batch)
    for seat in range(players):
        joined = table.join(aggregate.state, f"P{seat}", "", seeds)
        aggregate.play([msgspec.to_builtins(e) for e in joined])
        events += len(joined)
    return aggregate, seeds, events


def _random_move(table: Any, aggregate: Any, seeds: SecretSeeds, rng: random.Random) -> int | None:
    """A legal command of a seat to act, chosen by ``rng``, decided and played on the peer's
    aggregate; the events it made (``None``: the game is over)."""
    state = aggregate.state
    if state.status != "playing":
        return None
    seat = rng.choice(sorted(table.to_act(state)))
    batch = table.decide(state, rng.choice(table.legal_commands(state, seat)), seat, seeds)
    aggregate.play([msgspec.to_builtins(e) for e in batch])
    return len(batch)


def _application(label: str, tmp: Path) -> Any:
    from eventsourcing.application import Application  # lazily: a dev dependency

    env = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
    if label == "sqlite":
        env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(tmp / "es.db")}
    return Application(env=env)


def peer_turn(label: str, seconds: float, pattern: str, game: str = "skull-king", players: int = 4) -> Turn:
    """The ``eventsourcing`` peer (``label``: ``sqlite``, a WAL file that fsyncs every commit, or
    ``popo``, a dict in memory) on fresh tables from 64 threads: ``Aggregate`` + ``save()`` per
    command. ``kept``: each caller holds its aggregate; ``reload``: ``repository.get`` before each
    command (its events read, decoded and folded by the same rules)."""
    table = table_for(game)
    with tempfile.TemporaryDirectory(prefix="tablestream-peer-") as tmp:
        app: Any = _application(label, Path(tmp))
        opened = [_opened(i, game, players) for i in range(CALLERS)]
        for aggregate, _, _ in opened:
            app.save(aggregate)
        counts = [0] * CALLERS
        end = time.perf_counter() + seconds

        def caller(index: int) -> None:
            rng = random.Random(index)
            aggregate, seeds, _ = opened[index]
            while time.perf_counter() < end:
                if pattern == "reload":
                    aggregate = app.repository.get(aggregate.id)
                if _random_move(table, aggregate, seeds, rng) is None:
                    return
                app.save(aggregate)
                counts[index] += 1

        threads = [threading.Thread(target=caller, args=(i,)) for i in range(CALLERS)]
        cpu = time.process_time()
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        spent = time.perf_counter() - started
        cpu = time.process_time() - cpu
        app.close()
    return Turn(sum(counts), spent, cpu)


def peer_rebuild(
    label: str,
    ours_rebuild: Callable[[], float],
    rebuild_rounds: int = 5,
    game: str = "skull-king",
    players: int = 4,
    moves: int = 120,
) -> PeerFigures:
    """The peer's rebuild (``repository.get`` of 64 tables of ``moves`` commands each) in events per
    second; ``ours_rebuild``: one pass of ours, run in turns with the peer's passes, so that a noisy
    neighbour weighs on both sides alike; each side's figure is its best pass."""
    table = table_for(game)
    with tempfile.TemporaryDirectory(prefix="tablestream-peer-") as tmp:
        app: Any = _application(label, Path(tmp))
        opened = [_opened(i, game, players) for i in range(CALLERS)]
        events = [count for _, _, count in opened]
        for index, (aggregate, seeds, _) in enumerate(opened):
            rng = random.Random(index)
            for _ in range(moves):
                played = _random_move(table, aggregate, seeds, rng)
                if played is None:
                    break
                events[index] += played
            app.save(aggregate)
        rebuild = ours = 0.0
        for _ in range(rebuild_rounds):
            started = time.perf_counter()
            for aggregate, _, _ in opened:
                app.repository.get(aggregate.id)
            rebuild = max(rebuild, sum(events) / (time.perf_counter() - started))
            ours = max(ours, ours_rebuild())
        app.close()
    return PeerFigures(f"eventsourcing {label}", rebuild, ours)
