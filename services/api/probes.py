"""The probes: ``/healthz`` (readiness) and ``/livez`` (liveness), answered ahead of the middleware
and the router, from a readiness checked at most every ``ready_check_seconds``.

A load balancer or an orchestrator asks every few seconds from every node, and a busy deployment
many times a second: a probe should cost about what a bare endpoint does. ``services.api.lanes``
answers a ``GET`` of either path ahead of every layer of the app, with the headers every answer
carries. ``Readiness`` checks Redis and the projection lag
once per period, and every probe within the period gets that answer; concurrent probes of an
expired answer share one check. With ``ready_check_seconds`` 0, every probe checks.
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
    """Redis answers and no projection lags past ``max_lag_seconds``: 200, else 503 with the reason.
    ``ping`` and ``lag_ms`` are the store's; ``closing`` says the process is shutting down."""

    def __init__(
        self,
        ping: Callable[[], Awaitable[None]],
        lag_ms: Callable[[], Awaitable[int]],
        closing: Callable[[], bool],
        max_lag_seconds: float,
        check_seconds: float,
    ) -> None:
        self._ping, self._lag_ms, self._closing = ping, lag_ms, closing
        self._max_lag = max_lag_seconds
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
                lag_ms = await self._lag_ms()
        except (TimeoutError, *UNAVAILABLE):
            return not_ready("redis_unreachable", "The game store does not answer.")
        lag = lag_ms / 1000
        if lag > self._max_lag:
            return not_ready(
                "projections_lagging", f"A projection has lagged for {lag:.1f} s.", lag_seconds=round(lag, 1)
            )
        return READY
