"""``tablestream serve [--host] [--port] [--redis-url] [--queue-url] [--redis-cluster] [--data-dir]
[--api-workers]``.

Before starting anything it takes the data directory's lock (a second ``serve`` on the same files
says so and exits 1) and binds the port (a port in use is reported before Redis starts). The
embedded Redis and the worker process (two RQ workers: one for projections and timers only, one
that also plays the bots: ``SERVE_WORKERS``) run in their own process groups, so Ctrl-C in a terminal
reaches only ``serve``, which drains the API first (live streams end at once, a body still arriving
gets a second, requests get up to ``shutdown_seconds``: ``services.api.drain``) and then stops the
worker and Redis. While it runs, a supervisor thread
restarts the worker or the embedded Redis if either dies.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import structlog
import uvicorn

from services.api.app import create_app
from services.api.protocol import IMPORT_NAME as CONFIGURED_PROTOCOL
from services.api.protocol import server_options
from services.api.rate_limits import shared_storage
from services.cli.processes import spawn_worker, stop_process
from services.operating.config import Settings, settings_or_exit
from services.store.connection import redacted, topology
from services.store.embedded import DataDirLocked, EmbeddedRedis, data_dir_lock
from services.table.tracing import configure_tracing
from services.telemetry import metrics
from services.telemetry.structured_logging import configure_logging

SUPERVISE_SECONDS = 0.5
# The worker process's RQ workers: one takes projections and timers only, the other bot moves too,
# so a strong bot's move never holds up a view; with them the pool runs a third that takes the
# reviews alone (``workers.pool.layout``), so a queue of reviews never holds up a bot's move.
SERVE_WORKERS = 2

log = structlog.get_logger("tablestream.serve")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--redis-url", default=None, help="use this Redis; default: a private embedded server"
    )
    parser.add_argument(
        "--queue-url",
        default=None,
        help="RQ's standalone Redis (needed when the store is a cluster); default: the store's",
    )
    parser.add_argument(
        "--redis-cluster",
        choices=("auto", "yes", "no"),
        default=None,
        help="whether --redis-url is a Redis Cluster; default auto: ask it",
    )
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="where the embedded server keeps its data"
    )
    parser.add_argument("--api-workers", type=int, default=1, help="API processes sharing the port")


def bind_port(host: str, port: int) -> socket.socket:
    """The listening socket, bound now so that a port in use is an error before anything starts."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


class Supervisor(threading.Thread):
    """Restarts the embedded Redis and the projection worker when they die, until ``stop()``.

    It is also the thread that starts them again, and Linux ties a child's death signal to the
    thread that started it (``die_with_parent``): it lives as long as ``serve``."""

    def __init__(self, embedded: EmbeddedRedis | None, worker_args: tuple[str, int]) -> None:
        super().__init__(name="tablestream-supervisor", daemon=True)
        self.embedded = embedded
        self.worker_args = worker_args
        self.worker: subprocess.Popen[bytes] = spawn_worker(*worker_args)
        self.restarts = {"redis": 0, "worker": 0}
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        while not self._stopping.wait(SUPERVISE_SECONDS):
            with self._lock:
                if self._stopping.is_set():
                    return
                self._check()

    def _check(self) -> None:
        if self.embedded is not None and not self.embedded.running:
            log.warning("redis_died", returncode=self.embedded.returncode)
            try:
                self.embedded.start()
                self.restarts["redis"] += 1
                log.warning("redis_restarted", port=self.embedded.port)
            except Exception as exc:  # try again on the next round
                log.error("redis_restart_failed", error=str(exc))
        if self.worker.poll() is not None:
            log.warning("worker_died", returncode=self.worker.returncode)
            self.worker = spawn_worker(*self.worker_args)
            self.restarts["worker"] += 1

    def stop(self) -> None:
        """Stop supervising, then stop the worker and the embedded Redis (in that order)."""
        with self._lock:
            self._stopping.set()
        began = time.monotonic()
        stop_process(self.worker)
        worker_s = time.monotonic() - began
        if self.embedded is not None:
            self.embedded.stop()
        redis_s = time.monotonic() - began - worker_s
        log.info("children_stopped", worker_s=round(worker_s, 3), redis_s=round(redis_s, 3))


