"""``tablestream bench``: start the stack, run every row, print the table (``--smoke``: tiny counts)."""

from __future__ import annotations

import asyncio
import functools
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import redis

from services.bench import peer, same_load, wrk
from services.bench.players import Players, percentile
from services.bench.report import Row, cpu_split, kib, mib, micros, millis, skipped
from services.bench.run import (
    Measured,
    Options,
    Projected,
    aof_size,
    drain,
    measure_wrk,
    play_row,
    rebuild_pass,
    replay_row,
    stream_bytes,
    stream_events,
    used_memory,
)
from services.bench.signing import measure, signing_row
from services.bench.stack import Stack, running_stack
from services.store.event_store import SyncEventStore
from services.telemetry.structured_logging import configure_logging

NO_WRK = "wrk is not installed (Debian: apt-get install -y wrk); rows driven by wrk are skipped"


def bench(options: Options, emit: Callable[[str], object] = print) -> list[Row]:
    if options.peer == "bgio":  # only the boardgame.io peer rows, on stacks of their own (issue 38)
        from services.bench import bgio_peer

        return bgio_peer.bench(options, emit)
    rows: list[Row] = []

    def add(row: Row) -> None:
        rows.append(row)
        emit(row.render())

    configure_logging(level=logging.WARNING)  # the in-process command path of the peer row logs too
    mode = (
        "smoke (tiny counts, figures not meaningful)" if options.smoke else f"{options.seconds:g} s per row"
    )
    emit(f"tablestream bench: {mode}; Redis with AOF appendfsync always; one API process, one worker")
    if not wrk.available():
        emit(f"NOTE: {NO_WRK}")
    with (
        tempfile.TemporaryDirectory(prefix="tablestream-bench-") as tmp,
        running_stack(Path(tmp), options.profile_dir) as stack,
    ):
        players = Players(stack.port, options.clients)
        try:
            _rows(stack, players, options, add, emit)
        finally:
            players.close()
    emit("== summary (ratios as the targets read them)")
    for row in rows:
        if row.target:
            emit(row.summary())
    return rows


