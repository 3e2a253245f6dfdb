"""One JSON line per request, and (tracing on) the request's server span: ``RequestLog``.

The line (``event: "request"``, logger ``tablestream.http``) has the method, the route template
(``/games/{game_id}/commands``, never the raw path: no ids, no query), the status (0: no answer was
sent, the client went away or the drain cut the request), the duration, the
class of the client's address (``loopback``, ``private``, ``public``, ``unknown``: never the
address), the request id (the client's ``X-Request-ID`` when it is a plain id, else a new one, echoed
in the answer), the game id of a ``/games/{id}`` path, what a command's route bound (its id, seat and
outcome: ``services.table.commands``) and, tracing on, the trace and span ids of the request's span.

Nothing else: no header, no query, no body, no token. The probes (``/healthz``, ``/livez``, answered
ahead of this by ``services.api.probes``) are not logged: a load balancer asks every few seconds.

The hot routes (a command, a view, a live stream: ``HOT_ROUTES``) answered below 400 within
``SLOW_MS`` log their line at ``debug``: they are most of the traffic, and counted by route and status
class in ``tablestream_http_requests_total`` (``services.api.metrics_route``) and, for commands, by
outcome in ``tablestream_commands_total``. Their refusals, errors and slow answers, and every other
route's answers, log at ``info``. At ``info`` a quiet line is not even built.

The request and game ids are bound here for every log line of the request (the request's context:
``structlog.contextvars``), and the request id is echoed in the answer's ``X-Request-ID``.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
import time
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.api.raw_responses import PLAIN_ID, new_request_id
from services.api.view_lane import VIEW_PATH
from services.table import tracing

log = structlog.get_logger("tablestream.http")

_GAME_PATH = re.compile(r"^/games/([^/]+)")
HOT_ROUTES = frozenset({"/games/{game_id}/commands", "/games/{game_id}/view", "/games/{game_id}/live"})
"""Routes whose answers below 400 within ``SLOW_MS`` log at debug (see the module)."""
SLOW_MS = 1000.0
KEPT_VIEW_ROUTE = "/games/{game_id}/view"  # answered by services.api.view_lane, ahead of the router
COMMAND_ROUTE = "/games/{game_id}/commands"  # answered by services.api.command_lane, ahead of the router
COMMAND_PATH = re.compile(r"/games/([A-Za-z0-9_-]{1,64})/commands")  # the game ids of http.GAME_ID
UNMATCHED = "unmatched"  # no route (a 404): the raw path is the client's, not a template


@functools.lru_cache(maxsize=4096)
def address_class(host: str | None) -> str:
    """``loopback``, ``private`` (RFC 1918, unique local, link local), ``public`` or ``unknown``."""
    if not host:
        return "unknown"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "unknown"
    if address.is_loopback:
        return "loopback"
    if address.is_private or address.is_link_local:
        return "private"
    return "public"


def route_template(scope: Scope) -> str:
    """The template of the route that answered (Starlette notes it in ``scope["route"]``)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    if isinstance(path, str):
        return path
    if scope.get("method") == "GET" and VIEW_PATH.fullmatch(scope.get("path", "")):
        return KEPT_VIEW_ROUTE
    if scope.get("method") == "POST" and COMMAND_PATH.fullmatch(scope.get("path", "")):
        return COMMAND_ROUTE
    return UNMATCHED


def plain_request_id(scope: Scope) -> str:
    """The client's ``X-Request-ID`` if it is a plain id (letters, digits, ``._:-``, at most 64),
    else a new one, put in the request's headers so every layer below echoes the same id."""
    headers = scope["headers"]
    for name, value in headers:
        if name == b"x-request-id":
            if PLAIN_ID.fullmatch(value):
                return str(value.decode("ascii"))
            break
    request_id = new_request_id()
    scope["headers"] = [
        *((name, value) for name, value in headers if name != b"x-request-id"),
        (b"x-request-id", request_id.encode()),
    ]
    return request_id


def bind_request(scope: Scope, request_id: str) -> None:
    """The request's context for every log line of it: its id, and the game id of a game's path."""
    structlog.contextvars.clear_contextvars()
    if match := _GAME_PATH.match(scope["path"]):
        structlog.contextvars.bind_contextvars(request_id=request_id, game_id=match.group(1))
    else:
        structlog.contextvars.bind_contextvars(request_id=request_id)


class RequestLog:
    """Pure ASGI, inside the probes' lane and outside everything else (the kept views' lane
    included): binds the request's context, echoes its id, logs the request's line when it ends,
    whatever way it ends, and, tracing on, runs it in an ``http.server`` span named
    ``METHOD /template``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = plain_request_id(scope)
        echoed = (b"x-request-id", request_id.encode())
        bind_request(scope, request_id)
        status = 0

        async def send_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = message.get("headers") or []
                if not any(name == b"x-request-id" for name, _ in headers):  # lanes set their own
                    message["headers"] = [*headers, echoed]
            await send(message)

        if not tracing.ON:
            try:
                await self.app(scope, receive, send_status)
            finally:
                self.log(scope, status, started, None)
            return
        await self.traced(scope, receive, send_status, started, lambda: status)

    async def traced(self, scope: Scope, receive: Receive, send: Send, started: float, status: Any) -> None:
        from opentelemetry import propagate, trace

        headers = {
            name.decode("latin-1"): value.decode("latin-1")
            for name, value in scope["headers"]
            if name in (b"traceparent", b"tracestate", b"baggage")
        }
        method = scope["method"]
        with tracing.tracer().start_as_current_span(
            method,
            context=propagate.extract(headers) if headers else None,
            kind=trace.SpanKind.SERVER,
            attributes={"http.request.method": method, "url.scheme": scope.get("scheme", "http")},
        ) as span:
            ids = tracing.ids()
            try:
                await self.app(scope, receive, send)
            finally:
                route = route_template(scope)
                code = status()
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                if code:  # 0: no answer was sent (the client went away, the drain cut it)
                    span.set_attribute("http.response.status_code", code)
                if code >= 500 or not code:
                    span.set_status(trace.StatusCode.ERROR)
                self.log(scope, code, started, ids)

    @staticmethod
    def log(scope: Scope, status: int, started: float, ids: tuple[str, str] | None) -> None:
        duration_ms = (time.perf_counter() - started) * 1000
        route = route_template(scope)
        quiet = route in HOT_ROUTES and 0 < status < 400 and duration_ms < SLOW_MS
        if quiet and not log.is_enabled_for(logging.DEBUG):
            return
        client = scope.get("client")
        fields: dict[str, Any] = {
            "method": scope["method"],
            "route": route,
            "status": status,
            "duration_ms": round(duration_ms, 3),
            "client": address_class(client[0] if client else None),
        }
        if ids is not None:
            fields["trace_id"], fields["span_id"] = ids
        if quiet:
            log.debug("request", **fields)
        else:
            log.info("request", **fields)
