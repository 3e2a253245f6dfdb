"""The multi-process Python client: whole games of Skull King through views and commands.

Each client process owns some tables and plays every seat of them with one keep-alive HTTP
connection: read the acting seat's view, send one of its legal commands (no expected version, as a
casual client does). A view older than the table's last accepted command is counted as stale and
skipped (the client comes back to that table later). Only ``200`` answers to ``POST .../commands``
count as commands. Times are ``time.monotonic()``, comparable across the processes of this machine.
"""

from __future__ import annotations

import http.client
import multiprocessing
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

GAME = "skull-king"
PLAYERS = 4
STALE_BACKOFF = 0.005  # a client that read a stale view reads that table again after this


@dataclass
class Table:
    game_id: str
    tokens: list[str]
    last_written: int = 0
    next_seat: int = 0
    finished: bool = False
    not_before: float = 0.0  # after a stale view: when to read this table again


@dataclass
class Tally:
    """What one client process saw."""

    commands: int = 0
    rejected: int = 0
    views: int = 0
    stale_views: int = 0
    setup_requests: int = 0
    finished_games: int = 0
    command_latency: list[float] = field(default_factory=list)
    view_latency: list[float] = field(default_factory=list)
    accepted: list[tuple[str, int, float]] = field(default_factory=list)  # game, version, time of the 200

    def add(self, other: Tally) -> None:
        for name in ("commands", "rejected", "views", "stale_views", "setup_requests", "finished_games"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.command_latency += other.command_latency
        self.view_latency += other.view_latency
        self.accepted += other.accepted


class Client:
    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        payload = msgspec.json.encode(body) if body is not None else None
        self.conn.request(method, path, body=payload, headers=headers)
        response = self.conn.getresponse()
        return response.status, msgspec.json.decode(response.read())

    def raw(self, method: str, path: str, token: str | None = None) -> tuple[int, bytes]:
        """One bodiless request; the status and the answer's bytes, undecoded."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.conn.request(method, path, headers=headers)
        response = self.conn.getresponse()
        return response.status, response.read()

    def new_table(self, tally: Tally) -> Table:
        status, created = self.call("POST", "/games", {"game": GAME, "players": PLAYERS})
        assert status == 201, created
        game_id = created["game_id"]
        tokens = []
        for seat in range(PLAYERS):
            status, joined = self.call("POST", f"/games/{game_id}/players", {"name": f"P{seat}"})
            assert status == 201, joined
            tokens.append(joined["token"])
        tally.setup_requests += 1 + PLAYERS
        return Table(game_id, tokens, last_written=PLAYERS + 1)

    def step(self, table: Table, rng: random.Random, tally: Tally) -> bool:
        """One view read and, if the seat may act on a fresh view, one command; ``True`` if sent."""
        seat = table.next_seat
        started = time.monotonic()
        status, view = self.call("GET", f"/games/{table.game_id}/view", token=table.tokens[seat])
        tally.view_latency.append(time.monotonic() - started)
        tally.views += 1
        assert status == 200, view
        if view["version"] < table.last_written:
            tally.stale_views += 1
            table.not_before = time.monotonic() + STALE_BACKOFF
            return False
        if view["status"] == "finished":
            table.finished = True
            tally.finished_games += 1
            return False
        if not view["legal"]:
            table.next_seat = view["to_act"][0] if view["to_act"] else (seat + 1) % PLAYERS
            return False
        body = {
            "command_id": f"{table.game_id}-{view['version']}-{seat}",
            "command": rng.choice(view["legal"]),
        }
        started = time.monotonic()
        status, answer = self.call("POST", f"/games/{table.game_id}/commands", body, token=table.tokens[seat])
        done = time.monotonic()
        if status != 200:
            tally.rejected += 1
            return False
        tally.commands += 1
        tally.command_latency.append(done - started)
        tally.accepted.append((table.game_id, answer["version"], done))
        table.last_written = answer["version"]
        table.next_seat = (seat + 1) % PLAYERS
        return True


@dataclass(frozen=True)
class Job:
    """The work of one client process."""

    port: int
    seed: int
    tables: list[Table]
    until: float = 0.0  # monotonic deadline of a timed run
    start: float = 0.0  # monotonic start (all processes begin together)
    rate: float | None = None  # this process's commands per second (None: as fast as it can)
    phase: float = 0.0  # seconds after ``start`` of this process's first paced command
    finish: bool = False  # play until every table is over (no replacements)
    moves: int = 0  # exactly this many commands per table, then stop


@dataclass(frozen=True)
class Drive:
    """One client process sending the same requests over and over (a baseline at the load of a play
    row): ``requests`` rotated, each ``(method, path, token)``; from ``start`` until ``until``, at
    ``rate`` requests a second (``None``: as fast as it can), the first ``phase`` seconds after
    ``start``."""

    port: int
    requests: list[tuple[str, str, str | None]]
    start: float
    until: float
    rate: float | None = None
    phase: float = 0.0


def _drive(job: Drive) -> tuple[int, list[float]]:
    """The requests sent (every answer must be a 200) and their latencies."""
    client = Client(job.port)
    latencies: list[float] = []
    while time.monotonic() < job.start:
        time.sleep(min(0.01, max(0.0, job.start - time.monotonic())))  # waiting for the shared start
    due = job.start + job.phase
    index = 0
    while True:
        if job.rate is not None:
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)  # pacing to the asked rate, not synchronisation
            due += 1.0 / job.rate
        started = time.monotonic()
        if started >= job.until:
            break
        method, path, token = job.requests[index % len(job.requests)]
        index += 1
        status, answer = client.raw(method, path, token)
        latencies.append(time.monotonic() - started)
        assert status == 200, (path, status, answer)
    return len(latencies), latencies


def _create(port_and_count: tuple[int, int]) -> tuple[list[Table], int]:
    port, count = port_and_count
    client, tally = Client(port), Tally()
    return [client.new_table(tally) for _ in range(count)], tally.setup_requests


def _play(job: Job) -> tuple[Tally, list[Table]]:
    rng = random.Random(job.seed)
    client = Client(job.port)
    tally = Tally()
    tables = list(job.tables)
    if job.moves:
        for table in tables:
            sent = 0
            while sent < job.moves and not table.finished:
                sent += client.step(table, rng, tally)
                if not sent:
                    time.sleep(max(0.0, table.not_before - time.monotonic()))  # back off a stale view
        return tally, tables
    while time.monotonic() < job.start:
        time.sleep(min(0.01, max(0.0, job.start - time.monotonic())))  # waiting for the shared start
    due = time.monotonic() + job.phase
    index = 0
    playing = list(tables)
    while playing:
        if not job.finish and time.monotonic() >= job.until:
            break
        table = playing[index % len(playing)]
        index += 1
        wait = table.not_before - time.monotonic()
        if wait > 0:
            if all(t.not_before > time.monotonic() for t in playing):
                time.sleep(min(wait, STALE_BACKOFF))  # every table waits on its projection: back off
            continue
        if job.rate is not None:
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)  # pacing to the asked rate, not synchronisation
        if client.step(table, rng, tally) and job.rate is not None:
            due += 1.0 / job.rate
        if table.finished:
            playing.remove(table)
            if not job.finish:
                fresh = client.new_table(tally)
                playing.append(fresh)
                tables.append(fresh)
    return tally, tables


class Players:
    """A pool of client processes (spawned: the bench holds threads), reused across rows."""

    def __init__(self, port: int, processes: int, seed: int = 1) -> None:
        self.port = port
        self.processes = processes
        self.seed = seed
        self._pool = multiprocessing.get_context("spawn").Pool(processes)

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()

    def create(self, tables: int) -> tuple[list[list[Table]], int]:
        """``tables`` new tables, split over the processes; and the requests it took."""
        shares = [tables // self.processes + (i < tables % self.processes) for i in range(self.processes)]
        made = self._pool.map(_create, [(self.port, n) for n in shares])
        return [tables for tables, _ in made], sum(requests for _, requests in made)

    def drive(
        self,
        requests: list[list[tuple[str, str, str | None]]],
        seconds: float,
        rate: float | None = None,
    ) -> tuple[int, list[float], float]:
        """Each process sends its share of ``requests`` over and over for ``seconds``, all of them
        ``rate`` requests a second in all (``None``: as fast as they can); the requests answered,
        their latencies and the seconds it took."""
        start = time.monotonic() + 0.2
        jobs = [
            Drive(
                self.port,
                share,
                start,
                start + seconds,
                rate=None if rate is None else rate / self.processes,
                phase=0.0 if rate is None else n / rate,  # in turns, as the paced play rows
            )
            for n, share in enumerate(requests)
        ]
        results = self._pool.map(_drive, jobs)
        elapsed = time.monotonic() - start
        return sum(n for n, _ in results), [t for _, times in results for t in times], elapsed

    def play(
        self,
        tables: list[list[Table]],
        seconds: float = 0.0,
        rate: float | None = None,
        finish: bool = False,
        moves: int = 0,
    ) -> tuple[Tally, list[list[Table]], float]:
        """Play the tables; returns the merged tally, the tables now held, and the seconds played."""
        start = time.monotonic() + 0.2
        jobs = [
            Job(
                self.port,
                self.seed * 1000 + n,
                share,
                until=start + seconds,
                start=start,
                # paced processes take turns, evenly spread: in phase they would send in bursts
                phase=0.0 if rate is None else n / rate,
                rate=None if rate is None else rate / self.processes,
                finish=finish,
                moves=moves,
            )
            for n, share in enumerate(tables)
        ]
        self.seed += 1
        results = self._pool.map(_play, jobs)
        elapsed = time.monotonic() - start
        total = Tally()
        for tally, _ in results:
            total.add(tally)
        return total, [held for _, held in results], elapsed


def percentile(values: Sequence[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]
