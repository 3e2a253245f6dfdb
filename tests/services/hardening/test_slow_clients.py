"""Slow clients against a real ``tablestream serve`` whose timeouts are set low: headers that never
finish (or trickle) are cut after the header timeout, a trickling body gets 408 ``body_timeout`` in
the JSON error shape, and 200 slow connections do not keep a normal client from being served."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.services.hardening.real_stack import Stack, served
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.timeout(120)]

TIMEOUT_S = 1.0  # header and body timeouts of the server under test
BOUND_S = 5.0  # generous on a shared 2-core machine: cut after the timeout, long before this
SLOW = 200
BODY = b'{"game": "skull", "players": 3}'
JSON = {"Content-Type": "application/json"}
POST_HEAD = (
    b"POST /games HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n" % len(BODY)
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    settings = {
        "header_timeout_seconds": str(TIMEOUT_S),
        "body_timeout_seconds": str(TIMEOUT_S),
        "create_rate": "1000/second",
    }
    with served(tmp_path_factory.mktemp("slow"), **settings) as running:
        yield running


@pytest.fixture(scope="module")
def workers_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """``serve --api-workers 2``: API processes that uvicorn spawns, each with the header timeout."""
    with served(
        tmp_path_factory.mktemp("slow-workers"), "--api-workers", "2", header_timeout_seconds="1"
    ) as running:
        yield running


def _connect(stack: Stack) -> socket.socket:
    port = int(stack.base.rsplit(":", 1)[1])
    return socket.create_connection(("127.0.0.1", port), timeout=BOUND_S + 5)


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


class Trickle(threading.Thread):
    """Sends ``data`` a byte at a time, one every ``pace`` seconds, until done or the peer closes."""

    def __init__(self, sock: socket.socket, data: bytes, pace: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.sock, self.data, self.pace = sock, data, pace
        self.finished = threading.Event()

    def run(self) -> None:
        for byte in self.data:
            try:
                self.sock.send(bytes([byte]))
            except OSError:
                return  # the server closed the connection: what the test waits for
            if self.finished.wait(self.pace):  # the client's pace, not a synchronisation
                return


def test_a_connection_whose_headers_never_finish_is_closed_after_the_header_timeout(stack: Stack) -> None:
    with _connect(stack) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")  # never the blank line
        started = time.monotonic()
        answer = _read_all(sock)
        waited = time.monotonic() - started
    print(f"\n[slow] incomplete headers closed after {waited:.2f} s")
    assert answer == b""
    assert TIMEOUT_S * 0.9 <= waited < BOUND_S


def test_each_api_process_of_several_closes_a_connection_whose_headers_never_finish(
    workers_stack: Stack,
) -> None:
    for _ in range(4):  # the kernel hands the connections to either process
        with _connect(workers_stack) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n")
            started = time.monotonic()
            answer = _read_all(sock)
            waited = time.monotonic() - started
        assert answer == b""
        assert TIMEOUT_S * 0.9 <= waited < BOUND_S


def test_headers_trickling_a_byte_at_a_time_are_cut_at_the_header_timeout_however_long_they_go_on(
    stack: Stack,
) -> None:
    endless = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n" + b"X-Slow: " + b"a" * 1000
    with _connect(stack) as sock:
        trickle = Trickle(sock, endless)
        started = time.monotonic()
        trickle.start()
        answer = _read_all(sock)
        waited = time.monotonic() - started
        trickle.finished.set()
        trickle.join(5)
    print(f"\n[slow] trickling headers closed after {waited:.2f} s")
    assert answer == b""
    assert TIMEOUT_S * 0.9 <= waited < BOUND_S


def test_a_body_trickling_in_gets_408_body_timeout_in_the_json_error_shape(stack: Stack) -> None:
    with _connect(stack) as sock:
        sock.sendall(POST_HEAD)
        trickle = Trickle(sock, BODY, pace=0.25)  # 31 bytes: 7.75 s, far past the body timeout
        started = time.monotonic()
        trickle.start()
        first = sock.recv(65536)  # the answer comes at the body timeout ...
        waited = time.monotonic() - started
        answer = first + _read_all(sock)  # ... and the connection is closed after it
        trickle.finished.set()
        trickle.join(5)
    print(f"\n[slow] trickling body answered after {waited:.2f} s")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:300]
    assert b"content-type: application/json" in head.lower()
    error = json.loads(body)["error"]
    assert error["code"] == "body_timeout"
    assert error["message"] == f"The request body did not arrive within {TIMEOUT_S:g} s."
    assert TIMEOUT_S * 0.9 <= waited < BOUND_S


def test_200_slow_connections_do_not_keep_a_normal_client_from_being_served(stack: Stack) -> None:
    slow = []
    try:
        for index in range(SLOW):  # half stall in their headers, half in their body
            sock = _connect(stack)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" if index % 2 else POST_HEAD + BODY[:5])
            slow.append(sock)
        latencies, statuses = [], []
        with httpx.Client(base_url=stack.base, timeout=BOUND_S) as client:
            for _ in range(10):
                for method, path in (("GET", "/healthz"), ("POST", "/games"), ("GET", "/games?limit=5")):
                    started = time.perf_counter()
                    response = client.request(
                        method, path, content=BODY if method == "POST" else None, headers=JSON
                    )
                    latencies.append(time.perf_counter() - started)
                    statuses.append(response.status_code)
        answers = {sock: b"" for sock in slow}
        closed: set[socket.socket] = set()
        for sock in slow:
            sock.setblocking(False)

        def all_cut() -> bool:
            for sock in set(slow) - closed:
                try:
                    while chunk := sock.recv(65536):
                        answers[sock] += chunk
                    closed.add(sock)  # end of stream: the server closed it
                except BlockingIOError:
                    pass
            return len(closed) == SLOW

        wait_until(all_cut, BOUND_S + 10, "the server to cut every slow connection")
    finally:
        for sock in slow:
            sock.close()
    worst = max(latencies)
    print(f"\n[slow] {SLOW} slow connections; a normal client: {len(statuses)} requests, worst {worst:.3f} s")
    assert set(statuses) <= {200, 201}, sorted(set(statuses))
    assert worst < BOUND_S
    stalled_bodies = [answers[sock] for index, sock in enumerate(slow) if not index % 2]
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in stalled_bodies)
    assert all(answers[sock] == b"" for index, sock in enumerate(slow) if index % 2)
