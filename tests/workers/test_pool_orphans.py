"""A pool's worker never outlives its pool for long (``workers.pool.end_when_orphaned``): a worker
found retrying a lost Redis after its ``serve`` was killed had not ended on the SIGTERM its pool's
death sends, and went on retrying a server that was gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]

DEAF_CHILD = """
import os, signal, sys, time
from workers.pool import end_when_orphaned

pool = os.getpid()
child = os.fork()
if child == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # deaf to the stop its pool's death sends
    end_when_orphaned(pool, grace=float(sys.argv[1]), poll=0.05)
    while True:
        time.sleep(60)
print(child, flush=True)
sys.stdin.readline()  # the pool dies when the test says so
"""


def gone(pid: int) -> bool:
    """The process has ended (its entry gone, or a zombie no one has reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_worker_that_ignores_its_stop_ends_a_grace_period_after_its_pool_dies() -> None:
    grace = 1.0
    pool = subprocess.Popen(
        [sys.executable, "-c", DEAF_CHILD, str(grace)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert pool.stdin is not None and pool.stdout is not None
    child = int(pool.stdout.readline())
    try:
        assert not gone(child)  # alive while its pool is
        pool.stdin.close()
        assert pool.wait(timeout=30) == 0
        died = time.monotonic()
        wait_until(lambda: gone(child), 30, "the orphaned worker to end")
        assert time.monotonic() - died >= grace - 0.1  # it was given its grace to finish a job
    finally:
        if not gone(child):
            subprocess.run(["kill", "-9", str(child)], check=False)


def test_a_stop_asked_while_the_pool_starts_ends_it_cleanly_before_rq_takes_the_signals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The consumer projects from the pool's first second, so a caller may stop the pool before its RQ
    worker or pool installed their handlers: SIGTERM then ended the process by the signal (-15)."""
    from workers import pool

    reached: list[str] = []

    def starting(*args: object) -> None:
        reached.append("starting")
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill` would, while the loops are being started
        reached.append("after the signal")  # never: the stop unwinds the start

    previous = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(pool, "_run_pool", starting)
    try:
        assert pool.run_pool("redis://127.0.0.1:1/0", 2, 5.0) == 0
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
    assert reached == ["starting"]


def test_a_forked_worker_stopped_before_its_own_handlers_stops_as_python_would_not_as_the_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool's early handler is inherited by the workers it forks: in one of them, a SIGINT before
    RQ's handlers is Python's KeyboardInterrupt (which ``_pool_worker`` takes quietly), never the
    pool's own stop (a traceback in the log: stderr is JSON lines)."""
    from workers import pool

    monkeypatch.setattr(pool, "_POOL_PID", [os.getpid() + 1])  # this process as a forked worker
    with pytest.raises(KeyboardInterrupt):
        pool._stop_while_starting(signal.SIGINT, None)
