"""One socket write per response (``services.api.joined_writes``, ``services.api.protocol``).

The transport wrapper alone, on a recording transport; then uvicorn (uvloop) serving a small app
with its own httptools protocol and with ``OneWriteProtocol``, side by side: the same bytes reach
the client for every kind of exchange (keep-alive, HEAD, 204, 304, errors, ``Connection: close``,
pipelining, 100-continue, a malformed request), each ordinary response in one write of the real
transport instead of two, and a streamed response's parts as they are sent; then the real service
(``local_stack``: uvicorn, the embedded Redis, a worker): a command, a view and a 304 in one write
each, and a live stream that still delivers each new version while it stays open.
"""

from __future__ import annotations

import asyncio
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from services.api.joined_writes import FLUSH_AT, JoinedWrites
from services.api.protocol import OneWriteProtocol
from services.cli.demo import local_stack

DEADLINE = 20.0


# -- the wrapper alone --------------------------------------------------------------------------------


class FakeTransport(asyncio.Transport):
    """Records what reaches it; ``die()`` makes it behave as uvloop's transport whose handle closed."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.events: list[str] = []
        self.closing = False
        self.dead = False
        self.protocol: asyncio.BaseProtocol | None = None

    def write(self, data: Any) -> None:
        if self.dead:
            raise RuntimeError("unable to perform operation: the handler is closed")
        self.writes.append(bytes(data))
        self.events.append("write")

    def write_eof(self) -> None:
        self.events.append("write_eof")

    def can_write_eof(self) -> bool:
        return True

    def close(self) -> None:
        self.closing = True
        self.events.append("close")

    def abort(self) -> None:
        self.closing = True
        self.events.append("abort")

    def is_closing(self) -> bool:
        return self.closing

    def die(self) -> None:
        self.closing = self.dead = True

    def get_write_buffer_size(self) -> int:
        return 7

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 4242)}.get(name, default)

    def pause_reading(self) -> None:
        self.events.append("pause_reading")

    def resume_reading(self) -> None:
        self.events.append("resume_reading")

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self.protocol = protocol

    def get_protocol(self) -> asyncio.BaseProtocol:
        assert self.protocol is not None
        return self.protocol


async def next_turn() -> None:
    """Return after the loop has run what was scheduled before this call (call_soon is FIFO)."""
    turned = asyncio.Event()
    asyncio.get_running_loop().call_soon(turned.set)
    await turned.wait()


def test_writes_of_one_step_reach_the_transport_as_one_write_at_the_next_turn() -> None:
    async def scenario() -> None:
        real = FakeTransport()
        joined = JoinedWrites(real, asyncio.get_running_loop())
        joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
        joined.write(memoryview(b"body"))
        joined.writelines([b"", b"!"])
        assert real.writes == [] and joined.get_write_buffer_size() == 7 + 24
        await next_turn()
        assert real.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody!"] and joined.get_write_buffer_size() == 7
        joined.write(b"event: 2\n\n")  # a later step's write is its own
        await next_turn()
        assert real.writes[1:] == [b"event: 2\n\n"]

    asyncio.run(scenario())


def test_flush_close_and_write_eof_hand_the_kept_bytes_over_first_and_abort_drops_them() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        flushed, closed, shut, aborted = FakeTransport(), FakeTransport(), FakeTransport(), FakeTransport()
        for transport in (flushed, closed, shut, aborted):
            JoinedWrites(transport, loop).write(b"a")  # left to its flush at the next turn
            wrapper = JoinedWrites(transport, loop)
            wrapper.write(b"head ")
            wrapper.write(b"body")
            {flushed: wrapper.flush, closed: wrapper.close, shut: wrapper.write_eof, aborted: wrapper.abort}[
                transport
            ]()
        assert flushed.events == ["write"] and flushed.writes == [b"head body"]
        assert closed.events == ["write", "close"] and closed.writes == [b"head body"]
        assert shut.events == ["write", "write_eof"] and shut.writes == [b"head body"]
        assert aborted.events == ["abort"]
        await next_turn()  # nothing was left behind by the flushed ones; the first writers' "a" follow
        assert flushed.writes[1:] == [b"a"] and shut.writes[1:] == [b"a"] and aborted.writes == [b"a"]

    asyncio.run(scenario())


def test_a_large_join_is_written_at_once_so_flow_control_sees_it() -> None:
    async def scenario() -> None:
        real = FakeTransport()
        joined = JoinedWrites(real, asyncio.get_running_loop())
        joined.write(b"h" * 100)
        joined.write(b"b" * (FLUSH_AT - 100))
        assert real.writes == [b"h" * 100 + b"b" * (FLUSH_AT - 100)]

    asyncio.run(scenario())


def test_writes_after_close_or_write_eof_go_straight_through_as_they_did_without_the_wrapper() -> None:
    async def scenario() -> None:
        real = FakeTransport()
        joined = JoinedWrites(real, asyncio.get_running_loop())
        joined.write_eof()
        joined.write(b"late")
        assert real.writes == [b"late"]
        dead = FakeTransport()
        dead.die()
        with pytest.raises(RuntimeError, match="handler is closed"):
            JoinedWrites(dead, asyncio.get_running_loop()).write(b"to a closed handle")

    asyncio.run(scenario())


def test_bytes_kept_when_the_connection_dies_are_dropped_without_an_error() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        errors: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: errors.append(context))
        real, closed = FakeTransport(), FakeTransport()
        JoinedWrites(real, loop).write(b"kept")
        wrapper = JoinedWrites(closed, loop)
        wrapper.write(b"kept")
        real.die()
        closed.die()
        wrapper.close()
        await next_turn()
        assert real.writes == [] and closed.writes == [] and errors == []

    asyncio.run(scenario())


def test_everything_else_is_the_real_transports() -> None:
    async def scenario() -> None:
        real = FakeTransport()
        joined = JoinedWrites(real, asyncio.get_running_loop())
        protocol = asyncio.Protocol()
        joined.set_protocol(protocol)
        joined.pause_reading()
        joined.resume_reading()
        assert joined.get_protocol() is protocol and joined.transport is real
        assert joined.get_extra_info("peername") == ("127.0.0.1", 4242)
        assert joined.get_extra_info("sslcontext") is None and joined.can_write_eof()
        assert real.events == ["pause_reading", "resume_reading"] and not joined.is_closing()
        joined.close()
        assert joined.is_closing()

    asyncio.run(scenario())


# -- uvicorn's protocol and OneWriteProtocol, side by side ---------------------------------------------


class Recording:
    """The event loop's transport, each write it is given recorded (in the server's thread); an empty
    write is not (the transport returns at once: no syscall)."""

    def __init__(self, transport: asyncio.Transport, writes: list[bytes]) -> None:
        self._transport = transport
        self._writes = writes

    def write(self, data: bytes) -> None:
        if data:
            self._writes.append(bytes(data))
        self._transport.write(data)

    def writelines(self, chunks: list[bytes]) -> None:
        if any(chunks):
            self._writes.append(b"".join(chunks))
        self._transport.writelines(chunks)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def recorded(protocol: type[HttpToolsProtocol]) -> tuple[type[HttpToolsProtocol], list[bytes]]:
    """``protocol`` with the writes reaching the event loop's transport recorded in the list."""
    writes: list[bytes] = []

    class Recorded(protocol):  # type: ignore[valid-type, misc]
        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(Recording(transport, writes))

    return Recorded, writes


