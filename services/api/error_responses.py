"""The one place where errors become HTTP answers: ``{"error": {"code", "message", ...}}``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route

from services.api.http import JSONResponse
from services.errors import AppError, ErrorKind, RetryLaterError
from services.store.connection import UNAVAILABLE, NotReplicated, is_unavailable

log = structlog.get_logger("tablestream.http")

STATUS: dict[ErrorKind, int] = {
    "malformed": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "timeout": 408,
    "conflict": 409,
    "too_large": 413,
    "unsupported_media_type": 415,
    "invalid": 422,
    "rule": 422,
    "too_many": 429,
    "unavailable": 503,
}

REDIS_RETRY_AFTER = 2  # seconds: a restarting Redis is usually back by then


def error_body(code: str, message: str, **details: object) -> dict[str, object]:
    return {"error": {"code": code, "message": message, **details}}


async def app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    headers = {"Retry-After": str(exc.retry_after)} if isinstance(exc, RetryLaterError) else None
    body = error_body(exc.code, exc.message, **exc.details)
    return JSONResponse(body, status_code=STATUS[exc.kind], headers=headers)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own: an unknown endpoint or method (a 405 names every allowed method in ``Allow``)."""
    assert isinstance(exc, HTTPException)
    code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
    message = "No such endpoint." if exc.status_code == 404 else str(exc.detail)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = allowed_methods(request)
        headers["Allow"] = ", ".join(allowed)
        message = f"This endpoint accepts {', '.join(allowed)} only."
    return JSONResponse(error_body(code, message), status_code=exc.status_code, headers=headers)


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of this path accepts (a path may be split over several routes)."""
    methods: set[str] = set()
    for route in getattr(request.app, "routes", []):
        if isinstance(route, Route) and route.methods and route.path_regex.match(request.url.path):
            methods |= route.methods
    return sorted(methods)


async def redis_unavailable(request: Request, exc: Exception) -> Response:
    """Redis is down, restarting, paused or every pooled connection stayed busy: 503, never 500."""
    log.warning("redis_unavailable", path=request.url.path, error=f"{type(exc).__name__}: {exc}")
    body = error_body("unavailable", "The game store is not reachable right now; try again shortly.")
    return JSONResponse(body, status_code=503, headers={"Retry-After": str(REDIS_RETRY_AFTER)})


async def not_replicated(request: Request, exc: Exception) -> Response:
    """An append reached the primary but not the replicas the deployment waits for (its
    ``TABLESTREAM_APPEND_*`` settings): no receipt yet; the same command id retried gets it."""
    log.warning("append_not_replicated", path=request.url.path, error=str(exc))
    body = error_body(
        "not_replicated",
        "Your move reached the game store but is not yet confirmed on its replicas; "
        "send it again with the same command_id to get its receipt.",
    )
    return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})


async def client_gone(request: Request, exc: Exception) -> Response:
    """The client hung up while sending its body: one quiet line; nobody reads the answer."""
    log.info("client_disconnected", path=request.url.path)
    return JSONResponse(error_body("client_disconnected", "The client went away."), status_code=400)


async def server_error(request: Request, exc: Exception) -> Response:
    if is_unavailable(exc):  # a dying node's connection error of another class, or a group of them
        return await redis_unavailable(request, exc)
    if isinstance(exc, NotReplicated):
        return await not_replicated(request, exc)
    log.exception("unhandled_error", path=request.url.path)
    body = error_body("internal_error", "The server failed; the request was not applied.")
    return JSONResponse(body, status_code=500)


Handler = Callable[[Request, Exception], Awaitable[Response]]

EXCEPTION_HANDLERS: dict[type[Exception], Handler] = {
    AppError: app_error,
    HTTPException: http_error,
    ClientDisconnect: client_gone,
    NotReplicated: not_replicated,
    **{unavailable: redis_unavailable for unavailable in UNAVAILABLE},
    Exception: server_error,
}
