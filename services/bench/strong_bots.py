"""Do tables of strong bots slow another table's projections? ``python -m services.bench.strong_bots``

Starts the bench's stack (Redis with AOF, one API process, the worker process with the production
layout: ``--workers 2 --bots auto``, one RQ worker that takes no bot moves beside one that takes every
queue; ``services.bench.stack``),
then one client process plays one Skull King table of four persons at a steady pace
(``--rate`` commands per second, random legal moves, a new table when one ends) twice, each for
``--seconds``: first alone, then beside ``--bot-tables`` tables of four ``strong`` bots, which play
as fast as the worker runs their ``play_bot`` jobs (a table without a person is not paced). It prints
the paced table's projection lag (from the command's 200 to the first projection at or past its
version, heard on the game's live channel: ``services.bench.run.Projected``) p50/p99 in both runs and
their ratio, measured in the same run, and how many bot moves were played meanwhile.

    python -m services.bench.strong_bots [--smoke] [--seconds 10] [--rate 10] [--bot-tables 4]
                                         [--workers 2]

``--workers 1``: one RQ worker on every queue, bot moves included (the layout of a lone worker).

``--smoke``: 2 s per run and 2 bot tables (figures not meaningful).
"""

from __future__ import annotations

import argparse
import logging
import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from services.bench.players import GAME, PLAYERS, Players, percentile
from services.bench.run import Projected, stream_events
from services.bench.stack import running_stack
from services.telemetry.structured_logging import configure_logging

BOT_LEVEL = "strong"
WORKERS = 2  # as ``tablestream serve``, compose and k8s run them (``workers.pool.layout``)


@dataclass(frozen=True)
class Lags:
    p50: float
    p99: float
    commands: int
    unheard: int  # commands whose projection the listener missed (a table begun between its polls)

    @classmethod
    def of(cls, lags: list[float]) -> Lags:
        heard = [lag for lag in lags if math.isfinite(lag)]
        return cls(percentile(heard, 0.5), percentile(heard, 0.99), len(heard), len(lags) - len(heard))

    def render(self) -> str:
        missed = f" ({self.unheard} not heard)" if self.unheard else ""
        return (
            f"p50 {self.p50 * 1e3:,.1f} ms p99 {self.p99 * 1e3:,.1f} ms over {self.commands} commands{missed}"
        )


def settled(
    projected: Projected, accepted: list[tuple[str, int, float]], timeout: float = 30.0
) -> list[float]:
    """The lags of ``accepted`` once every game's projection reached its last accepted version (or
    ``timeout`` passed)."""
    last: dict[str, int] = {}
    for game_id, version, _ in accepted:
        last[game_id] = max(version, last.get(game_id, 0))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(any(v >= version for v, _ in projected.seen.get(g, [])) for g, version in last.items()):
            break
        time.sleep(0.05)  # polling the listener's record; not a synchronisation of a test
    return projected.lags(accepted)


def _ratio(a: float, b: float) -> str:
    return "n/a" if b <= 0 or math.isnan(a) or math.isnan(b) else f"{a / b:.1f}x"


def bot_tables(base: str, count: int) -> list[str]:
    """``count`` Skull King tables of four ``strong`` bots each, started (the host fills them)."""
    games = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for _ in range(count):
            created = client.post("/games", json={"game": GAME, "players": PLAYERS})
            created.raise_for_status()
            game_id, host = created.json()["game_id"], created.json()["host_token"]
            filled = client.post(
                f"/games/{game_id}/bots",
                json={"level": BOT_LEVEL},
                headers={"Authorization": f"Bearer {host}"},
            )
            filled.raise_for_status()
            games.append(game_id)
    return games


def run(
    seconds: float,
    rate: float,
    tables: int,
    emit: Callable[[str], object] = print,
    workers: int = WORKERS,
) -> tuple[Lags, Lags]:
    configure_logging(level=logging.WARNING)
    emit(
        f"strong bots beside a paced table: {seconds:g} s per run, {rate:g} commands/s at the paced "
        f"table, {tables} tables of 4 {BOT_LEVEL} bots; one API process, a worker process of {workers} "
        + ("(one takes no bot moves)" if workers > 1 else "(on every queue)")
    )
    with (
        tempfile.TemporaryDirectory(prefix="tablestream-strong-bots-") as tmp,
        running_stack(Path(tmp), workers=workers) as stack,
    ):
        players = Players(stack.port, 1)
        projected = Projected(stack.redis.url)
        try:
            paced, _ = players.create(1)
            tally, paced, _ = players.play(paced, seconds, rate=rate)
            alone = Lags.of(settled(projected, tally.accepted))
            emit(f"  paced table alone:        projection lag {alone.render()}")
            games = bot_tables(stack.base, tables)
            before = stream_events(stack.redis.url, games)
            started = time.monotonic()
            tally, paced, _ = players.play(paced, seconds, rate=rate)
            elapsed = time.monotonic() - started
            moved = stream_events(stack.redis.url, games) - before
            beside = Lags.of(settled(projected, tally.accepted))
            emit(f"  beside the strong bots:   projection lag {beside.render()}")
            emit(
                f"  ratio (beside / alone):   p50 {_ratio(beside.p50, alone.p50)}, "
                f"p99 {_ratio(beside.p99, alone.p99)}; the bot tables appended {moved} events "
                f"in {elapsed:.1f} s ({moved / elapsed if elapsed else 0:.1f}/s)"
            )
        finally:
            projected.close()
            players.close()
    return alone, beside


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="2 s per run, 2 bot tables")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=10.0, help="commands per second at the paced table")
    parser.add_argument("--bot-tables", type=int, default=4)
    parser.add_argument(
        "--workers", type=int, default=WORKERS, help="RQ workers of the worker process (--bots auto)"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        run(2.0, args.rate, 2, workers=args.workers)
    else:
        run(args.seconds, args.rate, args.bot_tables, workers=args.workers)


if __name__ == "__main__":
    main()
