"""Stopping a busy ``tablestream serve`` (embedded Redis, a worker): Ctrl-C as a terminal sends it
(SIGINT to serve's whole process group) and SIGTERM as a supervisor sends it. With a live stream
open, clients hammering the API and a request in flight, serve exits 0 within a bound, prints no
traceback, answers no 500, finishes the request in flight, answers 503 ``shutting_down`` to one whose
body stalls (within the drain's body grace, not the body timeout), ends the live stream cleanly and
leaves neither its Redis nor its worker behind."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.services.hardening.real_stack import Stack, served
from tests.support.waiting import scaled, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.timeout(120)]

DRAIN_BOUND_S = 10.0
FAST = {
    "create_rate": "1000/second",
    "join_rate": "1000/second",
    "command_rate": "1000/second",
    "max_waiting_tables_per_address": "100000",
    "max_waiting_tables_per_network": "100000",
    "max_waiting_tables_new_account": "100000",
}
BODY = b'{"game": "skull", "players": 3}'
JSON = {"Content-Type": "application/json"}


class LiveClient(threading.Thread):
    """Reads one live stream to its end: ``ended`` when the server closed it cleanly."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.messages = 0
        self.ended = False
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with httpx.stream("GET", self.url, timeout=httpx.Timeout(5, read=60)) as response:
                assert response.status_code == 200, response.status_code
                for line in response.iter_lines():
                    if line.startswith("id:"):
                        self.messages += 1
            self.ended = True
        except BaseException as exc:  # reported by the test
            self.error = exc


class Hammer(threading.Thread):
    """Creates tables and reads a view in a loop until stopped; the server's statuses are kept."""

    def __init__(self, base: str, game_id: str) -> None:
        super().__init__(daemon=True)
        self.base, self.game_id = base, game_id
        self.statuses: list[int] = []
        self.refused = 0  # connections refused or closed once serve stopped listening
        self.stop = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.base, timeout=10) as client:
            while not self.stop.is_set():
                try:
                    self.statuses.append(client.post("/games", content=BODY, headers=JSON).status_code)
                    self.statuses.append(client.get(f"/games/{self.game_id}/view").status_code)
                except httpx.TransportError:
                    self.refused += 1
                    self.stop.wait(0.02)  # pacing of a client retrying a refused connection


def _in_flight_posts(stack: Stack, count: int) -> list[socket.socket]:
    """``POST /games`` requests whose headers and first ten bytes of body are sent; the server is
    processing them (their headers are parsed) once a later request on another connection is
    answered (the event loop reads sockets in the order their data came)."""
    port = int(stack.base.rsplit(":", 1)[1])
    head = (
        b"POST /games HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n" % len(BODY)
    )
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=DRAIN_BOUND_S)
        sock.sendall(head + BODY[:10])
        socks.append(sock)
    assert httpx.get(f"{stack.base}/livez", timeout=5).status_code == 200
    return socks


def _response_of(sock: socket.socket) -> bytes:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def _ctrl_c(stack: Stack) -> None:
    os.killpg(stack.process.pid, signal.SIGINT)  # what a terminal does: the whole foreground group


def _sigterm(stack: Stack) -> None:
    stack.process.send_signal(signal.SIGTERM)


