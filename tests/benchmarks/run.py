"""Benchmarks that print figures, each next to a baseline measured in the same run on the same server.

    .venv/bin/python -m tests.benchmarks.run [--seconds 2]

Nothing here asserts a wall-clock limit (the machines are shared and noisy): read the ratios.
Rows:
- append: raw XADD of the same bytes (baseline) vs the Lua append with dedup, exact version check
  and hash-chained entries, one caller and 64 concurrent callers, on a server without persistence
  and on one with AOF ``appendfsync always``;
- command: the whole command path in process (read tail, fold, decide, encode, append) vs the bare
  Lua append, for Skull placements on many tables;
- fold: events folded per second by the Skull Decider vs decoding the same stored entries only;
- http: accepted commands per second through uvicorn vs ``GET /healthz`` on the same server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis

from services.cli.processes import stop_process, wait_ready
from services.commands import GameCommands, fresh_salts
from services.errors import AppError
from services.history.folding import advance, decode_events, table_of
from services.history.records import GENESIS_HASH, CommandRecord, encode_batch
from services.store.embedded import EmbeddedRedis, free_port
from services.store.event_store import EventStore
from services.store.tokens import TokenStore
from tests.conftest import Noted


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>10,.0f}/s"


async def timed(
    seconds: float, step: Callable[[int], Awaitable[None]], callers: int = 1
) -> tuple[int, float]:
    """Run ``step`` from ``callers`` concurrent loops for about ``seconds``; count the steps."""
    done = 0
    end = time.perf_counter() + seconds

    async def loop(caller: int) -> None:
        nonlocal done
        i = 0
        while time.perf_counter() < end:
            await step(caller * 1_000_000 + i)
            i += 1
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(loop(c) for c in range(callers)))
    return done, time.perf_counter() - start


async def bench_append(url: str, label: str, seconds: float) -> None:
    client = aioredis.Redis.from_url(url)
    store = EventStore(client)
    payload = encode_batch(
        1, GENESIS_HASH, CommandRecord(id="x", kind="command", seat=0, body={}), [Noted(n=1)], fresh_salts(1)
    )
    heads: dict[str, int] = {}
    hashes: dict[str, str] = {}

    async def raw(i: int) -> None:
        await client.xadd(f"bench:{{raw{i % 1000}}}", {"d": payload[0].data, "h": payload[0].hash})

    async def lua(i: int) -> None:
        game = f"g{i // 1_000_000}-{i % 1000}"  # each caller appends to its own 1,000 games
        version = heads.get(game, 0)
        record = CommandRecord(id=f"c{i}", kind="command", seat=0, body={})
        entries = encode_batch(
            version + 1, hashes.get(game, GENESIS_HASH), record, [Noted(n=i)], fresh_salts(1)
        )
        if version == 0:  # a stream begins with create(); counted like an append
            assert await store.create(game, {"root": "00", "master": "00"}, entries[0])
            heads[game], hashes[game] = 1, entries[0].hash
            return
        result = await store.append(game, version, record.id, record.id, 0, entries)
        assert result.status == "ok", result
        heads[game], hashes[game] = result.last, entries[-1].hash

    for callers in (1, 64):
        await client.flushall()
        heads.clear(), hashes.clear()
        base = await timed(seconds, raw, callers)
        ours = await timed(seconds, lua, callers)
        print(
            f"append  {label:<14} {callers:>2} caller(s): raw XADD {rate(*base)}  Lua append {rate(*ours)}"
            f"  ratio {ours[0] / ours[1] / (base[0] / base[1]):.2f}"
        )
    await client.aclose()


async def bench_command(url: str, seconds: float) -> None:
    client = aioredis.Redis.from_url(url)
    await client.flushall()

    async def no_poke(game_id: str) -> None:
        return None

    handler = GameCommands(EventStore(client), TokenStore(client), no_poke)
    games: list[str] = []
    for _ in range(200):
        game_id, _ = await handler.create("skull", 6, {})
        for seat in range(6):
            await handler.join(game_id, f"P{seat}", "")
        games.append(game_id)
    rng = random.Random(1)

    async def command(i: int) -> None:
        game_id = games[i % len(games)]
        folded = await handler.load(game_id)
        if folded.state.status != "playing":
            return
        seat = rng.choice(folded.table.to_act(folded.state))
        choice = msgspec.to_builtins(rng.choice(folded.table.legal_commands(folded.state, seat)))
        with contextlib.suppress(AppError):  # another caller moved this game on first: as for players
            await handler.command(game_id, seat, f"c{i}", choice, None)

    done, spent = await timed(seconds, command, callers=16)
    entries = await EventStore(client).read(games[0])
    print(
        f"command in process, 16 callers, 200 Skull tables: {rate(done, spent)}"
        f"  ({len(entries)} events in the first table)"
    )
    await client.aclose()


async def bench_fold(url: str) -> None:
    client = aioredis.Redis.from_url(url)
    store = EventStore(client)
    keys = [k async for k in client.scan_iter(match="ts:{*}:events", count=1000)]
    entries_by_game = [await store.read(k.decode().split("{")[1].split("}")[0]) for k in keys[:100]]
    total = sum(len(e) for e in entries_by_game)
    start = time.perf_counter()
    for entries in entries_by_game:
        decode_events(table_of(entries), entries)
    decode_only = time.perf_counter() - start
    start = time.perf_counter()
    for entries in entries_by_game:
        advance("bench", None, entries)
    fold = time.perf_counter() - start
    print(
        f"fold    {total} stored events: decode only {rate(total, decode_only)}"
        f"  decode+fold {rate(total, fold)}"
        f"  ratio {decode_only / fold:.2f}"
    )
    await client.aclose()


def bench_http(seconds: float, clients: int = 8) -> None:
    """``tablestream serve`` in its own process (embedded Redis, AOF always, a worker); ``clients``
    threads with keep-alive connections, each on its own 6 nimmt! table for 10."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "serve", "--port", str(port), "--data-dir", tmp],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TABLESTREAM_LOG_LEVEL": "warning"},
        )
        try:
            wait_ready(f"http://127.0.0.1:{port}")
            tables = [_table(port) for _ in range(clients)]
            health = _threads(clients, seconds, lambda conn, i: _call(conn, "GET", "/healthz"), port)
            play = _threads(clients, seconds, lambda conn, i: _select(conn, tables[i % clients], i), port)
            print(
                f"http    {clients} clients, serve with AOF always: GET /healthz {rate(*health)}"
                f"  GET view + POST command {rate(*play)}"
                f"  ratio {play[0] / play[1] / (health[0] / health[1]):.2f}"
            )
        finally:
            stop_process(server)


