"""The boardgame.io peer (issue 38): ``tablestream bench --peer bgio``.

boardgame.io 0.50 (npm) plays a game with Skull King's shape (``services/bench/bgio/game.js``: four
seats, ten rounds of hidden simultaneous bids and tricks with follow-suit, secret hands through
``playerView``) on its own ``Server``, in memory or with ``FlatFile`` storage; its clients are
boardgame.io ``Client``s on the ``SocketIO`` transport, one socket per seat, every seat playing a
random legal move as soon as its state says it may (``client.js``). Ours is the same load on our
stack: the same number of Skull King tables, played by our client processes (``Players``: the acting
seat's view, then a legal command), on Redis with AOF ``always`` and again on a Redis without
persistence.

What is counted: the server's CPU (utime + stime from ``/proc``) per move the server accepted. For
boardgame.io, the node server process, from the moment every seat is connected and synced until the
clients saw the last update (each match's own move counter, as its seats last saw it). For ours,
API + worker + Redis over ``play_row`` (the worker drained: the projection of every seat's view is
counted), per accepted command; the views our clients read are in it, as boardgame.io pushes every
seat its state on every move. Sides run in turns, ``ROUNDS`` rounds (ours AOF, boardgame.io
FlatFile, ours without persistence, boardgame.io in memory), each figure the median of the rounds
with the lowest and highest.

Node's dependencies are installed once per lock file (``services.bench.bgio_install``); without node
or npm, or when the install fails, the rows say why and are skipped.
"""

from __future__ import annotations

import contextlib
import json
import math
import queue
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx

from services.bench import wrk
from services.bench.bgio_install import (
    INSTALLED_MARK,
    LOCK_FILES,
    PROJECT,
    Node,
    cache_root,
    install,
    lock_key,
    missing_node,
)
from services.bench.players import GAME, PLAYERS, Players, Table
from services.bench.procs import CpuSample, cpu_seconds
from services.bench.report import Row, micros, skipped
from services.bench.run import Measured, Options, drain, measure_wrk, play_row
from services.bench.stack import Stack, running_stack
from services.store.embedded import die_with_parent, free_port

ROUNDS = 3
START_TIMEOUT = 60.0  # the node server's ready line
READY_TIMEOUT = 300.0  # the clients' ready line: every match created, joined, every seat synced
SETTLE_TIMEOUT = 120.0  # after the run's seconds: the clients' summary
SERVER_STARTS = 3  # a free port may be taken before node binds it: start again on another

__all__ = ["INSTALLED_MARK", "LOCK_FILES", "Node", "cache_root", "install", "lock_key", "missing_node"]
"""The installer's names (``services.bench.bgio_install``), kept here for the bench and its tests."""

DURABLE_ROW = "server CPU per move, Tablestream (AOF always) vs boardgame.io FlatFile"
MEMORY_ROW = "server CPU per move, Tablestream (no persistence) vs boardgame.io in memory"
TARGET = "< 1x"


# -- the node processes -------------------------------------------------------------------------------


class Lines:
    """A child's stdout read line by line on a thread, so the bench can wait for a line with a
    deadline (a hung child fails the wait instead of blocking it for ever)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        for raw in stream:
            self._queue.put(raw.decode(errors="replace").rstrip("\n"))
        self._queue.put(None)

    def expect(self, key: str, timeout: float, what: str) -> dict[str, Any]:
        """The next JSON line holding ``key`` (other lines are kept in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"{what}: no {key!r} line within {timeout:.0f} s") from None
            if line is None:
                raise RuntimeError(f"{what} ended without a {key!r} line; it printed: {self.seen[-5:]}")
            self.seen.append(line)
            found = _json_line(line)
            if found is not None and found.get(key):
                return found


def _json_line(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        found = json.loads(line)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True)
class Summary:
    """What ``client.js`` printed at the end of a run."""

    tables: int
    moves: int  # accepted by the server (each match's own counter)
    sent: int  # sent by the seats (more than ``moves``: the server refused some)
    updates: int  # the seats' clients' notifications (the states pushed, their own dispatches)
    finished_games: int
    setup_requests: int  # lobby requests for the matches that replaced finished ones
    elapsed: float


def parse_summary(text: str) -> Summary:
    """The last ``{"summary": true, ...}`` line of the client's output."""
    for line in reversed(text.splitlines()):
        found = _json_line(line.strip())
        if found is not None and found.get("summary"):
            return summary_of(found)
    raise ValueError(f"no summary line in the boardgame.io client's output: {text[-500:]!r}")


