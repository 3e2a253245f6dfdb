"""With JSON logs on (``services.structured_logging``), the log stream of a worker process and of
``tablestream serve`` is one JSON object per line: the records of the stdlib loggers (RQ's workers
and pool, uvicorn's) are rendered by structlog's renderer like the service's own, where RQ and
uvicorn used to write plain-text lines of their own into it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import redis
from rq import Worker

from services.store.embedded import EmbeddedRedis, free_port
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.redis]


def json_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of the file as a JSON object; a line that is not one fails the test, named."""
    records = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise AssertionError(f"{path.name} line {number} is not JSON: {line!r}") from None
        assert isinstance(record, dict), (number, line)
        records.append(record)
    return records


def loggers(path: Path) -> set[str]:
    text = path.read_text()
    return {str(r.get("logger", "")) for r in (json.loads(x) for x in text.splitlines() if x.startswith("{"))}


def stop(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    return process.wait(30)


def test_a_worker_process_logs_one_json_object_per_line_rq_s_records_included(
    real_redis: redis.Redis, redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "services.cli",
                "worker",
                "--redis-url",
                redis_server.url,
                "--workers",
                "2",
            ],
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "TABLESTREAM_LOG_LEVEL": "info"},
        )
        try:
            # the pool's own stop handler is in place once its workers (two, and the reviews') registered
            wait_until(lambda: len(Worker.all(connection=real_redis)) == 3, 30, "the pool's workers")
            wait_until(lambda: any(n.startswith("rq.") for n in loggers(err)), 30, "RQ's workers to log")
        finally:
            assert stop(process) == 0
    records = json_lines(err)
    assert any(r.get("event") == "worker_started" for r in records)
    assert any(str(r.get("logger", "")).startswith("rq.") and r.get("level") for r in records)
    assert json_lines(out) == []  # RQ's own handler wrote its lines to stdout


def test_serve_logs_one_json_object_per_line_uvicorn_s_and_its_worker_s_records_included(
    tmp_path: Path,
) -> None:
    port = free_port()
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    env = {**os.environ, "TABLESTREAM_DATA_DIR": str(tmp_path / "data"), "TABLESTREAM_LOG_LEVEL": "info"}
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "serve", "--port", str(port)],
            stdout=stdout,
            stderr=stderr,
            env=env,
        )
        try:
            wait_until(lambda: any(n.startswith("rq.") for n in loggers(err)), 60, "serve's worker to log")

            def refused_garbage() -> bool:  # uvicorn logs a warning of its own for a bad request
                with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                    sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
                    sock.recv(1024)
                return "uvicorn.error" in loggers(err)

            wait_until(refused_garbage, 30, "uvicorn's warning of a request it cannot parse")
        finally:
            assert stop(process) == 0
    records = json_lines(err)
    assert {"uvicorn.error"} <= {str(r.get("logger")) for r in records}
    assert any(str(r.get("logger", "")).startswith("rq.") for r in records)
    banner = out.read_text().splitlines()  # for a person at a terminal: where it serves, where the data is
    assert [line.split()[0] for line in banner] == ["Tablestream", "Data:"], banner
