"""``tablestream worker --redis-url URL [--workers 2] [--sweep-seconds 5]``.

The process becomes ``python -m workers.pool`` with the same flags (exec, same pid, so signals reach
RQ directly): the CLI starts the workers without importing them.
"""

from __future__ import annotations

import argparse
import os
import sys

WORKER_MODULE = "workers.pool"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep-seconds", type=float, default=5.0)


def worker_command(redis_url: str, workers: int, sweep_seconds: float = 5.0) -> list[str]:
    """The command line of a worker process."""
    return [
        sys.executable, "-m", WORKER_MODULE,
        "--redis-url", redis_url,
        "--workers", str(workers),
        "--sweep-seconds", str(sweep_seconds),
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    command = worker_command(args.redis_url, args.workers, args.sweep_seconds)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)
