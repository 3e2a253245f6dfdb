"""``tablestream worker --redis-url URL [--queue-url URL] [--redis-cluster auto|yes|no] [--workers 2]
[--sweep-seconds 5] [--metrics-port PORT] [--bots auto|all|none|only]``.

The process becomes ``python -m workers.pool`` with the same flags (exec, same pid, so signals reach
RQ directly): the CLI starts the workers without importing them.
"""

from __future__ import annotations

import argparse
import os
import sys

from services.operating.config import settings_or_exit

WORKER_MODULE = "workers.pool"
BOT_LAYOUTS = ("auto", "all", "none", "only")  # workers.pool.layout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    env = os.environ
    parser.add_argument(
        "--redis-url",
        default=env.get("TABLESTREAM_REDIS_URL"),
        required=not env.get("TABLESTREAM_REDIS_URL"),
        help="the event store: a standalone Redis or a node of a Redis Cluster (TABLESTREAM_REDIS_URL)",
    )
    parser.add_argument(
        "--queue-url",
        default=env.get("TABLESTREAM_QUEUE_URL") or None,
        help="RQ's standalone Redis (TABLESTREAM_QUEUE_URL); default: the store's, when standalone",
    )
    parser.add_argument(
        "--redis-cluster",
        choices=("auto", "yes", "no"),
        default=env.get("TABLESTREAM_REDIS_CLUSTER") or "auto",
        help="whether the store is a cluster (TABLESTREAM_REDIS_CLUSTER); auto asks it",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sweep-seconds", type=float, default=5.0)
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve the pool's Prometheus metrics on this port, unauthenticated: keep it inside the "
        "cluster; the API's /metrics shows them too when both share PROMETHEUS_MULTIPROC_DIR",
    )
    parser.add_argument(
        "--bots",
        choices=BOT_LAYOUTS,
        default="auto",
        help="which queues each worker takes: auto (with 2+ workers, one takes "
        "no bot moves nor reviews, so projections never wait behind a bot's search, and one more "
        "takes the reviews alone), all, none (projections and timers only: run an 'only' process "
        "beside it), only (bot moves, and a worker for reviews)",
    )


def worker_command(
    redis_url: str,
    workers: int,
    sweep_seconds: float = 5.0,
    queue_url: str | None = None,
    cluster: str = "auto",
    metrics_port: int | None = None,
    bots: str = "auto",
) -> list[str]:
    """The command line of a worker process."""
    return [
        sys.executable, "-m", WORKER_MODULE,
        "--redis-url", redis_url,
        *(["--queue-url", queue_url] if queue_url else []),
        "--redis-cluster", cluster,
        "--workers", str(workers),
        "--sweep-seconds", str(sweep_seconds),
        *(["--metrics-port", str(metrics_port)] if metrics_port is not None else []),
        "--bots", bots,
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    settings_or_exit("tablestream worker")  # every setting checked before the pool starts
    command = worker_command(
        args.redis_url,
        args.workers,
        args.sweep_seconds,
        args.queue_url,
        args.redis_cluster,
        args.metrics_port,
        args.bots,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(command[0], command)