def data_place(embedded: EmbeddedRedis | None, url: str) -> str:
    """Where the games are kept, said at start: the embedded Redis's directory, or the given Redis."""
    if embedded is not None:
        return f"Data: {embedded.data_dir}  (Redis with AOF, fsync on every write; --data-dir DIR to move it)"
    return f"Data: in the Redis at {redacted(url)}  (nothing kept on this machine)"


def run(args: argparse.Namespace) -> int:
    settings = settings_or_exit("tablestream serve")  # every setting checked before anything starts
    configure_logging()
    # before any metric: this process, its API processes and its worker count in one directory
    metrics.prepare_directory(owner=True)
    configure_tracing()  # off unless OTEL_* asks for it (services.table.tracing)
    url = args.redis_url or settings.redis_url
    data_dir = Path(args.data_dir or settings.data_dir)
    with contextlib.ExitStack() as stack:
        try:
            if url is None:
                stack.enter_context(data_dir_lock(data_dir))
            sock = bind_port(args.host, args.port)
        except (DataDirLocked, OSError) as exc:
            print(f"tablestream serve: {exc}", file=sys.stderr, flush=True)
            return 1
        stack.callback(sock.close)
        return _serve(args, settings, url, data_dir, sock)
    return 1  # unreachable: mypy cannot see that the with-block returns


def _serve(
    args: argparse.Namespace, settings: Settings, url: str | None, data_dir: Path, sock: socket.socket
) -> int:
    supervisor: Supervisor | None = None
    embedded: EmbeddedRedis | None = None
    if not settings.archive_dir:  # finished games' archive: under the data directory, for every process
        settings = replace(settings, archive_dir=str(data_dir / "archive"))
        os.environ["TABLESTREAM_ARCHIVE_DIR"] = settings.archive_dir  # the worker and API processes
    if url is None:
        embedded = EmbeddedRedis(data_dir / "redis", durable=True)  # started and answering
        url = embedded.url
        supervisor = Supervisor(embedded, (url, SERVE_WORKERS))
        supervisor.start()
    settings = replace(
        settings,
        redis_url=url,
        queue_url=args.queue_url or settings.queue_url,
        redis_cluster=args.redis_cluster or settings.redis_cluster,
    )
    print(f"Tablestream is serving on http://{args.host}:{args.port}  (Redis: {redacted(url)})", flush=True)
    print(data_place(embedded, url), flush=True)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal; a handler of our own
    # receives it instead of dying, so that the worker and the embedded Redis are stopped too.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: None)
    # uvicorn's own logging configuration gives its loggers plain-text handlers: without it their
    # records reach the root logger's JSON handler (``services.telemetry.structured_logging``)
    options = {**server_options(settings, args.host, args.port), "log_config": None}
    try:
        if args.api_workers > 1:
            os.environ["TABLESTREAM_REDIS_URL"] = url
            os.environ["TABLESTREAM_REDIS_CLUSTER"] = settings.redis_cluster
            if settings.queue_url:
                os.environ["TABLESTREAM_QUEUE_URL"] = settings.queue_url
            # one client's rate for all the API processes together, not one per process
            queue_url = topology(url, settings.queue_url, settings.redis_cluster).queue_url  # type: ignore[arg-type]
            limits = shared_storage(settings.rate_limit_storage, queue_url)
            os.environ["TABLESTREAM_RATE_LIMIT_STORAGE"] = limits
            sock.close()  # uvicorn's supervisor binds again for its workers
            # Its worker processes are spawned: the protocol is named by import, and takes the header
            # timeout from the settings of the environment they inherit
            os.environ["TABLESTREAM_HEADER_TIMEOUT_SECONDS"] = str(settings.header_timeout_seconds)
            options["http"] = CONFIGURED_PROTOCOL
            uvicorn.run("services.api.asgi:app", workers=args.api_workers, **options)
        else:
            app = create_app(settings)
            # uvicorn's own server: the app drains on a stop itself (its lifespan: services.api.drain)
            uvicorn.Server(uvicorn.Config(app, **options)).run(sockets=[sock])
    finally:
        if supervisor is not None:
            supervisor.stop()
        elif embedded is not None:
            embedded.stop()
        # The process ends now. The interpreter's collections at its exit would walk the whole heap
        # (imports, the app): 1 to 2 s of a stop on a busy machine. Frozen objects are left to the
        # kernel, which frees the process's memory at once.
        gc.freeze()
    return 0
