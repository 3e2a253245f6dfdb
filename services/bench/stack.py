"""The stack under test: a durable Redis (AOF ``appendfsync always``), the API with its baselines
(``services.bench.server``) and the worker process (``workers.pool --workers 1`` by default, one RQ
worker on every queue; ``workers=2``: the production layout of ``--bots auto``, a worker that takes
no bot moves beside one that takes every queue), each its own process.

With ``profile_dir`` the API and the worker run under pyinstrument, which writes a text report for
each when they stop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from services.bench.procs import Servers
from services.store.embedded import EmbeddedRedis, die_with_parent, free_port

WORKER_MODULE = "workers.pool"  # named, not imported: the bench never imports the workers


@dataclass(frozen=True)
class Stack:
    redis: EmbeddedRedis
    api: subprocess.Popen[bytes]
    worker: subprocess.Popen[bytes]
    port: int

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def servers(self) -> Servers:
        assert self.redis.pid is not None
        return Servers({"api": self.api.pid, "worker": self.worker.pid, "redis": self.redis.pid})


def _python(module: str, args: list[str], profile: Path | None) -> list[str]:
    if profile is None:
        return [sys.executable, "-m", module, *args]
    return [
        sys.executable, "-m", "pyinstrument", "--renderer", "text", "--outfile", str(profile),
        "--interval", "0.001", "-m", module, *args,
    ]  # fmt: skip


def _wait_ready(base: str, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the bench API exited with status {process.returncode}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            threading.Event().wait(0.05)
    raise RuntimeError(f"the bench API at {base} did not come up")


def _stop(process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# The bench's clients all play from 127.0.0.1: the per-client limits of production would measure
# the limiter, not the service.
UNLIMITED = {
    "TABLESTREAM_CREATE_RATE": "1000000/second",
    "TABLESTREAM_JOIN_RATE": "1000000/second",
    "TABLESTREAM_COMMAND_RATE": "1000000/second",
    "TABLESTREAM_MAX_WAITING_TABLES": "1000000",
    "TABLESTREAM_MAX_WAITING_TABLES_PER_ADDRESS": "1000000",
    "TABLESTREAM_MAX_WAITING_TABLES_PER_NETWORK": "1000000",
    "TABLESTREAM_MAX_WAITING_TABLES_NEW_ACCOUNT": "1000000",
}


@contextlib.contextmanager
def running_stack(
    work_dir: Path, profile_dir: Path | None = None, workers: int = 1, durable: bool = True
) -> Iterator[Stack]:
    """Start Redis, the worker process (``workers`` RQ workers) and the API; stop them (in reverse) on
    exit. Logs go to ``work_dir``. ``durable=False``: Redis with no persistence at all (no AOF, no
    snapshots: ``EmbeddedRedis(durable=False)``), for the rows that compare with a peer in memory."""
    redis = EmbeddedRedis(work_dir / "redis", durable=durable)
    logs = (work_dir / "worker.log").open("wb"), (work_dir / "api.log").open("wb")
    worker_profile = profile_dir / "worker.txt" if profile_dir else None
    api_profile = profile_dir / "api.txt" if profile_dir else None
    worker = subprocess.Popen(
        _python(WORKER_MODULE, ["--redis-url", redis.url, "--workers", str(workers)], worker_profile),
        stdout=logs[0],
        stderr=logs[0],
        preexec_fn=die_with_parent,
    )
    port = free_port()
    api = subprocess.Popen(
        _python("services.bench.server", ["--redis-url", redis.url, "--port", str(port)], api_profile),
        env={**os.environ, **UNLIMITED},
        stdout=logs[1],
        stderr=logs[1],
        preexec_fn=die_with_parent,
    )
    try:
        stack = Stack(redis, api, worker, port)
        _wait_ready(stack.base, api)
        yield stack
    finally:
        _stop(api)
        _stop(worker)
        redis.stop()
        for log in logs:
            log.close()
