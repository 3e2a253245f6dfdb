"""The full command against its anchor at the same load: one load generator, one client count, one rate.

The wrk rows drive the bare one-Lua-append with 64 connections, where Redis and the server batch
replies and fsyncs, while the full-command row's clients play at their own concurrency and pace; so
their ratio measured the load, not the path (the same anchor costs about 2.5x more at one connection
than at 64). Here both sides are driven by the same client processes (``services.bench.players``):

1. ``clients`` processes play their tables as fast as they can (a view, then a legal command, as in
   the full-command row) for ``seconds``, the worker drained after: the server's CPU (API, worker and
   Redis, from /proc) per accepted command, and the command rate;
2. the same processes send ``GET /bench/append`` (one EVALSHA, the anchor) paced at that command rate;
3. the same processes read their tables' views paced at the view rate of step 1, once kept in the API
   process's memory and once read from Redis (the view cache off): the CPU per view of each kind.

The command's figure is net of the views its clients read (each counted at its kind's CPU: kept, or
read from Redis; views the API rendered because the projection was behind are counted as read from
Redis, which costs less than rendering, so the net figure is an upper bound). Every figure is net of
what the processes spend at rest (measured first, for ``seconds``): at a low rate the worker's loops
and the servers' timers would otherwise weigh on each request by the time between requests.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from services.bench.players import Players, Table, percentile
from services.bench.procs import CpuSample
from services.bench.report import Row, cpu_split, micros, millis
from services.bench.run import drain, play_row
from services.bench.stack import Stack

CLIENT_COUNTS = (1, 16)
TARGET = 3.0  # the full command, projection included, net of views: at most this many anchors


@dataclass(frozen=True)
class Driven:
    """A paced run of one kind of request: how many, in how long, at what server CPU."""

    requests: int
    elapsed: float
    cpu: CpuSample
    latencies: list[float]

    @property
    def per_request(self) -> float:
        return self.cpu.total / self.requests if self.requests else math.nan

    def figure(self) -> str:
        rate = self.requests / self.elapsed if self.elapsed else 0.0
        return (
            f"{rate:,.0f} req/s p50 {millis(percentile(self.latencies, 0.5))}; "
            f"{cpu_split(self.cpu, self.requests)}"
        )


def _counts(stack: Stack, games: int | None = None) -> dict[str, int]:
    """The API's view cache counts (``services.bench.server``); ``games``: resize it first."""
    url = f"{stack.base}/bench/view-cache"
    if games is None:
        reply = httpx.get(url, timeout=10.0)
    else:
        reply = httpx.post(url, params={"games": games}, timeout=10.0)
    reply.raise_for_status()
    counts: dict[str, int] = reply.json()
    return counts


def _driven(stack: Stack, idle: CpuSample, run: Callable[[], tuple[int, list[float], float]]) -> Driven:
    """``run``'s requests with the server CPU they cost: the CPU the processes spent meanwhile, less
    what they spend at rest in as long (``idle``: per second)."""
    servers = stack.servers()
    before, started = servers.cpu(), time.monotonic()
    requests, latencies, elapsed = run()
    spent = servers.cpu() - before
    return Driven(requests, elapsed, _less_idle(spent, idle, time.monotonic() - started), latencies)


def _less_idle(spent: CpuSample, idle: CpuSample, seconds: float) -> CpuSample:
    at_rest = idle.seconds
    return CpuSample({name: cpu - at_rest.get(name, 0.0) * seconds for name, cpu in spent.seconds.items()})


def at_rest(stack: Stack, seconds: float) -> CpuSample:
    """Each server process's CPU per second with no request coming (the worker's sweeper, timer and
    pacing loops, RQ's heartbeats, Redis's own cron, the API's background tasks)."""
    servers = stack.servers()
    before, started = servers.cpu(), time.monotonic()
    threading.Event().wait(seconds)  # measuring the processes at rest for this long
    spent, elapsed = servers.cpu() - before, time.monotonic() - started
    return CpuSample({name: cpu / elapsed for name, cpu in spent.seconds.items()})


def _view_requests(tables: list[list[Table]]) -> list[list[tuple[str, str, str | None]]]:
    """Each process's views: every seat of every table it plays."""
    return [
        [("GET", f"/games/{t.game_id}/view", token) for t in share for token in t.tokens] for share in tables
    ]


def same_load_row(stack: Stack, clients: int, seconds: float, emit: Callable[[str], object] = print) -> Row:
    """The full command vs the anchor append, both driven by ``clients`` processes at the same rate."""
    players = Players(stack.port, clients, seed=clients)
    try:
        tables, _ = players.create(max(4, clients))
        _, tables, _ = players.play(tables, seconds=min(1.0, seconds))  # warm: caches, subscriptions
        drain(stack, tables)  # the worker has projected the warm-up before the processes are at rest
        idle = at_rest(stack, seconds)
        hits, rendered = _counts(stack)["hits"], _counts(stack)["rendered"]
        started = time.monotonic()
        played = play_row(stack, players, tables, seconds)  # the worker drained after
        played_cpu = _less_idle(played.cpu, idle, time.monotonic() - started)
        after = _counts(stack)
        kept, shown = after["hits"] - hits, after["rendered"] - rendered
        tally = played.tally
        name = f"full command vs one-Lua-append, {clients} client(s), same load"
        if not tally.commands:
            return Row(name, "no command accepted")
        rate = tally.commands / played.elapsed
        view_rate = tally.views / played.elapsed
        emit(f"   same load, {clients} client(s): {rate:,.0f} commands/s; driving the anchor and the views")
        appends: list[list[tuple[str, str, str | None]]] = [
            [("GET", "/bench/append", None)] for _ in range(clients)
        ]
        anchor = _driven(stack, idle, lambda: players.drive(appends, seconds, rate=rate))
        views = _view_requests(played.tables)
        kept_view = _driven(stack, idle, lambda: players.drive(views, seconds, rate=view_rate))
        capacity = _counts(stack)["capacity"]
        _counts(stack, games=0)
        try:
            read_view = _driven(stack, idle, lambda: players.drive(views, seconds, rate=view_rate))
        finally:
            _counts(stack, games=capacity)
    finally:
        players.close()
    kept = min(kept, tally.views)
    views_cpu = kept * kept_view.per_request + (tally.views - kept) * read_view.per_request
    net = (played_cpu.total - views_cpu) / tally.commands
    ratio = net / anchor.per_request
    latency = millis(percentile(tally.command_latency, 0.5))
    return Row(
        name,
        f"{micros(net)} per command net of views ({rate:,.0f} commands/s p50 {latency}; "
        f"with views {cpu_split(played_cpu, tally.commands)})",
        f"{micros(anchor.per_request)} per append ({anchor.figure()})",
        ratio,
        f"<= {TARGET:g}x CPU/req, projection included",
        ratio <= TARGET,
        [
            f"{clients} client process(es), {sum(len(s) for s in played.tables)} Skull King tables; "
            f"{tally.views} views ({kept} kept, {tally.views - kept} read from Redis, {shown} of them "
            f"rendered by the API: the projection was behind), {tally.rejected} rejected",
            f"at rest, subtracted from every figure: {cpu_split(idle, 1).replace('CPU/req ', '')} per second",
            f"views at the play's view rate ({view_rate:,.0f}/s): kept {micros(kept_view.per_request)}, "
            f"read from Redis {micros(read_view.per_request)} per view",
        ],
    )
