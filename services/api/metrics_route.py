"""``GET /metrics`` for Prometheus (operator-only), and the request metrics of every answer.

The text is ``services.telemetry.metrics.render``: every process's counters and histograms (multiprocess
mode),
plus what is read from Redis at the scrape (queue depth and the age of each queue's oldest job, live
workers, tables by status, the oldest unsettled game, games handed over, and how long ago a projection
consumer last read them: ``CLIENT LIST`` of the indexes' server). It needs the operator's
admin token (``TABLESTREAM_ADMIN_TOKEN``) as ``Authorization: Bearer <token>``: without one 401
``operator_only``, with another 403 ``operator_only`` (and 403 while no admin token is configured).
Prometheus sends it with its scrape config's ``authorization`` (docs/operations.md).

``RequestMetrics`` wraps the whole app: each answer counts by route template (the route's path with
its parameters, ``/games/{game_id}/commands``, never the raw path), method and status class, and its
time from the request to the start of the answer (for a live stream: its headers) goes to the route's
latency histogram. Every route's series exist at 0 from the start (``route_methods``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.api.context import app_context
from services.api.http import bearer
from services.api.view_lane import VIEW_PATH
from services.errors import ForbiddenError, UnauthorizedError
from services.store.queue import queue_figures
from services.telemetry import metrics

PAGE = "/{page}"  # the pages of the web client share one endpoint (the shell)
UNMATCHED = "unmatched"
LANES = {"/healthz": "/healthz", "/livez": "/livez"}  # answered ahead of the router (probes)


async def metrics_endpoint(request: Request) -> Response:
    context = app_context(request)
    token = bearer(request)
    if token is None:
        raise UnauthorizedError(
            "operator_only", "The metrics need the operator's token: 'Authorization: Bearer <token>'."
        )
    if not context.callers.is_operator(token):
        raise ForbiddenError("operator_only", "Only the operator's token may read the metrics.")
    store = context.store
    queues = await anyio.to_thread.run_sync(queue_figures, request.app.state.queue_client)
    figures = metrics.Figures(
        queue_depth=queues.depth,
        workers=queues.workers,
        tables=await store.table_counts(),
        oldest_unsettled_seconds=await store.oldest_dirty_age_ms() / 1000,
        handed_over=await store.handed_over(),
        oldest_job_seconds=queues.oldest_job_seconds,
        handover_consumer_idle_seconds=await store.handover_consumer_idle(),
    )
    body = await anyio.to_thread.run_sync(metrics.render, figures)
    return Response(body, media_type=metrics.CONTENT_TYPE, headers={"Cache-Control": "no-store"})


def route_templates(routes: Iterable[BaseRoute]) -> dict[object, str]:
    """Each endpoint's route template (an endpoint of several routes: ``/{page}``)."""
    templates: dict[object, str] = {}
    for route in routes:
        if isinstance(route, Route):
            endpoint, path = route.endpoint, route.path
        elif isinstance(route, Mount):
            endpoint, path = route.app, route.path
        else:
            continue
        templates[endpoint] = PAGE if endpoint in templates and templates[endpoint] != path else path
    return templates


def route_methods(routes: Iterable[BaseRoute]) -> set[tuple[str, str]]:
    """Every route template with each method it answers (``HEAD`` with ``GET``), and the probes."""
    templates = route_templates(routes)
    pairs = {(template, "GET") for template in LANES.values()}
    for route in routes:
        if isinstance(route, Route) and route.methods:
            pairs.update((templates[route.endpoint], method) for method in route.methods if method != "HEAD")
    return pairs


class RequestMetrics:
    """Counts and times every HTTP answer (see the module); the outermost layer of the app."""

    def __init__(self, app: ASGIApp, templates: dict[object, str]) -> None:
        self.app = app
        self.templates = templates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def send_timed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                metrics.request(self.template(scope), scope["method"], status, time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, send_timed)
        except Exception:
            if status == 0:  # the error middleware's 500 went out through it, else nothing did
                metrics.request(self.template(scope), scope["method"], 500, time.perf_counter() - started)
            raise

    def template(self, scope: Scope) -> str:
        endpoint = scope.get("endpoint")
        if endpoint is not None:
            return self.templates.get(endpoint, UNMATCHED)
        path = scope["path"]
        if path in LANES:
            return LANES[path]
        if VIEW_PATH.fullmatch(path):
            return "/games/{game_id}/view"
        return UNMATCHED