def summary_of(found: dict[str, Any]) -> Summary:
    return Summary(
        tables=int(found["tables"]),
        moves=int(found["moves"]),
        sent=int(found["sent"]),
        updates=int(found["updates"]),
        finished_games=int(found["finished_games"]),
        setup_requests=int(found["setup_requests"]),
        elapsed=float(found["elapsed"]),
    )


def per_move(cpu: float, moves: int) -> float:
    """Server CPU seconds per move (``nan`` with no moves)."""
    return cpu / moves if moves > 0 else math.nan


@dataclass(frozen=True)
class BgioServer:
    process: subprocess.Popen[bytes]
    port: int
    storage: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextlib.contextmanager
def bgio_server(node: Node, storage: str, work_dir: Path) -> Iterator[BgioServer]:
    """``server.js`` in memory (``storage="memory"``) or with FlatFile under ``work_dir``; its log
    (boardgame.io prints every refused move) in ``work_dir``."""
    work_dir.mkdir(parents=True, exist_ok=True)
    with (work_dir / f"bgio-{storage}.log").open("ab") as log:
        for attempt in range(SERVER_STARTS):
            port = free_port()
            args = [node.node, str(PROJECT / "server.js"), "--port", str(port), "--storage", storage]
            if storage == "flatfile":
                args += ["--dir", str(work_dir / "flatfile")]
            process = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=node.env(),
                preexec_fn=die_with_parent,
            )
            assert process.stdout is not None
            try:
                Lines(process.stdout).expect("ready", START_TIMEOUT, f"the boardgame.io server ({storage})")
                break
            except RuntimeError:
                _stop(process)
                if attempt == SERVER_STARTS - 1:
                    raise
        try:
            yield BgioServer(process, port, storage)
        finally:
            _stop(process)


@dataclass(frozen=True)
class BgioTurn:
    """One boardgame.io turn: the clients' summary and the server's CPU over it."""

    storage: str
    summary: Summary
    cpu: float

    @property
    def per_second(self) -> float:
        return self.summary.moves / self.summary.elapsed if self.summary.elapsed > 0 else 0.0

    @property
    def cpu_per_move(self) -> float:
        return per_move(self.cpu, self.summary.moves)


def bgio_turn(node: Node, server: BgioServer, tables: int, seconds: float, seed: int) -> BgioTurn:
    """``tables`` matches of four socket clients each against ``server`` for ``seconds``; the server's
    CPU from the moment every seat is synced (then the clients are told to go) to their summary."""
    args = [
        node.node, str(PROJECT / "client.js"), "--server", server.url, "--tables", str(tables),
        "--seconds", f"{seconds:g}", "--seed", str(seed), "--wait-go",
    ]  # fmt: skip
    client = subprocess.Popen(
        args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=node.env(),
        preexec_fn=die_with_parent,
    )
    assert client.stdin is not None and client.stdout is not None and client.stderr is not None
    lines = Lines(client.stdout)
    errors: list[bytes] = []
    reader = threading.Thread(target=lambda: errors.append(client.stderr.read() if client.stderr else b""))
    reader.start()
    try:
        lines.expect("ready", READY_TIMEOUT, "the boardgame.io clients")
        before = cpu_seconds(server.process.pid)
        client.stdin.write(b"go\n")
        client.stdin.flush()
        found = lines.expect("summary", seconds + SETTLE_TIMEOUT, "the boardgame.io clients")
        cpu = cpu_seconds(server.process.pid) - before
        client.stdin.close()
        client.wait(30)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        _stop(client)
        reader.join(10)
        said = b"".join(errors).decode(errors="replace").strip()[-800:]
        raise RuntimeError(f"{error}; the client's stderr: {said}") from error
    finally:
        _stop(client)
    reader.join(10)
    return BgioTurn(server.storage, summary_of(found), cpu)


# -- ours ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OursTurn:
    """One turn of ours: accepted commands, views read, rejected commands, the wall time, the CPU of
    API + worker + Redis (the worker drained)."""

    commands: int
    views: int
    rejected: int
    elapsed: float
    cpu: CpuSample
    tables: list[list[Table]]

    @property
    def per_second(self) -> float:
        return self.commands / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def cpu_per_move(self) -> float:
        return per_move(self.cpu.total, self.commands)

    def share(self, name: str) -> float:
        return per_move(self.cpu.seconds.get(name, 0.0), self.commands)


