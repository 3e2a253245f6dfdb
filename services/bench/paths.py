"""Profiles of the two hot paths, in process, on a private Redis (no AOF: the profiles show CPU,
not fsync waits): the command path (load, decide,
append, notify) and the projection jobs it queues, each under pyinstrument, with the CPU time and
the RQ jobs per command.

    python -m services.bench.paths [--tables 32] [--rounds 20] [--out DIR]

Each round sends one command to every table (in turn, from one client), then one SimpleWorker runs
the projection jobs queued meanwhile: the worker sees ``tables`` commands arriving during one job,
as under load. The workers are named by dotted path (RQ imports them), never imported here.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis
from msgspec import to_builtins
from pyinstrument import Profiler

from services.history.folding import StateCache
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore
from services.store.queue import AppendNotifier, projection_queue
from services.store.rq_workers import run_queued_projections
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from services.telemetry.structured_logging import configure_logging

PLAYERS = 4


async def _first_legal(commands: GameCommands, game_id: str) -> tuple[int, dict[str, Any]] | None:
    folded = await commands.load(game_id)
    seats = folded.table.to_act(folded.state)
    if not seats:
        return None
    legal = folded.table.legal_commands(folded.state, seats[0])
    return seats[0], to_builtins(legal[0])


def profile_paths(url: str, tables: int, rounds: int, out: Path) -> dict[str, float]:
    sync = redis.Redis.from_url(url)
    queue = projection_queue(sync)
    api = Profiler(interval=0.0005)
    worker_profile = Profiler(interval=0.0005)
    spent = {"command_cpu": 0.0, "worker_cpu": 0.0, "commands": 0.0, "jobs": 0.0}

    async def main() -> None:
        client = aioredis.Redis.from_url(url)
        store = EventStore(client)
        commands = GameCommands(store, TokenStore(client), AppendNotifier(store, queue), StateCache())
        games = []
        for _ in range(tables):
            game_id, _ = await commands.create("skull-king", PLAYERS, {"turn_seconds": 0})
            for seat in range(PLAYERS):
                await commands.join(game_id, f"P{seat}", "")
            games.append(game_id)
        _work(sync, None, spent)
        spent.update(command_cpu=0.0, worker_cpu=0.0, jobs=0.0)
        for _ in range(rounds):
            started = time.process_time()
            api.start()
            for game_id in games:
                move = await _first_legal(commands, game_id)
                if move is not None:
                    seat, body = move
                    await commands.command(game_id, seat, f"p-{time.monotonic_ns()}", body, None)
                    spent["commands"] += 1
            api.stop()
            spent["command_cpu"] += time.process_time() - started
            _work(sync, worker_profile, spent)
        await client.aclose()

    asyncio.run(main())
    out.mkdir(parents=True, exist_ok=True)
    (out / "command-path.txt").write_text(api.output_text(unicode=True, show_all=False))
    (out / "projection-jobs.txt").write_text(worker_profile.output_text(unicode=True, show_all=False))
    sync.close()
    return spent


def _work(sync: redis.Redis, profiler: Profiler | None, spent: dict[str, float]) -> None:
    spent["jobs"] += projection_queue(sync).count  # nothing else is queued while the worker runs
    started = time.process_time()
    if profiler is not None:
        profiler.start()
    run_queued_projections(sync)
    if profiler is not None:
        profiler.stop()
    spent["worker_cpu"] += time.process_time() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.bench.paths", description=__doc__)
    parser.add_argument("--tables", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("bench-profiles"))
    args = parser.parse_args(argv)
    configure_logging(level=logging.WARNING)
    with (
        tempfile.TemporaryDirectory(prefix="tablestream-paths-") as tmp,
        EmbeddedRedis(Path(tmp), durable=False) as server,
    ):
        spent = profile_paths(server.url, args.tables, args.rounds, args.out)
    n = max(1.0, spent["commands"])
    print(
        f"{spent['commands']:.0f} commands on {args.tables} tables (profiled: CPU inflated); per command: "
        f"command path {spent['command_cpu'] / n * 1e6:,.0f} us CPU, projection worker "
        f"{spent['worker_cpu'] / n * 1e6:,.0f} us CPU, {spent['jobs'] / n:.2f} RQ jobs; "
        f"profiles in {args.out}/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
