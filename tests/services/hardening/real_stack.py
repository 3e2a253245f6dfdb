"""A real ``tablestream serve`` (embedded Redis with AOF always, a worker, uvicorn) for fault and
load tests, plus bots that play through HTTP and survive the faults (same command id on retry)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from bots import choose
from services.store.embedded import free_port
from tests.support.waiting import wait_until

RETRYABLE = {429, 503}


def children_of(pid: int) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append((int(entry.name), cmdline))
    return found


@dataclass
class Stack:
    process: subprocess.Popen[bytes]
    base: str
    redis_url: str

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url, socket_timeout=2, socket_connect_timeout=2)

    def redis_pid(self) -> int | None:
        try:
            with self.redis() as client:
                return int(client.info("server")["process_id"])
        except redis.RedisError:
            return None

    def worker_pid(self) -> int | None:
        pids = [pid for pid, cmd in children_of(self.process.pid) if "workers.pool" in cmd]
        return pids[0] if pids else None

    def ready(self) -> bool:
        try:
            return httpx.get(f"{self.base}/healthz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False


@contextmanager
def served(tmp_path: Path, *flags: str, new_session: bool = False, **settings: str) -> Iterator[Stack]:
    """``tablestream serve`` with these flags and settings; ``new_session``: in a session (and process group)
    of its own, as a terminal runs it, so that a test can Ctrl-C its group with ``os.killpg``."""
    port = free_port()
    env = {
        **os.environ,
        "TABLESTREAM_DATA_DIR": str(tmp_path / "data"),
        "TABLESTREAM_REDIS_SOCKET_TIMEOUT": "1",
        "TABLESTREAM_REDIS_POOL_TIMEOUT": "1",
        "TABLESTREAM_LOG_LEVEL": "warning",
        **{f"TABLESTREAM_{name.upper()}": value for name, value in settings.items()},
    }
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "--port", str(port), *flags],
        stdout=log,
        stderr=log,
        env=env,
        start_new_session=new_session,
    )
    try:
        wait_until(lambda: "Redis: " in (tmp_path / "serve.log").read_text(), 30, "serve to start Redis")
        url = re.search(r"Redis: (\S+)\)", (tmp_path / "serve.log").read_text())
        assert url is not None
        stack = Stack(process, f"http://127.0.0.1:{port}", url.group(1))
        wait_until(stack.ready, 30, "serve to be ready")
        yield stack
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


@dataclass
class Bot:
    """Plays one game through HTTP; every request is retried (same command id) through faults."""

    base: str
    game: str
    players: int
    seed: int
    receipts: list[tuple[int, str]] = field(default_factory=list)
    game_id: str = ""
    retries: int = 0
    statuses: list[int] = field(default_factory=list)

    def _request(self, client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response:
        deadline = time.monotonic() + 90
        while True:
            try:
                response = client.request(method, path, **kwargs)
                self.statuses.append(response.status_code)
                if response.status_code not in RETRYABLE:
                    return response
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"{method} {path} kept failing")
            self.retries += 1
            time.sleep(0.1)

    def play(self, deadline_s: float = 150) -> None:
        rng = random.Random(self.seed)
        deadline = time.monotonic() + deadline_s
        with httpx.Client(base_url=self.base, timeout=10) as client:
            created = self._request(
                client, "POST", "/games", json={"game": self.game, "players": self.players}
            )
            assert created.status_code == 201, created.text
            self.game_id = created.json()["game_id"]
            tokens = []
            for seat in range(self.players):
                joined = self._request(
                    client, "POST", f"/games/{self.game_id}/players", json={"name": f"B{seat}"}
                )
                assert joined.status_code == 201, joined.text
                tokens.append(joined.json()["token"])
            while time.monotonic() < deadline:
                view = self._request(client, "GET", f"/games/{self.game_id}/view").json()
                if view["status"] == "finished":
                    return
                for seat in view["to_act"]:
                    auth = {"Authorization": f"Bearer {tokens[seat]}"}
                    answer = self._request(client, "GET", f"/games/{self.game_id}/view", headers=auth)
                    assert answer.status_code == 200, f"seat {seat}: {answer.status_code} {answer.text}"
                    own = answer.json()
                    if not own["legal"]:
                        continue
                    body = {
                        "command_id": uuid.uuid4().hex,
                        "command": choose(self.game, own, rng),
                        "expected_version": own["version"],
                    }
                    sent = self._request(
                        client, "POST", f"/games/{self.game_id}/commands", json=body, headers=auth
                    )
                    assert sent.status_code in (200, 409), sent.text
                    if sent.status_code == 200:
                        receipt = sent.json()["receipt"]
                        self.receipts.append((receipt["version"], receipt["hash"]))
            raise AssertionError(f"{self.game} {self.game_id} did not finish in {deadline_s} s")
