"""A real server (``tablestream serve`` on its embedded Redis, with its projection worker) and a real
headless Chromium driven by Playwright. Chromium is Debian's ``/usr/bin/chromium`` (CI installs
it); Playwright never downloads a browser of its own here."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.support.waiting import ms, wait_until

CHROMIUM = Path(os.environ.get("TABLESTREAM_CHROMIUM", "/usr/bin/chromium"))
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
STARTUP_SECONDS = 60.0
EXPECT_SECONDS = 10.0

if not CHROMIUM.exists():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path | None = None  # what the server printed: its Redis URL among it


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = _free_port()
    data_dir = tmp_path_factory.mktemp("tablestream-data")
    log = (data_dir / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "serve", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=Path(__file__).resolve().parents[2],
        env={
            **os.environ,
            "TABLESTREAM_BOT_PACE_MS": "250",  # paced bots, short: the moves are seen
            # every test's player is 127.0.0.1: the per-address caps would count the whole suite as one
            "TABLESTREAM_MAX_WAITING_TABLES_PER_ADDRESS": "100000",
            "TABLESTREAM_MAX_WAITING_TABLES_PER_NETWORK": "100000",
            "TABLESTREAM_MAX_WAITING_TABLES_NEW_ACCOUNT": "100000",
            "TABLESTREAM_REGISTER_RATE": "100000/day",
            "TABLESTREAM_LOGIN_RATE": "100000/minute",
            "TABLESTREAM_CHAT_RATE": "100000/minute",  # the chat tests' messages, all from 127.0.0.1
            "TABLESTREAM_LOG_CHECKPOINT_SECONDS": "1",  # the public log's checkpoints, soon after a game
            # A test's client never has its idle connection closed under it: a request sent just as the
            # server closes it (5 s idle, 10 s without headers) is reset, and where a browser sends it
            # again, Playwright's request context fails with ECONNRESET (seen beside a loaded machine).
            "TABLESTREAM_KEEP_ALIVE_SECONDS": "3600",
            "TABLESTREAM_HEADER_TIMEOUT_SECONDS": "3600",
        },
    )
    url = f"http://127.0.0.1:{port}"

    def healthy() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {(data_dir / 'server.log').read_text()[-2000:]}")
        try:
            return httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200
        except httpx.HTTPError:
            return False

    try:
        wait_until(healthy, STARTUP_SECONDS, "the server to answer /healthz")
        yield Server(url, process, data_dir / "server.log")
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    # Module scope: Playwright's sync API runs an event loop in this thread while it is open, which
    # the anyio tests of later modules could not share.
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def pages_closed(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every page a test opened is closed when it ends: the module's browser goes on, and an open
    page goes on drawing and following its table's live updates, at a cost to every later test."""
    yield
    if "browser" in request.fixturenames:
        for context in request.getfixturevalue("browser").contexts:
            context.close()


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture(autouse=True)
def no_script_errors() -> Iterator[None]:
    """Every browser test also fails on an uncaught error in the page's scripts."""
    from tests.browser.play import PAGE_ERRORS

    PAGE_ERRORS.clear()
    # Assertions on the page wait longer on a loaded machine (Playwright's own default is 5 s).
    sync_api.expect.set_options(timeout=ms(EXPECT_SECONDS))
    yield
    assert not PAGE_ERRORS, PAGE_ERRORS


SERVER_LOG_LINES = 60


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[object]:
    """A failed browser test's report ends with the last lines its server printed: a stall on a
    loaded CI machine is read from them, as it cannot be watched."""
    report = yield
    served = getattr(item, "funcargs", {}).get("server")
    if report.failed and isinstance(served, Server) and served.log is not None and served.log.exists():
        lines = served.log.read_text(errors="replace").splitlines()[-SERVER_LOG_LINES:]
        report.sections.append((f"the server's last {len(lines)} lines", "\n".join(lines)))
    return report