def _rows(
    stack: Stack,
    players: Players,
    options: Options,
    add: Callable[[Row], None],
    emit: Callable[[str], object],
) -> None:
    if options.capacity_only:
        add(_capacity(stack, players, options, emit))
        return
    seconds = options.seconds
    tables, _ = players.create(options.tables)
    view: Measured | None = None
    read_view: Measured | None = None
    append: Measured | None = None
    if wrk.available():
        bare = measure_wrk(stack, "/bench/ping", seconds)
        health = measure_wrk(stack, "/healthz", seconds)
        ratio = health.per_request / bare.per_request
        add(
            Row(
                "GET /healthz vs bare /bench/ping (wrk -c64)",
                health.figure(),
                bare.figure(),
                ratio,
                "<= 1.3x CPU/req",
                ratio <= 1.3,
            )
        )
        append = measure_wrk(stack, "/bench/append", seconds)
        add(Row("bare one-Lua-append /bench/append (wrk -c64)", append.figure()))
        rotation = [(f"/games/{t.game_id}/view", t.tokens[0]) for share in tables for t in share]
        # unmeasured: the process watches each game from its first read, and keeps its views once
        # the subscription is confirmed; reads before that are the next row's (from Redis)
        measure_wrk(stack, "/games/{id}/view", 1.0, rotation=rotation)
        view = measure_wrk(stack, "/games/{id}/view", seconds, rotation=rotation)
        ratio = view.per_request / bare.per_request
        add(
            Row(
                f"projected seat view ({len(rotation)} tables) vs /bench/ping",
                view.figure(),
                bare.figure(),
                ratio,
                "<= 2x CPU/req",
                ratio <= 2.0,
                [f"kept in the API process's memory (view cache): {view_cache(stack)['hits']:,} hits so far"],
            )
        )
        capacity = view_cache(stack)["capacity"]
        view_cache(stack, games=0)  # the same views, each read from Redis
        try:
            read_view = measure_wrk(stack, "/games/{id}/view", seconds, rotation=rotation)
        finally:
            view_cache(stack, games=capacity)
        add(
            Row(
                "the same views read from Redis (view cache off) vs /bench/ping",
                read_view.figure(),
                bare.figure(),
                read_view.per_request / bare.per_request,
                notes=["what a view costs when its game changed since the process last read it"],
            )
        )
    else:
        for name in (
            "GET /healthz vs bare /bench/ping",
            "bare one-Lua-append /bench/append",
            "projected seat view vs /bench/ping",
            "the same views read from Redis (view cache off) vs /bench/ping",
        ):
            add(skipped(name, NO_WRK))

    # A full command: HTTP, rules, append with dedup and chain, projection; the server's CPU per
    # accepted command, with the views the clients read counted at the view row's CPU per request.
    cache_before = view_cache(stack)
    played = play_row(stack, players, tables, seconds)
    cache_after = view_cache(stack)
    kept_views = cache_after["hits"] - cache_before["hits"]
    rendered_views = cache_after["rendered"] - cache_before["rendered"]
    tally, tables, elapsed, cpu = played.tally, played.tables, played.elapsed, played.cpu
    top_rate = tally.commands / elapsed if elapsed else 0.0
    figure = (
        f"{top_rate:,.0f} commands/s p50 {millis(percentile(tally.command_latency, 0.5))} "
        f"p99 {millis(percentile(tally.command_latency, 0.99))}; {cpu_split(cpu, tally.commands)}"
    )
    notes = [
        f"{options.clients} client processes, {options.tables} Skull King tables; {tally.views} views "
        f"({tally.stale_views} older than the table's last accepted command), {tally.rejected} rejected, "
        f"{tally.setup_requests} setup requests, {tally.finished_games} games finished",
        f"{rendered_views} of the {tally.views} views rendered by the API from the events (the projection "
        "was behind the seat's last command); the others read from Redis or kept in memory",
        f"worker: {micros(cpu.seconds['worker'] / max(1, tally.commands))} CPU and "
        f"{played.jobs / max(1, tally.commands):.2f} RQ jobs per accepted command ({played.jobs} jobs)",
    ]
    if append is not None and view is not None and read_view is not None and tally.commands:
        kept = min(kept_views, tally.views)
        views_cpu = kept * view.per_request + (tally.views - kept) * read_view.per_request
        net = (cpu.total - views_cpu) / tally.commands
        ratio = net / append.per_request
        notes.append(
            f"net of views ({kept} kept at the view row's CPU, {tally.views - kept} read from Redis at "
            f"the view-cache-off row's): {micros(net)} per command vs {micros(append.per_request)} per "
            "bare append"
        )
        add(
            Row(
                "full command vs bare one-Lua-append",
                figure,
                append.figure(),
                ratio,
                "<= 3x CPU/req, projection included",
                ratio <= 3.0,
                notes,
            )
        )
    else:
        add(Row("full command (no wrk baseline)", figure, notes=notes))
    add(
        signing_row(
            measure(2_000 if options.smoke else 20_000),
            cpu.total / tally.commands if tally.commands else None,
        )
    )
    # The same full command against the anchor driven by the same clients at the same rate.
    for clients in same_load.CLIENT_COUNTS:
        add(same_load.same_load_row(stack, 1 if options.smoke else clients, seconds, emit))
        if options.smoke:
            break
    if options.core:
        return

    # Projection lag at half and a tenth of the highest sustained rate.
    projected = Projected(stack.redis.url)
    try:
        for fraction, limit in ((0.5, 0.050), (0.1, 0.020)):
            rate = max(1.0, top_rate * fraction)
            paced = play_row(stack, players, tables, seconds, rate=rate)
            tally, tables, elapsed = paced.tally, paced.tables, paced.elapsed
            lags = projected.lags(tally.accepted)
            p50, p99 = percentile(lags, 0.5), percentile(lags, 0.99)
            add(
                Row(
                    f"projection lag at {fraction:g} x top rate",
                    f"p50 {millis(p50)} p99 {millis(p99)} over {len(lags)} commands "
                    f"(asked {rate:,.0f}/s, got {tally.commands / elapsed if elapsed else 0:,.0f}/s)",
                    target=f"p99 < {limit * 1000:.0f} ms",
                    met=p99 < limit,
                    notes=[f"{tally.stale_views} of {tally.views} view reads older than the last command"],
                )
            )
    finally:
        projected.close()

    # Capacity: finished games, then replay of them, then many live tables.
    before, aof_before = used_memory(stack.redis.url), aof_size(stack.redis.url)
    finished, _ = players.create(options.finished_games)
    tally, finished, _ = players.play(finished, finish=True)
    drain(stack, finished)
    game_ids = [t.game_id for share in finished for t in share]
    grown = used_memory(stack.redis.url) - before
    events = stream_events(stack.redis.url, game_ids)
    aof_grown, stored = aof_size(stack.redis.url) - aof_before, stream_bytes(stack.redis.url, game_ids)
    amplification = aof_grown / max(1, stored)
    add(
        Row(
            "AOF bytes written per event vs the event's own stored bytes",
            f"{aof_grown / max(1, events):,.0f} B per event vs {stored / max(1, events):,.0f} B stored "
            f"({len(game_ids)} Skull King games created, joined and played to the end, {events} events)",
            ratio=amplification,
            target="<= 3x",
            met=amplification <= 3.0,
            notes=["INFO persistence aof_current_size before/after; stored: each entry's fields and values"],
        )
    )
    add(
        Row(
            "Redis memory per finished game",
            f"{kib(grown / max(1, len(game_ids)))} per game, {grown / max(1, events):,.0f} B per event "
            f"({len(game_ids)} Skull King games, {events} events)",
            notes=["INFO used_memory before/after; includes views, dedup records, lobby and RQ job keys"],
        )
    )
    if options.quick:
        return
    add(replay_row(stack.redis.url, game_ids))
    add(_capacity(stack, players, options, emit))
    for row in _peer_rows(stack, options, game_ids, events):
        add(row)


