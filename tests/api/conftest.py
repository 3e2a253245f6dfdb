"""The HTTP app under test, on fakeredis and on a real server, with its projection queue drainable."""

from __future__ import annotations

import hashlib
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import fakeredis
import pytest
import redis
from starlette.testclient import TestClient

from bots import choose
from services.api.app import create_app
from services.operating.config import Settings
from services.store.connection import connect_to
from services.store.embedded import EmbeddedRedis
from services.store.queue import bot_queue, lifecycle_queue
from services.store.rq_workers import run_burst, run_queued_projections
from workers import lifecycle as lifecycle_jobs

ADMIN_TOKEN = "operator-secret-token"
UNLIMITED: dict[str, Any] = {
    "create_rate": "100000/second",
    "join_rate": "100000/second",
    "command_rate": "100000/second",
    "login_rate": "100000/second",
    "login_guess_rate": "100000/second",
    "login_name_rate": "100000/second",
    "register_rate": "100000/second",
    "max_waiting_tables_per_address": 100_000,
    "max_waiting_tables_per_network": 100_000,
    "max_waiting_tables_new_account": 100_000,
    "bot_pace_ms": 0,
    "password_hash_memory_kib": 32,  # Argon2id at its least: what is hashed is checked, not the cost
    "password_hash_time_cost": 1,
}
"""Tests about behaviour, not about abuse, send far more than a stranger may: no rate limits (nor a
cap on one address's waiting tables). Nor
paced bots (``bot_pace_ms``): the tests about pacing ask for it per table."""


@dataclass
class Api:
    """A test client plus what a test needs around it: the sync Redis and the worker."""

    client: TestClient
    sync: redis.Redis
    tokens: dict[str, list[str]] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)
    _shared_game: str | None = None

    def shared_game(self) -> str:
        """One started Skull table reused across the examples of a hypothesis test."""
        if self._shared_game is None:
            self._shared_game = self.started()
        return self._shared_game

    def project(self) -> None:
        """Project every hand-over and queued projection job to completion, in process (the consumer's
        pass as an RQ job, in a burst SimpleWorker)."""
        run_queued_projections(self.sync)

    def create(self, game: str = "skull", players: int = 3, **options: Any) -> str:
        response = self.client.post("/games", json={"game": game, "players": players, "options": options})
        assert response.status_code == 201, response.text
        game_id: str = response.json()["game_id"]
        self.tokens[game_id] = []
        self.hosts[game_id] = response.json()["host_token"]
        return game_id

    def join(self, game_id: str, name: str = "P", client_seed: str | None = None) -> int:
        body: dict[str, Any] = {"name": name}
        if client_seed is not None:
            body["client_seed"] = client_seed
        response = self.client.post(f"/games/{game_id}/players", json=body)
        assert response.status_code == 201, response.text
        self.tokens[game_id].append(response.json()["token"])
        seat: int = response.json()["seat"]
        return seat

    def started(self, game: str = "skull", players: int = 3, **options: Any) -> str:
        game_id = self.create(game, players, **options)
        for seat in range(players):
            self.join(game_id, f"P{seat}", f"seed-{seat}")
        return game_id

    def play_until(
        self, game_id: str, done: Callable[[dict[str, Any]], bool], seed: int = 0
    ) -> dict[str, Any]:
        """Let bots play every seat until ``done(spectator view)``; returns that view."""
        rng = random.Random(seed)
        while not done(view := self.view(game_id)):
            assert view["status"] == "playing", "the game ended before the condition held"
            for seat in view["to_act"]:
                own = self.view(game_id, seat)
                self.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
        return view

    def auth(self, game_id: str, seat: int) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[game_id][seat]}"}

    def send(
        self,
        game_id: str,
        seat: int,
        command: dict[str, Any],
        command_id: str | None = None,
        expected_version: int | None = None,
    ) -> Any:
        body: dict[str, Any] = {"command_id": command_id or uuid.uuid4().hex, "command": command}
        if expected_version is not None:
            body["expected_version"] = expected_version
        return self.client.post(f"/games/{game_id}/commands", json=body, headers=self.auth(game_id, seat))

    def view(self, game_id: str, seat: int | None = None, **params: Any) -> dict[str, Any]:
        headers = self.auth(game_id, seat) if seat is not None else {}
        response = self.client.get(f"/games/{game_id}/view", headers=headers, params=params)
        assert response.status_code == 200, response.text
        view: dict[str, Any] = response.json()
        return view

    def head(self, game_id: str) -> int:
        version: int = self.client.get(f"/games/{game_id}/events", params={"limit": 1}).json()["version"]
        return version


JSON = {"Content-Type": "application/json"}


def bearer_only(client: TestClient) -> TestClient:
    """Forget the token cookies the server sets for browsers after every response: these tests speak
    as bearer clients, and a remembered seat cookie would turn their spectator reads into a seat's."""
    client.event_hooks["response"].append(lambda response: client.cookies.clear())
    return client


def unsigned(answer: dict[str, Any]) -> dict[str, Any]:
    """A command's answer without its receipt's signing second and signature: a repeated command is
    answered with the same receipt, signed again at its own second."""
    receipt = {k: v for k, v in answer["receipt"].items() if k not in ("signed_at", "signature")}
    return {**answer, "receipt": receipt}


def practice(game: str, seed: int) -> dict[str, str]:
    """Options of a practice table: fixed deals, so that with seeded bots the game replays exactly."""
    return {"seed": hashlib.sha256(f"{game}-{seed}".encode()).hexdigest()}


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def api(request: pytest.FixtureRequest) -> Iterator[Api]:
    settings = Settings(admin_token=ADMIN_TOKEN, **UNLIMITED)
    if request.param == "fakeredis":
        server = fakeredis.FakeServer()
        sync = fakeredis.FakeRedis(server=server)
        app = create_app(
            settings, lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server))
        )
    else:
        embedded: EmbeddedRedis = request.getfixturevalue("redis_server")
        sync = redis.Redis.from_url(embedded.url)
        sync.flushall()
        app = create_app(settings, connect_to(embedded.url))
    with TestClient(app, raise_server_exceptions=False) as client:
        client.headers["X-Request-ID"] = f"test-{uuid.uuid4().hex[:8]}"
        yield Api(bearer_only(client), sync)
    sync.close()


@pytest.fixture
def fake_api() -> Iterator[Api]:
    """The app on fakeredis only: for tests about HTTP behaviour, not about the backend."""
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **UNLIMITED),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Api(bearer_only(client), fakeredis.FakeRedis(server=server))


@pytest.fixture
def run_jobs(api: Api, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Run queued bot and timer jobs in process (RQ burst), their async client on the test's backend."""

    def connect(sync: Any) -> Any:
        if isinstance(sync, fakeredis.FakeRedis):
            return fakeredis.FakeAsyncRedis(server=sync.connection_pool.connection_kwargs["server"])
        return lifecycle_jobs.default_async_client(sync)

    monkeypatch.setattr(lifecycle_jobs, "async_client_for", connect)

    def run() -> None:
        queues = [lifecycle_queue(api.sync), bot_queue(api.sync)]
        run_burst(api.sync, queues, logging_level="WARNING")

    return run