STREAM_GATE = threading.Event()


async def plain(request: Request) -> Response:
    return PlainTextResponse("hello")


async def empty(request: Request) -> Response:
    return Response(status_code=204)


async def unchanged(request: Request) -> Response:
    return Response(status_code=304, headers={"ETag": '"v1"'})


async def echo(request: Request) -> Response:
    return Response(await request.body(), media_type="application/octet-stream")


async def boom(request: Request) -> Response:
    raise RuntimeError("a bug in a route")


async def stream(request: Request) -> Response:
    async def parts() -> Any:
        yield b"data: one\n\n"
        await anyio.to_thread.run_sync(STREAM_GATE.wait, DEADLINE)  # the test has read the first part
        yield b"data: two\n\n"

    return StreamingResponse(parts(), media_type="text/event-stream")


SMALL_APP = Starlette(
    routes=[
        Route("/plain", plain),
        Route("/empty", empty),
        Route("/unchanged", unchanged),
        Route("/echo", echo, methods=["POST"]),
        Route("/boom", boom),
        Route("/stream", stream),
    ]
)


@dataclass
class Served:
    port: int
    writes: list[bytes]


@contextmanager
def serving(app: Any, protocol: type[HttpToolsProtocol]) -> Iterator[Served]:
    """uvicorn (uvloop) serving ``app`` with ``protocol`` recorded, in a thread, on a bound socket."""
    recorded_protocol, writes = recorded(protocol)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, loop="uvloop", http=recorded_protocol, log_level="critical", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + DEADLINE
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        threading.Event().wait(0.01)
    try:
        yield Served(sock.getsockname()[1], writes)
    finally:
        server.should_exit = True
        thread.join(DEADLINE)
        sock.close()


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Served]]:
    with serving(SMALL_APP, HttpToolsProtocol) as before, serving(SMALL_APP, OneWriteProtocol) as after:
        yield {"uvicorn": before, "one-write": after}


