"""The rows of ``tablestream bench`` (see README's "Benchmarks" and docs/benchmarks.md)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from services.bench import wrk
from services.bench.players import Players, Table, Tally
from services.bench.procs import CpuSample
from services.bench.report import Row, cpu_split, millis
from services.bench.stack import Stack
from services.history.folding import advance, decode_event, table_of
from services.history.records import decode_stored
from services.store import rq_workers
from services.store.event_store import SyncEventStore
from services.store.keys import LOBBY_ORDER, game_keys


@dataclass(frozen=True)
class Options:
    core: bool = False  # only the anchors, the views and the full command (``--core``)
    seconds: float = 10.0
    clients: int = 8
    tables: int = 64
    finished_games: int = 16
    capacity_tables: int = 10_000
    profile_dir: Path | None = None
    smoke: bool = False
    quick: bool = False  # only the rows of the command path: no replay, capacity or peer rows
    capacity_only: bool = False  # only the capacity row (``--capacity``)
    peer: str = ""  # "bgio": only the boardgame.io peer rows (``--peer bgio``, services/bench/bgio_peer.py)

    @classmethod
    def smoke_run(cls) -> Options:
        return cls(seconds=1.0, clients=2, tables=4, finished_games=2, capacity_tables=20, smoke=True)


@dataclass
class Measured:
    """A wrk run with the server CPU it cost."""

    result: wrk.WrkResult
    cpu: CpuSample

    def figure(self) -> str:
        r = self.result
        errors = f", {r.errors} errors" if r.errors else ""
        return (
            f"{r.rate:,.0f} req/s p50 {millis(r.p50)} p99 {millis(r.p99)}{errors}; "
            f"{cpu_split(self.cpu, r.requests)}"
        )

    @property
    def per_request(self) -> float:
        return self.cpu.total / self.result.requests if self.result.requests else math.nan


def measure_wrk(
    stack: Stack, path: str, seconds: float, rotation: Sequence[tuple[str, str | None]] | None = None
) -> Measured:
    servers = stack.servers()
    before = servers.cpu()
    result = wrk.run(stack.base, path, seconds, rotation=rotation)
    return Measured(result, servers.cpu() - before)


class Projected:
    """Listens to the games' live channels and notes when each projected version was published.

    Live channels are shard channels (``SSUBSCRIBE`` per game, no patterns): the listener subscribes
    to the newest games of the lobby order every tenth of a second, so that tables the clients
    create during a row are heard from their first commands on."""

    NEWEST = 500

    def __init__(self, url: str) -> None:
        self._client = redis.Redis.from_url(url)
        pubsub: Any = self._client.pubsub  # redis-py leaves pubsub unannotated
        self._pubsub = pubsub(ignore_subscribe_messages=True)
        self._games: set[str] = set()
        self.seen: dict[str, list[tuple[int, float]]] = {}
        self._stop = threading.Event()
        self._follow()
        self._thread = threading.Thread(target=self._listen, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        ids: list[bytes] = self._client.execute_command(  # type: ignore[no-untyped-call]
            "ZREVRANGE", LOBBY_ORDER, 0, self.NEWEST - 1
        )
        newest = {g.decode() for g in ids}
        fresh = newest - self._games
        if fresh:
            self._pubsub.ssubscribe(*(game_keys(g).live for g in fresh))
            self._games |= fresh

    def _listen(self) -> None:
        followed = time.monotonic()
        while not self._stop.is_set():
            if time.monotonic() - followed >= 0.1:
                self._follow()
                followed = time.monotonic()
            message = self._pubsub.get_sharded_message(timeout=0.05)
            if message is None or not message["data"].isdigit():
                continue  # b"appended" wake-ups come from appends, not from projections
            channel = message["channel"].decode()
            game_id = channel[channel.index("{") + 1 : channel.index("}")]
            self.seen.setdefault(game_id, []).append((int(message["data"]), time.monotonic()))

    def lags(self, accepted: list[tuple[str, int, float]]) -> list[float]:
        """For each accepted command: from its 200 to the first projection at or past its version
        (never negative: a projection published before the client read the answer counts as 0)."""
        out = []
        for game_id, version, answered in accepted:
            times = [t for v, t in self.seen.get(game_id, []) if v >= version]
            out.append(max(0.0, min(times) - answered) if times else math.inf)
        return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._pubsub.close()
        self._client.close()


def drain(stack: Stack, tables: list[list[Table]], timeout: float = 120.0) -> None:
    """Until every played table's views are projected at least up to its last accepted command."""
    client = redis.Redis.from_url(stack.redis.url)
    deadline = time.monotonic() + timeout
    pending = [t for share in tables for t in share]
    while pending and time.monotonic() < deadline:
        pipe = client.pipeline(transaction=False)
        for table in pending:
            pipe.hget(game_keys(table.game_id).views, "checkpoint")
        done = pipe.execute()
        pending = [t for t, cp in zip(pending, done, strict=True) if int(cp or 0) < t.last_written]
        if pending:
            time.sleep(0.05)  # polling the checkpoints, not synchronisation of our own threads
    client.close()