def new_tables(stack: Stack, count: int, processes: int) -> list[list[Table]]:
    """``count`` fresh Skull King tables, every seat taken, dealt to ``processes`` client processes.
    With no turn timer (``turn_seconds`` 0): a table left after its turn stays idle, where a public
    table's timer would let bots take it over later and play during another side's turn."""
    made: list[Table] = []
    with httpx.Client(base_url=stack.base, timeout=60.0) as client:
        for _ in range(count):
            created = client.post(
                "/games", json={"game": GAME, "players": PLAYERS, "options": {"turn_seconds": 0}}
            )
            created.raise_for_status()
            game_id = created.json()["game_id"]
            tokens = []
            for seat in range(PLAYERS):
                joined = client.post(f"/games/{game_id}/players", json={"name": f"P{seat}"})
                joined.raise_for_status()
                tokens.append(joined.json()["token"])
            made.append(Table(game_id, tokens, last_written=PLAYERS + 1))
    return [made[n::processes] for n in range(processes)]


def ours_turn(stack: Stack, players: Players, tables: int, seconds: float) -> OursTurn:
    held = new_tables(stack, tables, players.processes)  # before the measure, as boardgame.io's are
    drain(stack, held)  # the joins projected before the measure: the worker's share is the play's alone
    played = play_row(stack, players, held, seconds)
    tally = played.tally
    return OursTurn(tally.commands, tally.views, tally.rejected, played.elapsed, played.cpu, played.tables)


def view_cost(stack: Stack, tables: list[list[Table]], seconds: float) -> Measured | None:
    """The CPU of a seat view as wrk reads the played tables' views (kept in the API's memory: the
    cheapest kind); ``None`` without wrk."""
    if not wrk.available():
        return None
    rotation = [(f"/games/{t.game_id}/view", token) for share in tables for t in share for token in t.tokens]
    if not rotation:
        return None
    measure_wrk(stack, "/games/{id}/view", 1.0, rotation=rotation)  # unmeasured: the views kept first
    return measure_wrk(stack, "/games/{id}/view", seconds, rotation=rotation)


# -- the rows -----------------------------------------------------------------------------------------


def spread(values: Sequence[float], form: str) -> str:
    """The median with the lowest and highest: ``1,234 [1,100 - 1,300]`` (one value: just it)."""
    ordered = sorted(values)
    median = statistics.median(ordered)
    if len(ordered) == 1:
        return form.format(median)
    return f"{form.format(median)} [{form.format(ordered[0])} - {form.format(ordered[-1])}]"


def _ms(seconds: float) -> float:
    return seconds * 1e3


def peer_row(
    name: str,
    ours: Sequence[OursTurn],
    peer: Sequence[BgioTurn],
    ours_label: str,
    peer_label: str,
    views: Measured | None,
    shape: str,
) -> Row:
    """A row: ours against the peer in server CPU per move (medians of the rounds), the ratio read
    against ``< 1x``, with both sides' rates in the figures and what was counted in the notes."""
    ours_cpu = statistics.median(t.cpu_per_move for t in ours)
    peer_cpu = statistics.median(t.cpu_per_move for t in peer)
    ratio = ours_cpu / peer_cpu if peer_cpu > 0 else math.nan
    commands = sum(t.commands for t in ours)
    seen = sum(t.views for t in ours)
    split = " + ".join(
        f"{name} {micros(statistics.median(t.share(name) for t in ours))}"
        for name in ("api", "worker", "redis")
    )
    moves = sum(t.summary.moves for t in peer)
    refused = sum(t.summary.sent - t.summary.moves for t in peer)
    notes = [
        shape,
        f"ours: utime+stime of API + worker + Redis from /proc over the play (worker drained: every seat's "
        f"view projected), per accepted command; median split {split}; {seen:,} views read by the clients "
        f"({seen / max(1, commands):.2f} per command, counted in), {sum(t.rejected for t in ours):,} "
        f"commands rejected",
        f"boardgame.io: utime+stime of the node server from /proc, every seat connected and synced to the "
        f"clients' last update, per move the server accepted (each match's own counter); each move pushes "
        f"all four seats their playerView state over socket.io; bids are simultaneous (ignoreStaleStateID); "
        f"{moves:,} moves accepted, {refused:,} refused, "
        f"{sum(t.summary.updates for t in peer) / max(1, moves):.2f} client notifications per move, "
        f"{sum(t.summary.finished_games for t in peer)} matches finished and replaced",
    ]
    if views is not None and commands:
        net = statistics.median(
            (t.cpu.total - t.views * views.per_request) / t.commands for t in ours if t.commands
        )
        notes.append(
            f"ours net of views: {_ms(net):,.2f} ms per command (each view at {micros(views.per_request)}, "
            f"wrk reading the same seats' views kept in the API's memory: the cheapest view, so an upper "
            f"bound), {_ms(net) / _ms(peer_cpu):.2f}x the peer"
        )
    else:
        notes.append("ours net of views: not measured (wrk is not installed)")
    return Row(
        name,
        f"{spread([_ms(t.cpu_per_move) for t in ours], '{:,.2f}')} ms CPU per command at "
        f"{spread([t.per_second for t in ours], '{:,.0f}')} commands/s ({ours_label})",
        f"{spread([_ms(t.cpu_per_move) for t in peer], '{:,.2f}')} ms CPU per move at "
        f"{spread([t.per_second for t in peer], '{:,.0f}')} moves/s ({peer_label})",
        ratio,
        TARGET,
        None if math.isnan(ratio) else ratio < 1.0,
        notes,
    )