def read_response(sock: socket.socket, pending: bytearray, head: bool = False) -> bytes:
    """One whole response from ``sock`` (``pending``: bytes already read past the previous one)."""

    def fill(predicate: Any) -> None:
        while not predicate():
            chunk = sock.recv(65536)
            if not chunk:
                return
            pending.extend(chunk)

    fill(lambda: b"\r\n\r\n" in pending)
    end = pending.index(b"\r\n\r\n") + 4
    headers = bytes(pending[:end]).lower()
    status = int(headers.split()[1])
    length = re.search(rb"\r\ncontent-length: (\d+)", headers)
    if head or status in (100, 204, 304):
        pass
    elif length is not None:
        end += int(length.group(1))
        fill(lambda: len(pending) >= end)
    elif b"transfer-encoding: chunked" in headers:
        fill(lambda: pending.find(b"\r\n0\r\n\r\n", end - 2) >= 0)
        end = pending.find(b"\r\n0\r\n\r\n", end - 2) + 7
    else:
        fill(lambda: False)  # to the end of the connection
        end = len(pending)
    response = bytes(pending[:end])
    del pending[:end]
    return response


def closed_by_server(sock: socket.socket, pending: bytearray) -> bool:
    return not pending and sock.recv(65536) == b""


def exchange(served: Served, *steps: tuple[bytes, int]) -> tuple[list[bytes], int, bool]:
    """Each step's request sent on one connection, then its number of responses read; the responses
    (their Date removed), the writes the server made, and whether it closed the connection."""
    served.writes.clear()
    responses: list[bytes] = []
    pending = bytearray()
    with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE) as sock:
        for request, count in steps:
            sock.sendall(request)
            for _ in range(count):
                responses.append(read_response(sock, pending, head=request.startswith(b"HEAD")))
        closed = closed_by_server(sock, pending) if b"close" in request or b"BAD" in request else False
    return [undated(r) for r in responses], len(served.writes), closed


def undated(response: bytes) -> bytes:
    return re.sub(rb"date: [^\r]*\r\n", b"", response)


def get(path: str, *extra: str, method: str = "GET") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: test", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


ORDINARY = [
    (get("/plain"), 1),
    (get("/plain", method="HEAD"), 1),
    (get("/empty"), 1),
    (get("/unchanged", 'If-None-Match: "v1"'), 1),
    (get("/missing"), 1),
    (get("/echo", "Content-Length: 3", method="POST") + b"abc", 1),
]
# uvicorn's own writes for those: the head, then the body unless there is none (HEAD, 204, 304)
UVICORN_WRITES = 2 + 1 + 1 + 1 + 2 + 2


def test_ordinary_answers_are_the_same_bytes_in_one_write_each_instead_of_two(
    servers: dict[str, Served],
) -> None:
    before, before_writes, _ = exchange(servers["uvicorn"], *ORDINARY)
    after, after_writes, _ = exchange(servers["one-write"], *ORDINARY)
    assert after == before
    assert [r.split(b"\r\n", 1)[0] for r in after] == [
        b"HTTP/1.1 200 OK", b"HTTP/1.1 200 OK", b"HTTP/1.1 204 No Content", b"HTTP/1.1 304 Not Modified",
        b"HTTP/1.1 404 Not Found", b"HTTP/1.1 200 OK",
    ]  # fmt: skip
    assert (before_writes, after_writes) == (UVICORN_WRITES, len(ORDINARY))
    assert [undated(w) for w in servers["one-write"].writes] == after  # each response one write, whole


def test_connection_close_pipelining_errors_and_bad_requests_behave_as_before(
    servers: dict[str, Served],
) -> None:
    cases = {
        "close": [(get("/plain", "Connection: close"), 1)],
        "pipelined": [(get("/plain") + get("/empty") + get("/plain", "Connection: close"), 3)],
        "error": [(get("/boom"), 1)],
        "malformed": [(b"BAD REQUEST LINE\r\n\r\n", 1)],
    }
    for name, steps in cases.items():
        before = exchange(servers["uvicorn"], *steps)
        after = exchange(servers["one-write"], *steps)
        assert after[0] == before[0], name
        assert after[2] == before[2], name
        assert after[1] == len(after[0]), name  # one write per response
    assert exchange(servers["one-write"], *cases["close"])[2]  # the server did close it
    assert exchange(servers["one-write"], *cases["error"])[0][0].startswith(b"HTTP/1.1 500 ")
    assert exchange(servers["one-write"], *cases["malformed"])[0][0].startswith(b"HTTP/1.1 400 ")


