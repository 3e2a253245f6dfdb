"""The probes: ``/healthz`` (readiness) and ``/livez`` (liveness), answered ahead of the middleware
and the router, from a readiness checked at most every ``ready_check_seconds``.

A load balancer or an orchestrator asks every few seconds from every node, and a busy deployment
many times a second: a probe should cost about what a bare endpoint does. ``services.api.lanes``
answers a ``GET`` of either path ahead of every layer of the app, with the headers every answer
carries. ``Readiness`` checks that Redis answers once per period, and every probe within the period
gets that answer; concurrent probes of an expired answer share one check. With
``ready_check_seconds`` 0, every probe checks.

Readiness says whether this process can serve a request: the game store answers and it is not
shutting down. It does not read the workers' progress: a process is as able to take commands while
the projections lag, and a lag judged by every API process alike would take every one of them out
of the load balancer at once (a frozen worker pool emptied the whole Service). A lag, a stalled
queue and a worker gone are alerts instead (deploy/prometheus/alerts.yaml, docs/alerts.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
import msgspec

from services.store.connection import UNAVAILABLE

HEALTH_TIMEOUT = 2.0  # seconds a check gives Redis before calling it unreachable
RETRY_AFTER = b"2"

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    body: bytes

    @property
    def ready(self) -> bool:
        return self.status == 200


READY = Answer(200, b'{"status":"ok"}')
ALIVE = Answer(200, b'{"status":"alive"}')


def not_ready(reason: str, message: str, **details: object) -> Answer:
    return Answer(503, _encode({"status": "not_ready", "reason": reason, "message": message, **details}))


class Readiness:
    """Redis answers and the process is not shutting down: 200, else 503 with the reason. ``ping``
    is the store's; ``closing`` says the process is shutting down."""

    def __init__(
        self,
        ping: Callable[[], Awaitable[None]],
        closing: Callable[[], bool],
        check_seconds: float,
    ) -> None:
        self._ping, self._closing = ping, closing
        self._period = check_seconds
        self._answer: Answer | None = None
        self._expires = 0.0
        self._check: asyncio.Task[Answer] | None = None

    async def answer(self) -> Answer:
        if self._closing():
            return not_ready("shutting_down", "This process is shutting down.")
        if self._answer is not None and time.monotonic() < self._expires:
            return self._answer
        if self._check is None:
            self._check = asyncio.ensure_future(self._checked())
        check = self._check
        try:
            return await asyncio.shield(check)
        finally:
            if check.done() and self._check is check:
                self._check = None

    async def _checked(self) -> Answer:
        answer = await self._run_check()
        self._answer, self._expires = answer, time.monotonic() + self._period
        return answer

    async def _run_check(self) -> Answer:
        try:
            with anyio.fail_after(HEALTH_TIMEOUT):
                await self._ping()
        except (TimeoutError, *UNAVAILABLE):
            return not_ready("redis_unreachable", "The game store does not answer.")
        return READY
