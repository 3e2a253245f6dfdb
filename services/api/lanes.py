"""The lanes: the app's most frequent answers, given ahead of every layer of the app.

Probes (``GET /healthz``, ``GET /livez``: ``services.api.probes``), seat and spectator views
(``GET /games/{id}/view`` with no query: ``services.api.view_lane``) and commands (``POST
/games/{id}/commands``: ``services.api.command_lane``, which documents its own terms) are most of
the traffic, and
each layer of the app (the request metrics, the security headers, the error middleware, the request
log, the private tables' gate, the router) costs a Python call and a closure per message. ``Lanes``
wraps the whole app and answers them itself, doing for its own answers what those layers would
have done, and nothing more:

- the security headers (``SecurityHeaders.headers_for``: those the app's guard adds) and the
  request id (the client's plain ``X-Request-ID``, else a new one);
- the request metrics (``services.telemetry.metrics.request``: the route template, the method, the status
  class and the time to the answer);
- the request log's line (``RequestLog.log``): a lane's answer is a hot route's success, whose line
  is at ``debug`` (at ``info`` when slow), and not even built at ``info``; with tracing on, views
  take the whole way, where the request's span is made.

A view goes through the lane only when it is a public table's (one the process already knows to be
public: ``Invitations.known_public``) and the caller is known without I/O; the lane gives the kept
view or one read from Redis (``kept_view``), and on any refusal or error leaves the request to the
app, which meets it again and answers it as it always does. Probes are answered once the app has
started (before that, by its routes).
"""

from __future__ import annotations

import logging
import time

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from services.api.command_lane import CommandLane
from services.api.context import AppContext
from services.api.invite_gate import known_public
from services.api.middleware import RequestGuard, SecurityHeaders
from services.api.probes import ALIVE, RETRY_AFTER, Answer
from services.api.raw_responses import request_id, send_json
from services.api.request_log import COMMAND_PATH, KEPT_VIEW_ROUTE, SLOW_MS, RequestLog, bind_request
from services.api.request_log import log as request_log
from services.api.view_lane import VIEW_PATH, kept_view
from services.table import tracing
from services.telemetry import metrics

PROBES = {"/healthz": "/healthz", "/livez": "/livez"}  # path: route template


class Lanes:
    """Pure ASGI, the outermost layer of ``app`` (``services.api.app.GuardedStarlette``)."""

    def __init__(
        self, inner: ASGIApp, app: Starlette, guard: SecurityHeaders, public_origin: str = ""
    ) -> None:
        self.inner = inner
        self.app = app
        self.headers = guard.headers_for  # the headers the app's answers get from its guard
        self.commands = CommandLane(RequestGuard(inner, public_origin), self.headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        context: AppContext | None
        if scope["type"] == "http" and scope["method"] == "POST":
            context = getattr(self.app.state, "context", None)
            if (
                context is not None
                and not context.drain.draining
                and not tracing.ON
                and (match := COMMAND_PATH.fullmatch(scope["path"])) is not None
                and known_public(self.app.state, context, match.group(1))
            ):
                scope["app"] = self.app  # as Starlette sets it: the request's app and its state
                left = await self.commands(context, match.group(1), scope, receive, send)
                if left is None:
                    return
                receive = left
        elif scope["type"] == "http" and scope["method"] == "GET":
            context = getattr(self.app.state, "context", None)
            if context is not None:
                path = scope["path"]
                if path in PROBES and await self.probe(context, scope, send, path):
                    return
                if (
                    not scope["query_string"]
                    and (match := VIEW_PATH.fullmatch(path)) is not None
                    and await self.view(context, match.group(1), scope, send)
                ):
                    return
        await self.inner(scope, receive, send)

    async def probe(self, context: AppContext, scope: Scope, send: Send, path: str) -> bool:
        """Whether the lane answered the probe (``False``: an unforeseen error, which the app meets
        again and answers as any other, a 500 with every header)."""
        started = time.perf_counter()
        try:
            answer: Answer = ALIVE if path == "/livez" else await context.readiness.answer()
        except Exception:
            return False
        extra = self.headers(scope)
        if not answer.ready:
            extra = (*extra, (b"retry-after", RETRY_AFTER))
        metrics.request(PROBES[path], "GET", answer.status, time.perf_counter() - started)
        await send_json(scope, send, answer.status, answer.body, extra)
        return True

    async def view(self, context: AppContext, game_id: str, scope: Scope, send: Send) -> bool:
        """Whether the lane answered the view (``False``: the app answers it)."""
        if context.drain.draining or tracing.ON or not known_public(self.app.state, context, game_id):
            return False
        started = time.perf_counter()
        try:
            body = await kept_view(context, game_id, Request(scope))
        except Exception:  # the app meets it again, and answers it as it always does
            return False
        if body is None:
            return False
        seconds = time.perf_counter() - started
        metrics.request(KEPT_VIEW_ROUTE, "GET", 200, seconds)
        echoed = request_id(scope)
        await send_json(scope, send, 200, body, self.headers(scope), echoed)
        if seconds * 1000 >= SLOW_MS or request_log.is_enabled_for(logging.DEBUG):
            bind_request(scope, echoed.decode())  # the line the request log writes for this answer
            RequestLog.log(scope, 200, started, None)
        return True
