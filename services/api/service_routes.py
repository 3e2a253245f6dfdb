"""The service's own operations: readiness and liveness (``services.api.probes`` answers them ahead of
the router), this contract as ``/openapi.json``, and the operator's ``/metrics``."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from services.api.answers import Alive, NotReady, Ok
from services.api.context import app_context
from services.api.contract import TOKEN, Answer, Operation, errors
from services.api.http import JSONResponse
from services.api.metrics_route import metrics_endpoint
from services.api.probes import RETRY_AFTER


async def healthz(request: Request) -> Response:
    """Readiness: 200 when Redis answers and the process is not shutting down, else 503 with the
    reason (``services.api.probes``: a ``GET`` is answered there, before the middleware). A load
    balancer sends traffic only to a ready process. The workers' progress is not read: a lag is an
    alert (docs/alerts.md), not a reason to take every API process out of the load balancer."""
    answer = await app_context(request).readiness.answer()
    headers = None if answer.ready else {"Retry-After": RETRY_AFTER.decode()}
    return Response(answer.body, status_code=answer.status, headers=headers, media_type="application/json")


async def livez(request: Request) -> JSONResponse:
    """Liveness: the process answers HTTP (whatever Redis and the workers do); restart it only when
    this fails."""
    return JSONResponse({"status": "alive"})


async def openapi(request: Request) -> JSONResponse:
    """The document ``services.api.app`` keeps (``services.api.openapi``: generated from every
    operation's declaration, these included)."""
    return JSONResponse(request.app.state.openapi())


operations = [
    Operation(
        "GET",
        "/openapi.json",
        openapi,
        answers={200: Answer("The OpenAPI 3.1 document, generated from the routes' declarations")},
        summary="This contract: every operation, its parameters, bodies, answers and errors",
    ),
    Operation(
        "GET",
        "/healthz",
        healthz,
        answers={
            200: Answer("ok", Ok),
            503: Answer(
                "Not ready: the reason is in the body",
                NotReady,
                headers={"Retry-After": "Seconds to wait before retrying"},
            ),
        },
        summary="Readiness: Redis answers and the process is not shutting down (the workers' progress is "
        "not read: a lag is an alert, not a reason to leave the load balancer)",
    ),
    Operation(
        "GET",
        "/livez",
        livez,
        answers={200: Answer("alive", Alive)},
        summary="Liveness: the process answers",
    ),
    Operation(
        "GET",
        "/metrics",
        metrics_endpoint,
        answers={200: Answer("Prometheus text exposition format", str, media_type="text/plain")},
        summary="Prometheus metrics (operator only): the processes' counters and histograms, and the "
        "queues, workers and tables read from Redis at the scrape",
        security=TOKEN,
        errors=errors(
            401, 403, s401="operator_only: no token", s403="operator_only: not the operator's token"
        ),
    ),
]