def jobs_done(url: str) -> int:
    """RQ jobs the stack's workers have finished so far (``services.store.rq_workers.jobs_done``)."""
    client = redis.Redis.from_url(url)
    try:
        return rq_workers.jobs_done(client)
    finally:
        client.close()


@dataclass(frozen=True)
class Played:
    """A timed play row: the tally, the tables now held, the seconds played, the server CPU it cost
    (the worker drained) and the RQ jobs the worker ran for it."""

    tally: Tally
    tables: list[list[Table]]
    elapsed: float
    cpu: CpuSample
    jobs: int


def play_row(
    stack: Stack, players: Players, tables: list[list[Table]], seconds: float, rate: float | None = None
) -> Played:
    servers = stack.servers()
    before, jobs = servers.cpu(), jobs_done(stack.redis.url)
    tally, tables, elapsed = players.play(tables, seconds=seconds, rate=rate)
    drain(stack, tables)
    return Played(tally, tables, elapsed, servers.cpu() - before, jobs_done(stack.redis.url) - jobs)


def rebuild_pass(store: SyncEventStore, game_ids: list[str], events: int) -> float:
    """One pass of our rebuild: read + decode + fold of every game, in events per second."""
    started = time.perf_counter()
    for game_id in game_ids:
        advance(game_id, None, store.read(game_id))
    return events / (time.perf_counter() - started)


def replay_row(url: str, game_ids: list[str]) -> Row:
    store = SyncEventStore(redis.Redis.from_url(url))
    client = redis.Redis.from_url(url)
    streams = {g: store.read(g) for g in game_ids}
    events = sum(len(e) for e in streams.values())
    passes = max(5, 100_000 // max(1, events))

    def timed(step: Callable[[str], object]) -> float:
        started = time.perf_counter()
        for game_id in game_ids:
            step(game_id)
        return events / (time.perf_counter() - started)

    def bare(game_id: str) -> object:
        entries: Any = client.xrange(game_keys(game_id).events, "-", "+")
        table = table_of(streams[game_id])
        return [decode_event(table, decode_stored(fields[b"d"])) for _, fields in entries]

    # alternating passes, the best of each: a noisy neighbour slows a pass, never speeds one up
    base = full = 0.0
    for _ in range(passes):
        base, full = max(base, timed(bare)), max(full, rebuild_pass(store, game_ids, events))
    client.close()
    store.redis.close()
    row = Row(
        "replay: read + decode + fold",
        f"{full:,.0f} events/s ({events} events in {len(game_ids)} games)",
        f"XRANGE + decode of the same entries {base:,.0f} events/s",
        full / base,
        ">= 0.5x",
        full / base >= 0.5,
    )
    return row


def used_memory(url: str) -> int:
    client = redis.Redis.from_url(url)
    try:
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


def aof_size(url: str) -> int:
    """The append-only file's size in bytes (INFO persistence ``aof_current_size``)."""
    client = redis.Redis.from_url(url)
    try:
        return int(client.info("persistence")["aof_current_size"])
    finally:
        client.close()


def stream_bytes(url: str, game_ids: list[str]) -> int:
    """The stored events' own bytes: each stream entry's field names and values (``d``, ``h``)."""
    client = redis.Redis.from_url(url)
    try:
        total = 0
        for game_id in game_ids:
            for _, fields in client.xrange(game_keys(game_id).events):
                total += sum(len(name) + len(value) for name, value in fields.items())
        return total
    finally:
        client.close()


def stream_events(url: str, game_ids: list[str]) -> int:
    client = redis.Redis.from_url(url)
    try:
        return sum(int(client.xlen(game_keys(g).events)) for g in game_ids)
    finally:
        client.close()
