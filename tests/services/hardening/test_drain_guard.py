"""The drain's deadlines in the app (``services.api.drain``): once the drain begins, a request still
running is answered 503 ``shutting_down`` by the app itself before the server's own deadline, a body
still arriving gets the short body grace, and nothing is bounded before the drain."""

from __future__ import annotations

import time

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from services.api.drain import Drain
from services.api.middleware import DrainGuard


def app_with(drain: Drain, hang: anyio.Event, entered: anyio.Event) -> Starlette:
    async def stuck(request: Request) -> PlainTextResponse:
        entered.set()
        await hang.wait()  # a request waiting on something that never answers
        return PlainTextResponse("late")

    async def quick(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    return Starlette(
        routes=[Route("/stuck", stuck), Route("/quick", quick)],
        middleware=[Middleware(DrainGuard, drain=drain)],
    )


@pytest.mark.anyio
async def test_a_request_still_running_past_the_drain_deadline_is_answered_503_shutting_down() -> None:
    drain = Drain(shutdown_seconds=0.8)  # the app's deadline: 0.3 s after the drain begins
    hang, entered = anyio.Event(), anyio.Event()
    transport = httpx.ASGITransport(app=app_with(drain, hang, entered))
    answers: list[httpx.Response] = []
    async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
        assert (await client.get("/quick")).text == "ok"  # nothing is bounded before the drain

        async def call() -> None:
            answers.append(await client.get("/stuck"))

        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await entered.wait()
                began = time.monotonic()
                drain.begin()
        waited = time.monotonic() - began
    (answer,) = answers
    assert answer.status_code == 503
    assert answer.headers["retry-after"] == "1"
    assert answer.json()["error"]["code"] == "shutting_down"
    assert 0.2 <= waited < 2.0


@pytest.mark.anyio
async def test_a_body_still_arriving_when_the_drain_begins_gets_the_body_grace_not_the_body_timeout() -> None:
    drain = Drain(shutdown_seconds=10, body_grace=0.2)
    outcome: list[bool] = []

    async def receive() -> None:
        with drain.body(30) as scope:
            await anyio.sleep_forever()  # the body never comes
        outcome.append(scope.cancelled_caught)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(receive)
            await anyio.wait_all_tasks_blocked()
            drain.begin()
    assert outcome == [True]
    with drain.body(30) as late:  # a body started after the drain begins gets the grace at most
        assert late.deadline <= anyio.current_time() + 0.2
