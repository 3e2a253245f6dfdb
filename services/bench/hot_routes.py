"""The hot routes in process: CPU per call of a command, a seat view read from Redis, and the bare
``/bench/ping`` and ``/bench/append`` beside them, each an ASGI call of the production app (no HTTP
server, no client), on a private Redis; ``--profile`` adds cProfile's top functions per route.

    python -m services.bench.hot_routes [--tables 16] [--rounds 30] [--profile] [--durable]

A round sends, to every table, the acting seat's view read (the view cache off: read from Redis,
projected after the last round), one legal command, as the bench's clients do, and the seat's view
again before its projection (rendered in the API from the events: the projection is behind). The
projection jobs queued by a round run between rounds, in this process, untimed. The command route
is measured on both write paths in the same run, alternating rounds: ``fast`` (the process holds
the game's head: one round trip) and ``load`` (``GameCommands.fast_path`` off: the load first,
then the append).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import logging
import pstats
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import redis
from msgspec import to_builtins
from starlette.types import ASGIApp, Message

from services.api.app import create_app
from services.bench.server import WithBaselines, bare_app
from services.history.folding import StateCache
from services.operating.config import Settings
from services.store.embedded import EmbeddedRedis
from services.store.operations import Handover
from services.store.rq_workers import run_queued_projections
from services.table.commands import GameCommands
from services.telemetry import metrics
from services.telemetry.structured_logging import configure_logging

UNLIMITED: dict[str, object] = {
    **{f"{name}_rate": "1000000/second" for name in ("create", "join", "command")},
    # its tables all come from one address, and wait for players until their projection says
    # otherwise: the caps of a stranger's waiting tables would refuse a run of more than 20
    **{f"max_waiting_tables{scope}": 1_000_000 for scope in ("", "_per_address", "_per_network")},
}
PLAYERS = 4


async def call(app: ASGIApp, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    """One request through the app's ASGI interface; the decoded JSON answer (or the text)."""
    data = json.dumps(body).encode() if body is not None else b""
    headers = [(b"host", b"bench"), (b"content-type", b"application/json")]
    if data:
        headers.append((b"content-length", str(len(data)).encode()))  # as every HTTP client sends
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
        "headers": headers, "client": ("127.0.0.1", 40000), "server": ("bench", 80),
    }  # fmt: skip
    sent = False
    chunks: list[bytes] = []
    status = 0

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": data, "more_body": False}
        await asyncio.Event().wait()  # no disconnect while the answer is written
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    raw = b"".join(chunks)
    if status >= 400:
        raise RuntimeError(f"{method} {path}: {status} {raw[:200]!r}")
    return json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode()


def views_rendered() -> float:
    """The app's count of views rendered because the projection was behind (this process)."""
    return metrics.metrics().registry.get_sample_value("tablestream_views_rendered_total") or 0.0


async def no_poke(game_id: str, handover: Handover) -> None:
    return None


class Timer:
    """CPU seconds and calls per route, and a profile per route when asked."""

    def __init__(self, profile: bool) -> None:
        self.cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.rendered: dict[str, int] = {}  # views the app rendered (projection behind) per route
        self.profiles: dict[str, cProfile.Profile] = {}
        self.profile = profile

    async def run(self, route: str, coroutine: Any) -> Any:
        profiler = self.profiles.setdefault(route, cProfile.Profile()) if self.profile else None
        rendered = views_rendered()
        started = time.process_time()
        if profiler is not None:
            profiler.enable()
        try:
            return await coroutine
        finally:
            if profiler is not None:
                profiler.disable()
            self.cpu[route] = self.cpu.get(route, 0.0) + time.process_time() - started
            self.calls[route] = self.calls.get(route, 0) + 1
            self.rendered[route] = self.rendered.get(route, 0) + int(views_rendered() - rendered)

    def per_call_us(self, route: str) -> float:
        return self.cpu[route] / max(1, self.calls[route]) * 1e6


async def measure(url: str, tables: int, rounds: int, timer: Timer) -> None:
    service = create_app(Settings(redis_url=url, bot_pace_ms=0, **UNLIMITED))  # type: ignore[arg-type]
    app = WithBaselines(service, bare_app(url))
    async with service.router.lifespan_context(service):
        context = service.state.context
        context.views.resize(0)  # every view read from Redis
        commands: GameCommands = context.commands
        observer = GameCommands(context.store, commands.tokens, no_poke, StateCache(), fast_path=False)
        games: list[tuple[str, list[str]]] = []
        for _ in range(tables):
            created = await call(
                app, "POST", "/games", {"game": "skull-king", "players": PLAYERS, "options": {}}
            )
            tokens = [
                (await call(app, "POST", f"/games/{created['game_id']}/players", {"name": f"P{seat}"}))[
                    "token"
                ]
                for seat in range(PLAYERS)
            ]
            games.append((created["game_id"], tokens))
        await call(app, "GET", "/bench/append")  # the baseline's script loaded
        project(url)  # the tables' views written: the first round reads them from Redis
        for number in range(rounds):
            path = "fast" if number % 2 else "load"
            commands.fast_path = path == "fast"
            for game_id, tokens in games:
                await timer.run("/bench/ping", call(app, "GET", "/bench/ping"))
                await timer.run("/bench/append", call(app, "GET", "/bench/append"))
                folded = await observer.load(game_id)
                seats = sorted(folded.table.to_act(folded.state))
                if not seats:
                    continue
                seat = seats[0]
                await timer.run(
                    "view (read from Redis)", call(app, "GET", f"/games/{game_id}/view", token=tokens[seat])
                )
                move = to_builtins(folded.table.legal_commands(folded.state, seat)[0])
                body = {"command_id": f"r{number}", "command": move}
                await timer.run(
                    f"command ({path})", call(app, "POST", f"/games/{game_id}/commands", body, tokens[seat])
                )
                await timer.run(
                    "view (rendered: projection behind)",
                    call(app, "GET", f"/games/{game_id}/view", token=tokens[seat]),
                )
            project(url)  # the round's projection jobs, untimed (RQ's worker wants the main thread)


def project(url: str) -> None:
    connection = redis.Redis.from_url(url)
    try:
        run_queued_projections(connection)
    finally:
        connection.close()


def report(timer: Timer, top: int, sort: str = "tottime") -> str:
    lines = []
    bare = timer.per_call_us("/bench/ping")
    append = timer.per_call_us("/bench/append")
    for route in timer.cpu:
        us = timer.per_call_us(route)
        lines.append(
            f"{route:28} {us:8,.0f} us CPU/call  {us / bare:6.2f}x ping  {us / append:6.2f}x append  "
            f"({timer.calls[route]} calls, {timer.rendered[route]} views rendered)"
        )
    for route, profiler in timer.profiles.items():
        if not route.startswith(("command", "view")):
            continue
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats(sort).print_stats(top)
        lines += ["", f"== cProfile of {route}, by {sort}", out.getvalue()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.bench.hot_routes", description=__doc__)
    parser.add_argument("--tables", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="cProfile each route (CPU inflated)")
    parser.add_argument("--durable", action="store_true", help="Redis with AOF appendfsync always")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime", choices=["tottime", "cumulative"])
    args = parser.parse_args(argv)
    configure_logging(level=logging.WARNING)
    timer = Timer(args.profile)
    with (
        tempfile.TemporaryDirectory(prefix="tablestream-hot-") as tmp,
        EmbeddedRedis(Path(tmp), durable=args.durable) as server,
    ):
        asyncio.run(measure(server.url, args.tables, args.rounds, timer))
    print(report(timer, args.top, args.sort))
    return 0


if __name__ == "__main__":
    sys.exit(main())
