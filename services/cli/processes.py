"""Child processes of the CLI: a projection worker, stopping children, waiting for the API."""

from __future__ import annotations

import signal
import subprocess
import threading

import httpx

from services.cli.worker import worker_command
from services.store.embedded import die_with_parent


def spawn_worker(url: str, workers: int) -> subprocess.Popen[bytes]:
    """The worker process (``workers.pool``: ``workers`` RQ workers, laid out by ``--bots auto``) in
    its own process (RQ workers own their process's signals)."""
    return subprocess.Popen(
        worker_command(url, workers),
        preexec_fn=die_with_parent,  # a killed serve or demo leaves no worker behind
        process_group=0,  # Ctrl-C in a terminal reaches the parent only; it stops us after draining
    )


def stop_process(process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_ready(base: str, attempts: int = 200) -> None:
    """Until ``GET {base}/healthz`` answers 200 (each attempt waits up to a second)."""
    for _ in range(attempts):
        try:
            if httpx.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        except httpx.TransportError:
            threading.Event().wait(0.05)
    raise RuntimeError(f"the API at {base} did not come up")
