"""``tablestream demo``: bots play whole games through the real HTTP API and narrate them.

It starts the real stack - the embedded Redis (or ``--redis-url``), a projection worker process
and the API under uvicorn on a free local port - then seats one bot per seat. Each bot reads only
its own seat's view and sends one of the commands that view lists as legal.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bots import choose  # the demo's players; bots import only the domain and projections
from domain.games import game_names, spec
from projections.narration import narrate
from services.api.app import create_app
from services.api.protocol import OneWriteProtocol
from services.cli.processes import spawn_worker, stop_process, wait_ready
from services.operating.config import Settings
from services.store.embedded import EmbeddedRedis, free_port
from services.telemetry.structured_logging import LEVEL_VARIABLE, configure_logging

ALL_GAMES = "all"
LOCAL_RATE = "1000/second"  # the demo's bots all play from 127.0.0.1: no per-client limits
NAMES = [
    "Ada",
    "Brahim",
    "Chloé",
    "Dorota",
    "Emre",
    "Fatma",
    "Gaspard",
    "Hania",
    "Ines",
    "Jules",
    "Kasia",
    "Luc",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", choices=[*game_names(), ALL_GAMES], default=game_names()[0])
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--players", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None, help="the bots' choices; omit for a random one")
    parser.add_argument("--redis-url", default=None)


@contextmanager
def local_stack(
    redis_url: str | None = None, http: type[asyncio.Protocol] = OneWriteProtocol
) -> Iterator[str]:
    """The whole service on this machine, its HTTP protocol ``http``; yields the API's base URL."""
    with tempfile.TemporaryDirectory(prefix="tablestream-demo-") as tmp:
        embedded = None
        if redis_url is None:
            embedded = EmbeddedRedis(Path(tmp) / "redis", durable=True)  # started and answering
            redis_url = embedded.url
        worker = spawn_worker(redis_url, workers=1)
        port = free_port()
        config = uvicorn.Config(
            create_app(
                replace(
                    Settings(),
                    redis_url=redis_url,
                    create_rate=LOCAL_RATE,
                    join_rate=LOCAL_RATE,
                    command_rate=LOCAL_RATE,
                    max_waiting_tables_per_address=1000,
                    max_waiting_tables_per_network=1000,
                )
            ),
            host="127.0.0.1",
            port=port,
            log_level="warning",
            loop="uvloop",
            http=http,
            timeout_graceful_shutdown=5,  # live streams of running games would otherwise hold it open
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        base = f"http://127.0.0.1:{port}"
        try:
            wait_ready(base)
            yield base
        finally:
            server.should_exit = True
            thread.join(10)
            stop_process(worker)
            if embedded is not None:
                embedded.stop()


def play_game(
    client: httpx.Client,
    game: str,
    players: int,
    rng: random.Random,
    out: Callable[[str], object] = print,
    options: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """One complete game between bots; narrates public events; returns the final spectator view
    and the seats' tokens. With a practice ``seed`` in ``options`` and a seeded ``rng`` the whole
    game is reproducible."""
    created = client.post("/games", json={"game": game, "players": players, "options": options or {}})
    created.raise_for_status()
    game_id = created.json()["game_id"]
    tokens = []
    for seat in range(players):
        joined = client.post(
            f"/games/{game_id}/players", json={"name": NAMES[seat], "client_seed": f"{rng.getrandbits(64):x}"}
        )
        joined.raise_for_status()
        tokens.append(joined.json()["token"])
    out(f"== {game} {game_id}: {', '.join(NAMES[:players])}")
    seen = 0
    while True:
        spectator = client.get(f"/games/{game_id}/events", params={"after": seen, "limit": 1000}).json()
        for event in spectator["events"]:
            out("  " + narrate_line(game, event, NAMES[:players]))
        seen = spectator["version"]
        view = client.get(f"/games/{game_id}/view").json()
        if view["status"] == "finished":
            winners = ", ".join(NAMES[s] for s in view["winners"])
            out(f"== winners: {winners}; scores {view['scores']}")
            return view, tokens
        for seat in view["to_act"]:
            auth = {"Authorization": f"Bearer {tokens[seat]}"}
            own = client.get(f"/games/{game_id}/view", headers=auth).json()
            if not own["legal"]:
                continue
            command = choose(game, own, rng)
            body = {"command_id": uuid.uuid4().hex, "command": command, "expected_version": own["version"]}
            response = client.post(f"/games/{game_id}/commands", json=body, headers=auth)
            if response.status_code == 409 and response.json()["error"]["code"] == "version_conflict":
                continue
            response.raise_for_status()


def narrate_line(game: str, event: dict[str, Any], names: Sequence[str]) -> str:
    """One line of the demo's log: the event's version and its English sentence."""
    return f"v{event['version']:<4} {narrate(game, event, names)}"


def run(args: argparse.Namespace) -> int:
    os.environ.setdefault(LEVEL_VARIABLE, "warning")  # the narration is the output; logs only for trouble
    configure_logging()
    seed = args.seed if args.seed is not None else random.SystemRandom().getrandbits(32)
    rng = random.Random(seed)
    games = game_names() if args.game == ALL_GAMES else [args.game]
    print(f"bots' seed: {seed}")
    with local_stack(args.redis_url) as base, httpx.Client(base_url=base, timeout=30.0) as client:
        print(f"API at {base}")
        for game in games:
            for _ in range(args.games):
                play_game(client, game, args.players or spec(game).default_players, rng)
    return 0
