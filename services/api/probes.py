"""The probes: ``/healthz`` (readiness) and ``/livez`` (liveness), answered ahead of the middleware
and the router, from a readiness checked at most every ``ready_check_seconds``.

A load balancer or an orchestrator asks every few seconds from every node, and a busy deployment
many times a second: a probe should cost about what a bare endpoint does. ``ProbeLane`` wraps the
whole app: a ``GET`` of either path is answered at once (with the request id echoed, as every
answer is), everything else goes on to the app. ``Readiness`` checks Redis and the projection lag
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
from starlette.types import ASGIApp, Receive, Scope, Send

from services.api.raw_responses import send_json
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


class ProbeLane:
    """Answers ``GET /healthz`` and ``GET /livez`` ahead of the other middleware and the router (whose
    per-request work would cost a probe several times a bare endpoint); passes everything else on.
    The first middleware of the app: it finds the readiness in the app's context once the app has
    started (until then ``/healthz`` goes on to the app)."""

    PATHS = ("/healthz", "/livez")

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or scope["method"] != "GET" or path not in self.PATHS:
            await self.app(scope, receive, send)
            return
        if path == "/livez":
            answer = ALIVE
        else:
            context = getattr(scope["app"].state, "context", None)
            if context is None:
                await self.app(scope, receive, send)
                return
            answer = await context.readiness.answer()
        await respond(scope, send, answer)


async def respond(scope: Scope, send: Send, answer: Answer) -> None:
    extra = () if answer.ready else ((b"retry-after", RETRY_AFTER),)
    await send_json(scope, send, answer.status, answer.body, extra)
