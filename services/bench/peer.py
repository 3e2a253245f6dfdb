"""The nearest Python peer, the ``eventsourcing`` library (imported lazily: a dev dependency only),
and our own command path on the same per-command workload.

Per command: one aggregate (a table), one event, one durable save, from 64 concurrent callers.
Ours is ``GameCommands.command`` in process (load the folded table, decide, append with dedup and
hash chain) from 64 asyncio tasks, one table each; the peer is ``Aggregate`` + ``Application.save``
from 64 threads, one aggregate each, on SQLite (a file: an fsync per commit) and on POPO (memory).
Rebuild: the peer's ``repository.get`` of every aggregate vs our read + decode + fold.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis

from services.commands import GameCommands
from services.errors import AppError
from services.store.event_store import EventStore
from services.store.tokens import TokenStore

CALLERS = 64


@dataclass(frozen=True)
class PeerFigures:
    label: str
    commands_per_second: float
    rebuild_events_per_second: float


async def ours_per_command(url: str, seconds: float, game: str = "skull-king", players: int = 4) -> float:
    """Accepted commands per second through the in-process command path, 64 concurrent callers."""
    client = aioredis.Redis.from_url(url)

    async def no_poke(game_id: str, poke: bool, deadline: int | None) -> None:
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

    class Seat(Aggregate):
        @event("Opened")
        def __init__(self, name: str) -> None:
            self.name = name
            self.moves: list[Any] = []

        @event("Moved")
        def move(self, card: int, trick: int) -> None:
            self.moves.append((card, trick))

    return Seat


def peer(label: str, seconds: float, rebuild_rounds: int = 3) -> PeerFigures:
    """The ``eventsourcing`` peer: ``label`` is ``sqlite`` or ``popo``."""
    from eventsourcing.application import Application  # lazily: a dev dependency

    seat_class = _aggregate()
    with tempfile.TemporaryDirectory(prefix="tablestream-peer-") as tmp:
        env = {"PERSISTENCE_MODULE": "eventsourcing.popo"}
        if label == "sqlite":
            env = {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(Path(tmp) / "es.db")}
        app: Any = Application(env=env)
        aggregates = [seat_class(f"table {i}") for i in range(CALLERS)]
        for aggregate in aggregates:
            app.save(aggregate)
        counts = [0] * CALLERS
        end = time.perf_counter() + seconds

        def caller(index: int) -> None:
            aggregate = aggregates[index]
            while time.perf_counter() < end:
                aggregate.move(counts[index] % 60, counts[index] // 4)
                app.save(aggregate)
                counts[index] += 1

        threads = [threading.Thread(target=caller, args=(i,)) for i in range(CALLERS)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        per_command = sum(counts) / (time.perf_counter() - started)
        events = sum(counts) + CALLERS
        started = time.perf_counter()
        for _ in range(rebuild_rounds):
            for aggregate in aggregates:
                app.repository.get(aggregate.id)
        rebuild = events * rebuild_rounds / (time.perf_counter() - started)
        app.close()
    return PeerFigures(f"eventsourcing {label}", per_command, rebuild)
