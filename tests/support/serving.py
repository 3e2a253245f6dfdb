"""``tablestream`` as an operator runs it, for the tests of the runbooks and of ``serve``.

:func:`serving` starts ``tablestream serve --data-dir`` in a real process (what those tests are
about) and yields it once it answers. :func:`tablestream` runs any command in a real process;
:func:`tablestream_here` runs ``export-all``, ``import-all`` and ``rebuild-all`` in this process:
``tablestream <command> ...`` does nothing but exec ``python -m workers.backup <command> ...``
(``services.cli.backup``), so the same ``main`` with the same arguments prints the same lines and
returns the same status, without two interpreters importing the project (seconds of CPU each on a
loaded machine). A test that needs the command's process itself (the exec, a lock held by another
process) uses :func:`tablestream`.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from services.cli import backup as cli_backup
from services.store.embedded import free_port
from tests.support.waiting import wait_until

DEADLINE = 30.0
"""Seconds (scaled by the load) for ``serve`` to answer, and for what a test waits on from it."""
ENV = {**os.environ, "TABLESTREAM_LOG_LEVEL": "warning"}


def tablestream(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The ``tablestream`` command line in its own process, as an operator types it."""
    return subprocess.run(
        [sys.executable, "-m", "services.cli", *args],
        env=dict(ENV if env is None else env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def tablestream_here(*args: str) -> subprocess.CompletedProcess[str]:
    """``tablestream export-all|import-all|rebuild-all ...`` run in this process: the ``main`` of the
    module the command execs, with the arguments it passes on; its exit status, stdout and stderr
    (an argument error's exit 2 and message included), as :func:`tablestream` gives them."""
    from workers import backup

    argv = list(args)
    assert argv[0] in cli_backup.COMMANDS, argv
    assert cli_backup.backup_command(argv) == [sys.executable, "-m", backup.__name__, *argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = backup.main(argv)
        except SystemExit as exited:  # argparse's refusal of the command line
            status = exited.code if isinstance(exited.code, int) else 2
    return subprocess.CompletedProcess(["tablestream", *argv], status, out.getvalue(), err.getvalue())


@contextmanager
def serving(
    data_dir: Path, env: Mapping[str, str] | None = None
) -> Iterator[tuple[httpx.Client, str, subprocess.Popen[str]]]:
    """``tablestream serve --data-dir`` in its own process, answering: a client of its API, the Redis
    URL its first line printed, and the process (stopped with SIGTERM at the end if still running).
    ``env`` replaces :data:`ENV` (the test's settings)."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(ENV if env is None else env),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(
            lambda: httpx.get(f"{base}/healthz", timeout=1).status_code == 200,
            DEADLINE,
            "serve's API",
            details=lambda: f"serve exited with {process.returncode}" if process.poll() is not None else "",
            ignoring=(httpx.TransportError,),
        )
        assert process.stdout is not None
        printed = process.stdout.readline()  # "Tablestream is serving on <base>  (Redis: <url>)"
        found = re.search(r"\(Redis: (redis://\S+)\)", printed)
        assert found, printed
        with httpx.Client(base_url=base, timeout=10) as client:
            yield client, found.group(1), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def stop(process: subprocess.Popen[str]) -> None:
    """SIGTERM, as an operator's Ctrl-C or ``systemctl stop``: it must exit cleanly."""
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
