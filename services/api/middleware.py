"""Request middleware: the request and game ids on every log line of a request; the drain's bound
on every request."""

from __future__ import annotations

import re
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.api.drain import Drain
from services.api.error_responses import error_body
from services.api.http import JSONResponse
from services.api.raw_responses import new_request_id

log = structlog.get_logger("tablestream.http")

_GAME_PATH = re.compile(r"^/games/([^/]+)")


class RequestContext:
    """Pure ASGI (not BaseHTTPMiddleware, which breaks contextvars): binds request and game ids to
    every log line of the request and echoes the request id in ``X-Request-ID``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or new_request_id()
        structlog.contextvars.clear_contextvars()
        context: dict[str, Any] = {"request_id": request_id}
        if match := _GAME_PATH.match(scope["path"]):
            context["game_id"] = match.group(1)
        structlog.contextvars.bind_contextvars(**context)

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        await self.app(scope, receive, send_with_id)


class DrainGuard:
    """Bounds every request by the drain's deadline (``services.api.drain``): a request still running
    when it passes is cancelled here, answered 503 ``shutting_down`` if it had not started its
    response, so uvicorn never has to cancel it (a plain-text 500 and a traceback)."""

    def __init__(self, app: ASGIApp, drain: Drain) -> None:
        self.app = app
        self.drain = drain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        with self.drain.request() as cancel:
            await self.app(scope, receive, send_tracked)
        if not cancel.cancelled_caught:
            return
        log.warning("request_cut_by_drain", path=scope["path"], response_started=started)
        if not started:
            body = error_body("shutting_down", "This server is shutting down; send the request again.")
            await JSONResponse(body, status_code=503, headers={"Retry-After": "1"})(scope, receive, send)
