"""The Starlette application: routes, request context, errors as JSON, the connected parts."""

from __future__ import annotations

import re
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
import redis
import redis.asyncio as aioredis
import structlog
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.audit_routes import routes as audit_routes
from services.config import Settings
from services.errors import ApiError
from services.handler import CommandHandler
from services.http import JSONResponse
from services.keys import game_keys
from services.live import live
from services.openapi import openapi_document
from services.routes import routes as game_routes
from services.state import Services
from services.store import EventStore
from services.tokens import TokenStore
from workers.projector import enqueue_poke, projection_queue

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


async def api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return JSONResponse(exc.body(), status_code=exc.status)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    message = "No such endpoint." if exc.status_code == 404 else str(exc.detail)
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=exc.status_code)


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled_error", path=request.url.path)
    body = {"error": {"code": "internal_error", "message": "The server failed; the request was not applied."}}
    return JSONResponse(body, status_code=500)


async def healthz(request: Request) -> JSONResponse:
    await request.app.state.ts.redis.ping()
    return JSONResponse({"status": "ok"})


async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(openapi_document())


Connect = Callable[[], tuple[aioredis.Redis, redis.Redis]]


def connect_to(url: str | None) -> Connect:
    def connect() -> tuple[aioredis.Redis, redis.Redis]:
        target = url or "redis://127.0.0.1:6379"
        return aioredis.Redis.from_url(target), redis.Redis.from_url(target)

    return connect


def create_app(settings: Settings, connect: Connect | None = None) -> Starlette:
    """The app. ``connect`` makes its (async, sync) Redis clients inside the app's own event loop;
    by default from ``settings.redis_url`` (tests hand in fakeredis)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        aclient, sclient = (connect or connect_to(settings.redis_url))()
        queue = projection_queue(sclient)

        async def poke(game_id: str) -> None:
            await aclient.publish(game_keys(game_id).live, b"appended")
            await anyio.to_thread.run_sync(enqueue_poke, queue, game_id)

        store = EventStore(aclient)
        tokens = TokenStore(aclient)
        app.state.ts = Services(settings, aclient, store, tokens, CommandHandler(store, tokens, poke))
        try:
            yield
        finally:
            await aclient.aclose()
            sclient.close()

    routes = [
        *game_routes,
        Route("/games/{game_id}/live", live, methods=["GET"]),
        *audit_routes,
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(RequestContext)],
        exception_handlers={ApiError: api_error, HTTPException: http_error, Exception: server_error},
        lifespan=lifespan,
    )
