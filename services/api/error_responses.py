"""The one place where errors become HTTP answers: ``{"error": {"code", "message", ...}}``."""

from __future__ import annotations

import structlog
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.api.http import JSONResponse
from services.errors import AppError, ErrorKind

log = structlog.get_logger("tablestream.http")

STATUS: dict[ErrorKind, int] = {
    "malformed": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "too_large": 413,
    "invalid": 422,
    "rule": 422,
}


def error_body(code: str, message: str, **details: object) -> dict[str, object]:
    return {"error": {"code": code, "message": message, **details}}


async def app_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AppError)
    return JSONResponse(error_body(exc.code, exc.message, **exc.details), status_code=STATUS[exc.kind])


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


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled_error", path=request.url.path)
    body = error_body("internal_error", "The server failed; the request was not applied.")
    return JSONResponse(body, status_code=500)


EXCEPTION_HANDLERS = {AppError: app_error, HTTPException: http_error, Exception: server_error}
