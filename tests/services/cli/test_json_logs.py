"""With JSON logs on (``services.telemetry.structured_logging``), the log stream of ``tablestream serve`` and
of
its worker process is one JSON object per line: the records of the stdlib loggers (RQ's workers
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

from services.store.embedded import free_port
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


def test_serve_and_its_worker_process_log_one_json_object_per_line_uvicorn_s_and_rq_s_records_included(
    tmp_path: Path,
) -> None:
    """``serve``'s worker process is the pool ``tablestream worker`` execs (``python -m workers.pool``,
    ``services.cli.worker``), with its stderr and stdout: one serve shows both processes' streams."""
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
    assert any(r.get("event") == "worker_started" for r in records)  # the worker process's own record
    assert any(str(r.get("logger", "")).startswith("rq.") and r.get("level") for r in records)
    # for a person at a terminal: where it serves, where the data is; nothing else (RQ's own handler
    # wrote its lines to stdout, the worker's and serve's alike)
    banner = out.read_text().splitlines()
    assert [line.split()[0] for line in banner] == ["Tablestream", "Data:"], banner