@pytest.mark.parametrize(
    ("stop", "api_workers"),
    [(_ctrl_c, 1), (_sigterm, 1), (_sigterm, 2)],
    ids=["ctrl-c", "sigterm", "sigterm-two-api-processes"],
)
def test_stopping_a_busy_serve_drains_requests_ends_live_streams_and_stops_its_children_promptly(
    tmp_path: Path, stop: Callable[[Stack], None], api_workers: int
) -> None:
    """With two API processes (uvicorn's own server in each), the app drains all the same: there a
    stop waited the whole ``shutdown_seconds`` on the live streams and then cut them."""
    with served(tmp_path, "--api-workers", str(api_workers), new_session=True, **FAST) as stack:
        redis_pid, worker_pid = stack.redis_pid(), stack.worker_pid()
        assert redis_pid is not None and worker_pid is not None
        game_id = httpx.post(f"{stack.base}/games", content=BODY, headers=JSON, timeout=10).json()["game_id"]
        live = LiveClient(f"{stack.base}/games/{game_id}/live")
        live.start()
        hammers = [Hammer(stack.base, game_id) for _ in range(3)]
        for hammer in hammers:
            hammer.start()
        wait_until(lambda: live.messages >= 1, 20, "the live stream's first message")
        wait_until(lambda: all(len(h.statuses) >= 4 for h in hammers), 20, "the clients to be served")
        finishing, stalled = _in_flight_posts(stack, 2)

        started = time.monotonic()
        stop(stack)
        live.join(DRAIN_BOUND_S)
        assert live.ended, live.error  # ended at once by the server, not cut by the drain's end
        finishing.sendall(BODY[10:])  # the rest of the body, after the drain began
        answer = _response_of(finishing)
        cut = _response_of(stalled)  # the rest never comes: cut after the drain's body grace
        finishing.close()
        stalled.close()
        returncode = stack.process.wait(DRAIN_BOUND_S + 20)
        drained = time.monotonic() - started
        for hammer in hammers:
            hammer.stop.set()
            hammer.join(15)
    print(f"\n[drain] {stop.__name__}: serve exited {returncode} in {drained:.2f} s")
    log = (tmp_path / "serve.log").read_text()
    assert returncode == 0, log[-3000:]
    assert drained < DRAIN_BOUND_S, log[-3000:]
    assert "Traceback" not in log, log[-3000:]
    assert answer.startswith(b"HTTP/1.1 201"), answer[:500]
    assert cut.startswith(b"HTTP/1.1 503"), cut[:500]
    assert b"retry-after: 1" in cut.lower() and b'"code":"shutting_down"' in cut
    statuses = [status for hammer in hammers for status in hammer.statuses]
    assert statuses and all(status < 500 for status in statuses), sorted(set(statuses))
    assert _gone(redis_pid) and _gone(worker_pid)


STOP_BOUND_S = 2.0  # README's bound for a stop of serve on a quiet machine


def test_serve_with_strong_bots_playing_stops_on_sigterm_within_its_documented_bound(tmp_path: Path) -> None:
    """Three tables of strong bots keep the worker's bot lane busy when SIGTERM comes: the API
    drains, the worker pool ends as soon as its workers have (RQ's pool looked once a second), and
    serve's interpreter does not walk its heap at exit: 0.7 s beside other work (2.4 to 2.5 s
    before), where the operator's drill saw 15 to 19 s. The bound is stretched by the machine's
    load, never past 8 s."""
    with served(tmp_path, **FAST) as stack:
        worker_pid = stack.worker_pid()
        assert worker_pid is not None
        games = []
        for game in ("skull", "six-nimmt", "skull-king"):
            created = httpx.post(f"{stack.base}/games", json={"game": game, "players": 4}, timeout=10).json()
            headers = {"Authorization": f"Bearer {created['host_token']}"}
            seated = httpx.post(
                f"{stack.base}/games/{created['game_id']}/bots", json={"level": "strong"}, headers=headers
            )
            assert seated.status_code == 200, seated.text
            games.append(created["game_id"])

        def bots_moving() -> bool:
            views = [httpx.get(f"{stack.base}/games/{g}/view", timeout=5).json() for g in games]
            return all(view["version"] >= 6 for view in views)

        wait_until(bots_moving, 30, "the bots to play a few moves")
        started = time.monotonic()
        stack.process.send_signal(signal.SIGTERM)
        returncode = stack.process.wait(30)
        stopped = time.monotonic() - started
        bound = min(scaled(STOP_BOUND_S), 8.0)
    print(
        f"\n[stop] serve with strong bots playing: exit {returncode} in {stopped:.2f} s, bound {bound:.1f} s"
    )
    log = (tmp_path / "serve.log").read_text()
    assert returncode == 0 and "Traceback" not in log, log[-3000:]
    assert stopped < bound, log[-3000:]
    assert _gone(worker_pid)