def test_a_100_continue_is_written_before_the_body_is_sent_then_the_answer_in_one_write(
    servers: dict[str, Served],
) -> None:
    def continued(served: Served) -> tuple[bytes, bytes, int]:
        served.writes.clear()
        pending = bytearray()
        with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE) as sock:
            sock.sendall(get("/echo", "Content-Length: 5", "Expect: 100-continue", method="POST"))
            interim = read_response(sock, pending)  # the server must say so before the body comes
            sock.sendall(b"hello")
            final = read_response(sock, pending)
        return interim, undated(final), len(served.writes)

    before, after = continued(servers["uvicorn"]), continued(servers["one-write"])
    assert after[:2] == before[:2] and after[0] == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert after[1].endswith(b"\r\n\r\nhello")
    assert (before[2], after[2]) == (3, 2)


def test_a_streamed_answer_delivers_each_part_while_it_is_still_open(servers: dict[str, Served]) -> None:
    served = servers["one-write"]
    STREAM_GATE.clear()
    served.writes.clear()
    with socket.create_connection(("127.0.0.1", served.port), timeout=DEADLINE) as sock:
        sock.sendall(get("/stream"))
        received = b""
        while b"data: one" not in received:  # the head and the first part, the response still open
            chunk = sock.recv(65536)
            assert chunk, "the server closed the stream early"
            received += chunk
        assert b"data: two" not in received and len(served.writes) == 1
        STREAM_GATE.set()
        while not received.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            assert chunk, "the server closed the stream early"
            received += chunk
    assert b"data: two" in received and len(served.writes) == 2  # the second part and the last chunk


# -- the real service -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def service() -> Iterator[tuple[str, list[bytes]]]:
    protocol, writes = recorded(OneWriteProtocol)
    with local_stack(http=protocol) as base:
        yield base, writes


def started(client: httpx.Client) -> tuple[str, list[str]]:
    game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
    tokens = [client.post(f"/games/{game_id}/players", json={"name": n}).json()["token"] for n in "ABC"]
    return game_id, tokens


@pytest.mark.redis
def test_a_command_a_view_and_a_304_of_the_service_each_leave_in_one_write(
    service: tuple[str, list[bytes]],
) -> None:
    base, writes = service
    with httpx.Client(base_url=base, timeout=DEADLINE) as client:
        game_id, tokens = started(client)
        auth = {"Authorization": f"Bearer {tokens[1]}"}
        page = client.get("/")
        assert page.status_code == 200 and page.headers["etag"]
        requests: dict[str, Callable[[], httpx.Response]] = {
            "command": lambda: client.post(
                f"/games/{game_id}/commands",
                json={"command_id": "c1", "command": {"type": "place_disc", "disc": "skull"}},
                headers=auth,
            ),
            "view": lambda: client.get(f"/games/{game_id}/view", headers=auth),
            "304": lambda: client.get("/", headers={"If-None-Match": page.headers["etag"]}),
        }
        for name, send in requests.items():
            writes.clear()
            response = send()
            assert response.status_code == {"command": 200, "view": 200, "304": 304}[name], response.text
            assert len(writes) == 1, (name, writes)
            assert writes[0].startswith(b"HTTP/1.1 %d " % response.status_code)
            assert writes[0].endswith(b"\r\n\r\n" + response.content), name  # head and body together


@pytest.mark.redis
def test_a_live_stream_of_the_service_delivers_each_new_version_while_it_stays_open(
    service: tuple[str, list[bytes]],
) -> None:
    base, _ = service
    messages: queue.Queue[int] = queue.Queue()
    with httpx.Client(base_url=base, timeout=DEADLINE) as client:
        game_id, tokens = started(client)

        def listen() -> None:
            auth = {"Authorization": f"Bearer {tokens[0]}"}
            try:
                with (
                    httpx.Client(base_url=base, timeout=DEADLINE) as reader,
                    reader.stream("GET", f"/games/{game_id}/live", headers=auth) as response,
                ):
                    for line in response.iter_lines():
                        if line.startswith("id: "):
                            messages.put(int(line[4:]))
            except httpx.HTTPError:
                return  # the stack stops with this stream open (a running game's never ends)

        threading.Thread(target=listen, daemon=True).start()
        head = messages.get(timeout=DEADLINE)
        for seat in (1, 2):
            body = {"command_id": f"c{seat}", "command": {"type": "place_disc", "disc": "flower"}}
            answer = client.post(
                f"/games/{game_id}/commands", json=body, headers={"Authorization": f"Bearer {tokens[seat]}"}
            )
            version = answer.json()["version"]
            received = [messages.get(timeout=DEADLINE)]  # this version, before the next command is sent
            while received[-1] < version:
                received.append(messages.get(timeout=DEADLINE))
            assert received[-1] == version and received[0] > head
            head = version