def _call(
    conn: http.client.HTTPConnection, method: str, path: str, body: Any = None, token: str | None = None
) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=msgspec.json.encode(body) if body is not None else None, headers=headers)
    return msgspec.json.decode(conn.getresponse().read())


def _table(port: int) -> tuple[str, list[str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    game_id = _call(conn, "POST", "/games", {"game": "six-nimmt", "players": 10})["game_id"]
    tokens = [_call(conn, "POST", f"/games/{game_id}/players", {"name": f"P{s}"})["token"] for s in range(10)]
    return game_id, tokens


def _select(conn: http.client.HTTPConnection, table: tuple[str, list[str]], i: int) -> None:
    game_id, tokens = table
    token = tokens[i % 10]
    view = _call(conn, "GET", f"/games/{game_id}/view", token=token)
    if view["legal"]:
        body = {"command_id": f"c{i}", "command": view["legal"][0]}
        _call(conn, "POST", f"/games/{game_id}/commands", body, token=token)


def _threads(
    count: int, seconds: float, step: Callable[[http.client.HTTPConnection, int], None], port: int
) -> tuple[int, float]:
    done = [0] * count
    end = time.perf_counter() + seconds

    def run(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        i = 0
        while time.perf_counter() < end:
            step(conn, n + count * i)
            i += 1
        done[n] = i

    start = time.perf_counter()
    workers = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(done), time.perf_counter() - start


async def main_async(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fast = EmbeddedRedis(Path(tmp) / "fast", durable=False)
        durable = EmbeddedRedis(Path(tmp) / "durable", durable=True)
        try:
            await bench_append(fast.url, "no persistence", seconds)
            await bench_append(durable.url, "AOF always", seconds)
            await bench_command(durable.url, seconds)
            await bench_fold(durable.url)
        finally:
            fast.stop()
            durable.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    asyncio.run(main_async(args.seconds))
    bench_http(args.seconds)


if __name__ == "__main__":
    main()