SIDES = {
    "aof": "Tablestream, AOF always",
    "flatfile": "boardgame.io FlatFile",
    "volatile": "Tablestream, no persistence",
    "memory": "boardgame.io in memory",
}


def rows(options: Options, emit: Callable[[str], object] = print) -> list[Row]:
    """The two peer rows, ours and boardgame.io's in turns; skipped rows when node cannot run them."""
    node = install()
    if isinstance(node, str):
        return [skipped(DURABLE_ROW, node), skipped(MEMORY_ROW, node)]
    rounds = 1 if options.smoke else ROUNDS
    tables, seconds = options.tables, options.seconds
    turns: dict[str, list[Any]] = {"aof": [], "flatfile": [], "volatile": [], "memory": []}
    views: dict[str, Measured | None] = {}
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tablestream-bgio-")))
        durable = stack.enter_context(running_stack(tmp / "aof"))
        volatile = stack.enter_context(running_stack(tmp / "volatile", durable=False))
        flatfile = stack.enter_context(bgio_server(node, "flatfile", tmp / "bgio"))
        memory = stack.enter_context(bgio_server(node, "memory", tmp / "bgio"))
        ours_stacks = {"aof": durable, "volatile": volatile}
        bgio_servers = {"flatfile": flatfile, "memory": memory}
        ours_players = {side: Players(ours.port, options.clients) for side, ours in ours_stacks.items()}
        for players in ours_players.values():
            stack.callback(players.close)

        def turn(side: str, number: int) -> OursTurn | BgioTurn:
            if side in ours_stacks:
                return ours_turn(ours_stacks[side], ours_players[side], tables, seconds)
            return bgio_turn(node, bgio_servers[side], tables, seconds, seed=number)

        for number in range(1, rounds + 1):
            for side in SIDES:  # in turns: a noisy neighbour weighs on every side alike
                done = turn(side, number)
                turns[side].append(done)
                emit(
                    f"   bgio peer, round {number}/{rounds}, {SIDES[side]}: {done.per_second:,.0f} moves/s, "
                    f"{_ms(done.cpu_per_move):,.2f} ms server CPU per move"
                )
        views["aof"] = view_cost(durable, turns["aof"][-1].tables, min(seconds, 5.0))
        views["volatile"] = view_cost(volatile, turns["volatile"][-1].tables, min(seconds, 5.0))
    shape = (
        f"{tables} tables of four seats a side, {seconds:g} s per turn, {rounds} round(s) in turns (ours "
        "AOF, boardgame.io FlatFile, ours without persistence, boardgame.io in memory); median [lowest - "
        f"highest]; clients on the same machine ({options.clients} Python processes; one node process), "
        "their CPU not counted"
    )
    return [
        peer_row(
            DURABLE_ROW,
            turns["aof"],
            turns["flatfile"],
            "API + worker + Redis, AOF appendfsync always",
            "boardgame.io 0.50 server, FlatFile: node-persist files, no fsync",
            views["aof"],
            shape,
        ),
        peer_row(
            MEMORY_ROW,
            turns["volatile"],
            turns["memory"],
            "API + worker + Redis without persistence",
            "boardgame.io 0.50 server, in memory",
            views["volatile"],
            shape,
        ),
    ]


def bench(options: Options, emit: Callable[[str], object] = print) -> list[Row]:
    """``tablestream bench --peer bgio``: only the peer rows, printed, then their summary."""
    rounds = 1 if options.smoke else ROUNDS
    emit(
        f"tablestream bench --peer bgio: {options.tables} tables, {options.seconds:g} s per turn, {rounds} "
        "round(s); server CPU per move from /proc, ours and boardgame.io's in turns"
    )
    found = rows(options, emit)
    for row in found:
        emit(row.render())
    emit("== summary (ratios as the targets read them)")
    for row in found:
        if row.target:
            emit(row.summary())
    return found
