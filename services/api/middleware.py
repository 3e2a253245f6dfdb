"""Request middleware: the request and game ids on every log line of a request."""

from __future__ import annotations

import re
import uuid
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

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
        request_id = headers.get(b"x-request-id", b"").decode("latin-1")[:64] or uuid.uuid4().hex
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
