"""The API process of a bench run: the production app, plus bare baseline endpoints under ``/bench/``.

    python -m services.bench.server --redis-url URL --port PORT

``/bench/ping`` (no I/O) and ``/bench/append`` (one EVALSHA optimistic append to one of 1,000
streams) are a minimal Starlette app with no middleware, served by the same uvicorn (uvloop,
httptools, one write a response: ``services.api.protocol``) in the same process, so that
``/healthz``, views and commands are measured against them on equal terms. ``/bench/view-cache``
tells the service's view cache hits and misses and the views it rendered because the projection
was behind (``GET``) and resizes it (``POST ?games=N``), so that
views are measured both kept and read from Redis.
Production never mounts them: only this module knows them.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import redis.asyncio as aioredis
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from services.api.app import create_app
from services.api.protocol import server_options
from services.api.view_cache import ViewCache
from services.operating.config import Settings
from services.table.tracing import configure_tracing
from services.telemetry import metrics
from services.telemetry.structured_logging import configure_logging

BARE_PREFIX = "/bench/"
BASELINE_STREAMS = 1000

# The baseline append: read the stream's version key, check it (ANY skips the check but not the
# reads and writes), add the entry, store the new version. One round trip, like the anchors' script.
BASELINE_APPEND = """
local version = tonumber(redis.call('GET', KEYS[2]) or '0')
if ARGV[1] ~= 'ANY' and tonumber(ARGV[1]) ~= version then
  return redis.error_reply('CONFLICT ' .. version)
end
redis.call('XADD', KEYS[1], '0-' .. (version + 1), 'd', ARGV[2])
redis.call('SET', KEYS[2], version + 1)
return version + 1
"""
PAYLOAD = b"x" * 160  # about one stored event


def bare_app(redis_url: str, service: Starlette | None = None) -> Starlette:
    """A minimal app: no middleware, no context, one Redis client made on first use in the loop;
    ``service``: the app whose view cache ``/bench/view-cache`` shows and resizes."""
    state: dict[str, Any] = {}

    async def view_cache(request: Request) -> JSONResponse:
        assert service is not None
        views: ViewCache = service.state.context.views
        if request.method == "POST":
            views.resize(int(request.query_params["games"]))
        rendered = metrics.metrics().registry.get_sample_value("tablestream_views_rendered_total") or 0.0
        counts = {
            "hits": views.hits,
            "misses": views.misses,
            "games": len(views),
            "capacity": views.capacity,
            "rendered": int(rendered),  # views rendered because the projection was behind
        }
        return JSONResponse(counts)

    async def ping(request: Request) -> PlainTextResponse:
        return PlainTextResponse("ok")

    async def append(request: Request) -> PlainTextResponse:
        if "script" not in state:
            client = aioredis.Redis.from_url(redis_url)
            state["script"] = client.register_script(BASELINE_APPEND)
        stream = random.randrange(BASELINE_STREAMS)
        keys = [f"bench:{{{stream}}}:events", f"bench:{{{stream}}}:version"]
        version = await state["script"](keys=keys, args=["ANY", PAYLOAD])
        return PlainTextResponse(str(version))

    return Starlette(
        routes=[
            Route("/bench/ping", ping),
            Route("/bench/append", append),
            Route("/bench/view-cache", view_cache, methods=["GET", "POST"]),
        ]
    )


class WithBaselines:
    """Sends ``/bench/...`` to the bare app and everything else (lifespan included) to the service."""

    def __init__(self, service: ASGIApp, bare: ASGIApp) -> None:
        self.service = service
        self.bare = bare

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(BARE_PREFIX):
            await self.bare(scope, receive, send)
        else:
            await self.service(scope, receive, send)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.bench.server", description=__doc__)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    configure_logging()
    configure_tracing()  # off unless OTEL_* asks for it, as in serve
    settings = replace(Settings.from_env(), redis_url=args.redis_url)
    service = create_app(settings)
    # uvicorn stops gracefully on SIGTERM, then raises the signal again; a handler of our own takes
    # it (as serve's does), so the process returns from here and a profiler around it writes its report
    signal.signal(signal.SIGTERM, lambda *_: None)
    uvicorn.run(  # the server as tablestream serve runs it: one write a response, no access log
        WithBaselines(service, bare_app(args.redis_url, service)),
        **server_options(settings, "127.0.0.1", args.port),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