def view_cache(stack: Stack, games: int | None = None) -> dict[str, int]:
    """The API process's view cache counts (``services.bench.server``); ``games``: resize it first."""
    if games is None:
        reply = httpx.get(f"{stack.base}/bench/view-cache", timeout=10.0)
    else:
        reply = httpx.post(f"{stack.base}/bench/view-cache", params={"games": games}, timeout=10.0)
    reply.raise_for_status()
    counts: dict[str, int] = reply.json()
    return counts


CAPACITY_TARGET = 100_000  # tables alive at once (issue 28): `tablestream bench --capacity-tables 100000`


CAPACITY_STEPS = 10  # the capacity row creates its tables in this many steps, sampling after each


def _capacity(stack: Stack, players: Players, options: Options, emit: Callable[[str], object]) -> Row:
    """Tables created, seated and given one move each, in ``CAPACITY_STEPS`` steps; after each step
    (its projections drained) Redis's memory and every process's RSS, so the row shows how they grow
    with the tables alive, and where the API's bounded caches level off."""
    servers = stack.servers()
    count = options.capacity_tables
    before_memory, before_cpu = used_memory(stack.redis.url), servers.cpu()
    started = time.monotonic()
    alive = requests = commands = views = 0
    steps: list[str] = []
    while alive < count:
        size = min(count - alive, max(1, -(-count // CAPACITY_STEPS)))
        tables, made = players.create(size)
        tally, tables, _ = players.play(tables, moves=1)
        drain(stack, tables)
        alive, requests = alive + size, requests + made
        commands, views = commands + tally.commands, views + tally.views
        rss = servers.rss()
        grown = used_memory(stack.redis.url) - before_memory
        step = (
            f"{alive:,} tables at {time.monotonic() - started:,.0f} s: Redis {kib(grown / alive)} per table; "
            f"RSS api {mib(rss['api'])}, worker {mib(rss['worker'])}, redis {mib(rss['redis'])}"
        )
        steps.append(step)
        emit(f"   capacity: {step}")
    elapsed = time.monotonic() - started
    grown = used_memory(stack.redis.url) - before_memory
    rss = servers.rss()
    cpu = servers.cpu() - before_cpu
    return Row(
        f"{count:,} tables alive: created, seated, one move each",
        f"{(requests + views + commands) / elapsed:,.0f} req/s over {elapsed:,.1f} s; "
        f"Redis {kib(grown / count)} per table; RSS api {mib(rss['api'])}, worker {mib(rss['worker'])}, "
        f"redis {mib(rss['redis'])}",
        target=f"{CAPACITY_TARGET:,} tables on one Redis, one API process and one worker",
        met=commands >= count if count >= CAPACITY_TARGET else None,  # a smaller run says nothing
        notes=[
            f"{requests} setup requests, {commands} moves, {views} views; "
            f"{cpu_split(cpu, requests + commands + views)}",
            *steps,
        ],
    )


def _peer_rows(stack: Stack, options: Options, game_ids: list[str], events: int) -> list[Row]:
    """The peer rows: per-command runs of both caller patterns, ours and the peer's in turns (so a
    noisy neighbour weighs on both alike), ``PEER_ROUNDS`` rounds, each figure the median with its
    spread; then the rebuilds, ours (of the finished games) in turns with the peer's."""
    seconds = options.seconds
    rounds = 1 if options.smoke else PEER_ROUNDS
    assert stack.redis.pid is not None
    turns: dict[tuple[str, str], list[peer.Turn]] = {}
    for _ in range(rounds):
        for pattern in peer.PATTERNS:
            ours = asyncio.run(peer.ours_turn(stack.redis.url, stack.redis.pid, seconds, pattern))
            turns.setdefault(("ours", pattern), []).append(ours)
            for label in ("sqlite", "popo"):
                turns.setdefault((label, pattern), []).append(peer.peer_turn(label, seconds, pattern))
    with tempfile.TemporaryDirectory(prefix="tablestream-peer-") as tmp:
        synchronous = peer.sqlite_synchronous(Path(tmp) / "probe.db")
    durable = "SQLite WAL, synchronous=FULL" if synchronous == 2 else f"SQLite WAL, synchronous={synchronous}"
    rows = []
    for pattern in peer.PATTERNS:
        ours, sqlite, popo = (turns[(side, pattern)] for side in ("ours", "sqlite", "popo"))
        caller = "each caller keeps its aggregate" if pattern == "kept" else "a load before every command"
        rows.append(
            Row(
                f"commands/s, {pattern}, 64 callers vs eventsourcing sqlite",
                f"{_spread(ours, lambda t: t.per_second, '{:,.0f}')} commands/s (Redis AOF always)",
                f"{_spread(sqlite, lambda t: t.per_second, '{:,.0f}')} saves/s ({durable})",
                _median(ours, lambda t: t.per_second) / _median(sqlite, lambda t: t.per_second),
                ">= 2x",
                _median(ours, lambda t: t.per_second) >= 2 * _median(sqlite, lambda t: t.per_second),
                notes=[f"{caller}; {len(ours)} rounds in turns, median [min - max]"],
            )
        )
        cpu_ratio = _median(sqlite, _cpu) / _median(ours, _cpu)
        rows.append(
            Row(
                f"CPU per command, {pattern}, vs eventsourcing sqlite",
                f"{_spread(ours, _cpu_us, '{:,.0f}')} us (this process + the Redis server)",
                f"{_spread(sqlite, _cpu_us, '{:,.0f}')} us (the peer's process, SQLite in it)",
                cpu_ratio,
                ">= 2x",
                cpu_ratio >= 2.0,
            )
        )
        rows.append(
            Row(
                f"commands/s, {pattern}, vs eventsourcing popo (informational)",
                f"{_spread(ours, lambda t: t.per_second, '{:,.0f}')} commands/s (durable)",
                f"{_spread(popo, lambda t: t.per_second, '{:,.0f}')} saves/s (a dict in memory)",
                _median(ours, lambda t: t.per_second) / _median(popo, lambda t: t.per_second),
            )
        )
    store = SyncEventStore(redis.Redis.from_url(stack.redis.url))
    for label in ("sqlite", "popo"):
        figures = peer.peer_rebuild(label, functools.partial(rebuild_pass, store, game_ids, events))
        ours_rebuild = figures.ours_rebuild_events_per_second
        ratio = ours_rebuild / figures.rebuild_events_per_second
        rows.append(
            Row(
                f"rebuild vs {figures.label}",
                f"{ours_rebuild:,.0f} events/s (read + decode + fold)",
                f"{figures.rebuild_events_per_second:,.0f} events/s (repository.get)",
                ratio,
                ">= 8x",
                ratio >= 8.0,
            )
        )
    store.redis.close()
    return rows


PEER_ROUNDS = 3


def _median(turns: list[peer.Turn], figure: Callable[[peer.Turn], float]) -> float:
    return statistics.median(figure(turn) for turn in turns)


def _cpu(turn: peer.Turn) -> float:
    return turn.cpu_per_command


def _cpu_us(turn: peer.Turn) -> float:
    return turn.cpu_per_command * 1e6


def _spread(turns: list[peer.Turn], figure: Callable[[peer.Turn], float], form: str) -> str:
    """The median of the rounds, with the lowest and highest: ``1,234 [1,100 - 1,300]``."""
    values = sorted(figure(turn) for turn in turns)
    median = statistics.median(values)
    if len(values) == 1:
        return form.format(median)
    return f"{form.format(median)} [{form.format(values[0])} - {form.format(values[-1])}]"
