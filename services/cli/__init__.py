"""``tablestream``: serve, worker, demo, verify."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from services.config import Settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tablestream", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve", help="run the HTTP API (and, without --redis-url, Redis and a worker)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--redis-url", default=None, help="use this Redis; default: a private embedded server")
    serve.add_argument("--data-dir", type=Path, default=None, help="where the embedded server keeps its data")
    serve.add_argument("--api-workers", type=int, default=1, help="API processes sharing the port")

    worker = commands.add_parser("worker", help="run a pool of RQ projection workers and the lag sweeper")
    worker.add_argument("--redis-url", required=True)
    worker.add_argument("--workers", type=int, default=2)
    worker.add_argument("--sweep-seconds", type=float, default=5.0)

    demo = commands.add_parser("demo", help="bots play complete games through the real HTTP API")
    demo.add_argument("--game", choices=["skull", "six-nimmt", "skull-king", "all"], default="skull")
    demo.add_argument("--games", type=int, default=1)
    demo.add_argument("--players", type=int, default=None)
    demo.add_argument("--seed", type=int, default=None, help="the bots' choices; omit for a random one")
    demo.add_argument("--redis-url", default=None)

    commands.add_parser("verify", help="check an exported game offline (no Redis, no server)", add_help=False)

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["verify"]:
        from services.verify import main as verify_main

        return verify_main(argv[1:])  # its own flags: FILE [--receipt VERSION:HASH ...]
    args = parser.parse_args(argv)
    if args.command == "serve":
        return run_serve(args)
    if args.command == "worker":
        return run_worker(args)
    from services.demo import run_demo

    return run_demo(args)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from services.app import create_app
    from services.embedded import EmbeddedRedis
    from services.logging import configure

    configure()
    settings = Settings.from_env()
    url = args.redis_url or settings.redis_url
    embedded = worker = None
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
            uvicorn.run("services.asgi:app", workers=args.api_workers, **server)
        else:
            uvicorn.run(create_app(settings), **server)
    finally:
        if worker is not None:
            stop_process(worker)
        if embedded is not None:
            embedded.stop()
    return 0


def spawn_worker(url: str, workers: int) -> subprocess.Popen[bytes]:
    """A projection worker in its own process (RQ workers own their process's signals)."""
    from services.embedded import die_with_parent

    return subprocess.Popen(
        [sys.executable, "-m", "services.cli", "worker", "--redis-url", url, "--workers", str(workers)],
        preexec_fn=die_with_parent,  # a killed serve or demo leaves no worker behind
    )


def stop_process(process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_worker(args: argparse.Namespace) -> int:
    import redis
    from rq import SimpleWorker
    from rq.serializers import JSONSerializer
    from rq.worker_pool import WorkerPool

    from services.logging import configure
    from services.store_sync import SyncEventStore
    from workers.projector import QUEUE_NAME, projection_queue
    from workers.sweeper import Sweeper

    configure()
    connection = redis.Redis.from_url(args.redis_url)
    queue = projection_queue(connection)
    sweeper = Sweeper(SyncEventStore(connection), queue, args.sweep_seconds)
    sweeper.start()
    try:
        if args.workers <= 1:
            SimpleWorker([queue], connection=connection, serializer=JSONSerializer).work(
                logging_level="WARNING"
            )
        else:
            pool = WorkerPool(
                [QUEUE_NAME],
                connection=connection,
                num_workers=args.workers,
                worker_class=SimpleWorker,
                serializer=JSONSerializer,
            )
            pool.start(logging_level="WARNING")
    finally:
        sweeper.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
