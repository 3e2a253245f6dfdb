"""Draining on shutdown: every request still running ends by itself before the server gives up.

uvicorn's graceful shutdown waits ``timeout_graceful_shutdown`` for the requests in flight and then
cancels them: the client gets uvicorn's plain-text 500 and the log a traceback. ``Drain`` makes the
app finish first. When ``begin()`` is called (``app.state.begin_shutdown``, from the signal handler):

- a request body still on its way gets ``BODY_GRACE`` more seconds (not the whole body timeout),
  then the request is answered 503 ``shutting_down`` with ``Retry-After``: a client that trickles
  its body holds the drain for a second, not ``body_timeout_seconds``;
- every request, body received or not, must be done within ``shutdown_seconds`` minus
  ``MARGIN``; one that is not (a Redis that stopped answering) is cancelled by the app's own
  ``DrainGuard`` (``services.api.middleware``), which answers 503 ``shutting_down`` if nothing was
  sent yet, before uvicorn's deadline.

Live streams end at once (``services.store.live_updates.LiveHub.begin_close``).

A request a lane answers ahead of the app (``services.api.lanes``: a command) is bounded the same
way at less cost: its task is noted in a set (``lane``) instead of getting a cancel scope, and the
drain cancels every task still in it when the requests' deadline passes (``cut``: the lane then
answers 503 ``shutting_down`` if it had not answered).

Deadlines are anyio cancel scopes on the event loop's clock; ``begin()`` runs on the loop.
"""

from __future__ import annotations

import asyncio
import math
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

import anyio

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
BODY_GRACE = 1.0  # seconds a body still arriving gets once the drain has begun
MARGIN = 0.5  # seconds between the app's own deadline and uvicorn's


def on_stop_signals(begin: Callable[[], None]) -> Callable[[], None]:
    """Have SIGTERM and SIGINT call ``begin`` before the handler in place (the server's: uvicorn's
    graceful shutdown), in the main thread of a process whose server runs the app there; returns what
    puts the handlers back. Elsewhere (a test client's thread) nothing. Called from the app's
    lifespan, so that every server process drains (``uvicorn --workers N``'s too: its processes run
    uvicorn's own server, which knew nothing of the app's drain, and a stop waited the whole
    ``shutdown_seconds`` on the live streams before it cut them)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    before: dict[int, Any] = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def chained(signum: int, frame: FrameType | None) -> None:
        begin()
        then: Any = before[signum]
        if callable(then):
            then(signum, frame)

    for signum in STOP_SIGNALS:
        signal.signal(signum, chained)

    def restore() -> None:
        for signum, handler in before.items():
            if signal.getsignal(signum) is chained:  # unless the server put its own back already
                signal.signal(signum, handler)

    return restore


class Drain:
    """The shutdown deadlines of one app (see the module docstring)."""

    def __init__(self, shutdown_seconds: float, body_grace: float = BODY_GRACE) -> None:
        self.request_grace = max(0.1, shutdown_seconds - MARGIN)
        self.body_grace = min(body_grace, self.request_grace)
        self.draining = False
        self._requests_end = math.inf
        self._bodies_end = math.inf
        self._requests: set[anyio.CancelScope] = set()
        self._bodies: set[anyio.CancelScope] = set()
        self._lanes: set[asyncio.Task[object]] = set()
        self._cut: set[asyncio.Task[object]] = set()

    def begin(self) -> None:
        """Shorten the deadline of every request and body in flight, and of those still to come."""
        if self.draining:
            return
        self.draining = True
        now = anyio.current_time()
        self._requests_end = now + self.request_grace
        self._bodies_end = now + self.body_grace
        for scope in self._requests:
            scope.deadline = min(scope.deadline, self._requests_end)
        for scope in self._bodies:
            scope.deadline = min(scope.deadline, self._bodies_end)
        asyncio.get_running_loop().call_at(self._requests_end, self._cut_lanes)

    def _cut_lanes(self) -> None:
        for task in self._lanes:
            self._cut.add(task)
            task.cancel()

    @contextmanager
    def lane(self) -> Iterator[None]:
        """A lane's request: its task is cancelled when the requests' deadline passes (``was_cut``
        then says so)."""
        task: asyncio.Task[object] | None = asyncio.current_task()
        assert task is not None
        self._lanes.add(task)
        try:
            yield
        finally:
            self._lanes.discard(task)

    def was_cut(self) -> bool:
        """Whether the drain cancelled this task's lane request (once: the mark is taken); the task's
        cancellation is withdrawn, so that the lane may still answer."""
        task = asyncio.current_task()
        if task is None or task not in self._cut:
            return False
        self._cut.discard(task)
        task.uncancel()
        return True

    @contextmanager
    def request(self) -> Iterator[anyio.CancelScope]:
        """The cancel scope of one request: unbounded until the drain begins."""
        with self._tracked(self._requests, self._requests_end) as scope:
            yield scope

    @contextmanager
    def body(self, seconds: float) -> Iterator[anyio.CancelScope]:
        """The cancel scope of receiving one body: ``seconds``, or less once the drain begins."""
        with self._tracked(self._bodies, min(anyio.current_time() + seconds, self._bodies_end)) as scope:
            yield scope

    @contextmanager
    def _tracked(self, scopes: set[anyio.CancelScope], deadline: float) -> Iterator[anyio.CancelScope]:
        scope = anyio.CancelScope(deadline=deadline)
        scopes.add(scope)
        try:
            with scope:
                yield scope
        finally:
            scopes.discard(scope)
