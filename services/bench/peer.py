"""The nearest Python peer, the ``eventsourcing`` library (imported lazily: a dev dependency only),
and our own command path on the same per-command workload.

Per command: a four-seat Skull King table decides a legal command with the same rules, and the
batch of events it makes is saved durably, from 64 concurrent callers, one table each. Ours is
``GameCommands.command`` in process (load the folded table, decide, append with dedup and hash
chain) from 64 asyncio tasks; the peer is an ``Aggregate`` holding the table's state, folded by the
same rules (``PeerTable``: one aggregate event per batch), and ``Application.save`` from 64 threads,
on SQLite (a file: an fsync per commit) and on POPO (memory). Rebuild: the peer's
``repository.get`` of every table (its events decoded and folded by the same rules) vs our read +
decode + fold, both counted in the game's events.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.table import TableState
from services.commands import GameCommands
from services.errors import AppError
from services.store.event_store import EventStore
from services.store.operations import Handover
from services.store.tokens import TokenStore

CALLERS = 64


@dataclass(frozen=True)
class PeerFigures:
    label: str
    commands_per_second: float
    rebuild_events_per_second: float
    ours_rebuild_events_per_second: float  # measured in turns with the peer's: the same minutes


async def ours_per_command(url: str, seconds: float, game: str = "skull-king", players: int = 4) -> float:
    """Accepted commands per second through the in-process command path, 64 concurrent callers."""
    client = aioredis.Redis.from_url(url)

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
            folded = await handler.load(game_id)
            if folded.state.status != "playing":
                return
            seat = rng.choice(sorted(folded.table.to_act(folded.state)))
            choice = msgspec.to_builtins(rng.choice(folded.table.legal_commands(folded.state, seat)))
            step += 1
            with contextlib.suppress(AppError):
                await handler.command(game_id, seat, f"c{index}-{step}", choice, None)
                done += 1

    started = time.perf_counter()
    await asyncio.gather(*(caller(i) for i in range(CALLERS)))
    spent = time.perf_counter() - started
    await client.aclose()
    return done / spent


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


def peer(
    label: str,
    seconds: float,
    ours_rebuild: Callable[[], float],
    rebuild_rounds: int = 5,
    game: str = "skull-king",
    players: int = 4,
) -> PeerFigures:
    """The ``eventsourcing`` peer: ``label`` is ``sqlite`` or ``popo``. ``ours_rebuild``: one pass
    of our rebuild (events per second), run in turns with the peer's passes, so that a noisy
    neighbour weighs on both sides alike; each side's figure is its best pass."""
    from eventsourcing.application import Application  # lazily: a dev dependency

    table = table_for(game)
    with tempfile.TemporaryDirectory(prefix="tablestream-peer-") as tmp:
        env = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
        if label == "sqlite":
            env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(Path(tmp) / "es.db")}
        app: Any = Application(env=env)
        opened = [_opened(i, game, players) for i in range(CALLERS)]
        for aggregate, _, _ in opened:
            app.save(aggregate)
        counts = [0] * CALLERS
        events = [count for _, _, count in opened]
        end = time.perf_counter() + seconds

        def caller(index: int) -> None:
            rng = random.Random(index)
            aggregate, seeds, _ = opened[index]
            while time.perf_counter() < end and aggregate.state.status == "playing":
                state = aggregate.state
                seat = rng.choice(sorted(table.to_act(state)))
                batch = table.decide(state, rng.choice(table.legal_commands(state, seat)), seat, seeds)
                aggregate.play([msgspec.to_builtins(e) for e in batch])
                app.save(aggregate)
                counts[index] += 1
                events[index] += len(batch)

        threads = [threading.Thread(target=caller, args=(i,)) for i in range(CALLERS)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        per_command = sum(counts) / (time.perf_counter() - started)
        rebuild = ours = 0.0
        for _ in range(rebuild_rounds):
            started = time.perf_counter()
            for aggregate, _, _ in opened:
                app.repository.get(aggregate.id)
            rebuild = max(rebuild, sum(events) / (time.perf_counter() - started))
            ours = max(ours, ours_rebuild())
        app.close()
    return PeerFigures(f"eventsourcing {label}", per_command, rebuild, ours)
