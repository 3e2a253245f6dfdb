"""``tablestream serve [--host] [--port] [--redis-url] [--data-dir] [--api-workers]``."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import uvicorn

from services.api.app import create_app
from services.cli.processes import spawn_worker, stop_process
from services.config import Settings
from services.store.embedded import EmbeddedRedis
from services.structured_logging import configure_logging


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument(
        "--redis-url", default=None, help="use this Redis; default: a private embedded server"
    )
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="where the embedded server keeps its data"
    )
    parser.add_argument("--api-workers", type=int, default=1, help="API processes sharing the port")


def run(args: argparse.Namespace) -> int:
    configure_logging()
    settings = Settings.from_env()
    url = args.redis_url or settings.redis_url
    embedded: EmbeddedRedis | None = None
    worker: subprocess.Popen[bytes] | None = None
    if url is None:
        data_dir = args.data_dir or settings.data_dir
        embedded = EmbeddedRedis(Path(data_dir) / "redis", durable=True)  # started and answering
        url = embedded.url
        worker = spawn_worker(url, workers=1)
    settings = replace(settings, redis_url=url)
    print(f"Tablestream is serving on http://{args.host}:{args.port}  (Redis: {url})", flush=True)
    # uvicorn shuts down gracefully on SIGTERM/SIGINT, then re-raises the signal; a handler of our own
    # receives it instead of dying, so that the worker and the embedded Redis are stopped too.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: None)
    try:
        server: dict[str, Any] = {
            "host": args.host,
            "port": args.port,
            "loop": "uvloop",
            "http": "httptools",
            "log_level": "warning",
            "timeout_graceful_shutdown": 10,  # live streams of running games never end by themselves
        }
        if args.api_workers > 1:
            os.environ["TABLESTREAM_REDIS_URL"] = url
            uvicorn.run("services.api.asgi:app", workers=args.api_workers, **server)
        else:
            uvicorn.run(create_app(settings), **server)
    finally:
        if worker is not None:
            stop_process(worker)
        if embedded is not None:
            embedded.stop()
    return 0
