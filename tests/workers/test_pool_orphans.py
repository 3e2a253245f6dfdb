"""A pool's worker never outlives its pool for long (``workers.pool.end_when_orphaned``): a worker
found retrying a lost Redis after its ``serve`` was killed had not ended on the SIGTERM its pool's
death sends, and went on retrying a server that was gone. And a pool stopped at any moment of its
start ends, with every worker it forked."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from rq import Worker
from rq.serializers import JSONSerializer

from services.store.rq_workers import PipelinedWorker
from tests.support.waiting import Deadline, scaled, wait_until
from workers.pool import LayoutPool, layout

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


def test_a_stop_asked_while_the_pool_starts_is_noted_for_its_loops_never_raised_where_it_lands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The consumer projects from the pool's first second, so a caller may stop the pool before its RQ
    worker or pool installed their handlers. The stop is noted: raised from the handler, it came out
    once in the hook logging runs after a fork, which prints and drops an exception, and the pool
    ran on for ever."""
    from workers import pool

    noted: list[bool] = []

    def starting(*args: Any) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill` would, while the loops are being started
        noted.append(args[-1].is_set())  # the start goes on, and sees the stop

    previous = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(pool, "_run_pool", starting)
    try:
        assert pool.run_pool("redis://127.0.0.1:1/0", 2, 5.0) == 0
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
    assert noted == [True]


class StoppedWhileForking(LayoutPool):
    """A pool stopped (SIGTERM, as `kill` sends) between the forks of its first and second workers:
    before RQ's handlers are in, while a worker just forked has not installed its own."""

    def start_worker(self, *args: Any, **kwargs: Any) -> None:
        super().start_worker(*args, **kwargs)
        if len(self.worker_dict) == 1:
            os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.redis
def test_a_stop_that_comes_while_the_pool_forks_its_workers_ends_every_worker_and_then_the_pool(
    real_redis: Any,
) -> None:
    from workers import pool

    stop_asked = threading.Event()
    previous = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGTERM, pool._noting(stop_asked))
    signal.signal(signal.SIGINT, pool._noting(stop_asked))
    workers = StoppedWhileForking(
        layout(2),
        connection=real_redis,
        stop_asked=stop_asked,
        worker_class=PipelinedWorker,
        serializer=JSONSerializer,
    )
    try:
        deadline = Deadline(60)  # not burst: a worker the stop missed would wait for jobs for ever
        workers.start(logging_level="WARNING")
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
        for data in workers.worker_dict.values():  # a failed run leaves no worker behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(data.pid, signal.SIGKILL)
    assert not deadline.passed(), "the stopped pool waited on a worker its stop never reached"
    assert stop_asked.is_set() and len(workers.signalled) == 3  # each of its three workers, once
    assert workers.worker_dict == {}  # every one ended, and was reaped
    assert Worker.all(connection=real_redis) == []  # and none stays registered


STOP_MASK = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))


def stop_signals_blocked(pid: int) -> dict[str, bool]:
    """For each thread of a process (its name and id): whether it blocks both SIGINT and SIGTERM."""
    found = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(FileNotFoundError):  # a thread ending as it is read
            status = dict(
                line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line
            )
            name = f"{(task / 'comm').read_text().strip()}/{task.name}"
            found[name] = int(status["SigBlk"], 16) & STOP_MASK == STOP_MASK
    return found


@pytest.mark.redis
@pytest.mark.parametrize("workers", [1, 2])
def test_a_pool_stopped_as_a_service_manager_stops_it_ends_at_once_whatever_thread_the_kernel_picks(
    real_redis: Any, workers: int
) -> None:
    """A service manager (systemd, a test's teardown) sends SIGTERM to every process of the group at
    once. The kernel gives a process's signal to any of its threads that does not block it; given
    to another thread than the main one, a stop only flagged Python's handler, and the worker it was
    for went on waiting in its dequeue (a BLPOP of 20 s). Every thread but the main one blocks the
    stop signals, in the pool's process and in each worker's."""
    where = real_redis.connection_pool.connection_kwargs
    url = f"redis://{where['host']}:{where['port']}/0"
    pool = subprocess.Popen(
        [sys.executable, "-m", "workers.pool", "--redis-url", url, "--workers", str(workers),
         "--sweep-seconds", "1"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        expected = 1 if workers == 1 else 3  # a lone worker runs in the pool's process; else 2 + reviews

        def registered() -> bool:
            return len(Worker.all(connection=real_redis)) == expected

        wait_until(registered, 60, "the pool's workers to register")
        processes = [pool.pid, *(int(p) for p in Path(f"/proc/{pool.pid}/task/{pool.pid}/children")
                                 .read_text().split())]  # fmt: skip

        def main_threads_take_the_stop() -> bool:
            # a worker registers inside RQ's bootstrap, just before its own handler is in and it
            # unblocks the stop signals (services.store.rq_workers.PromptWorker.bootstrap)
            return all(
                not blocked
                for pid in processes
                for name, blocked in stop_signals_blocked(pid).items()
                if name.endswith(f"/{pid}")
            )

        wait_until(main_threads_take_the_stop, 30, "every worker's handler in, the stop unblocked")
        for pid in processes:
            threads = stop_signals_blocked(pid)
            main = next(name for name in threads if name.endswith(f"/{pid}"))
            assert not threads.pop(main), "the main thread takes the stop"
            assert all(threads.values()), f"threads of {pid} that could take a stop: {threads}"
        deadline = Deadline(10)  # a missed stop waited for the dequeue's 20 s
        os.killpg(pool.pid, signal.SIGTERM)
        assert pool.wait(scaled(30)) == 0
        assert not deadline.passed(), f"the stop took {deadline.elapsed():.1f} s"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pool.pid, signal.SIGKILL)
