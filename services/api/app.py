"""The Starlette application: routes, request context, errors as JSON, the connected parts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.routing import Route

from services.api.context import AppContext, app_context
from services.api.error_responses import EXCEPTION_HANDLERS
from services.api.history_routes import routes as history_routes
from services.api.http import JSONResponse
from services.api.live import live
from services.api.middleware import RequestContext
from services.api.openapi import openapi_document
from services.api.routes import routes as game_routes
from services.callers import Callers
from services.commands import GameCommands
from services.config import Settings
from services.history.folding import StateCache
from services.lifecycle import Lifecycle
from services.queries import GameQueries
from services.store.connection import Connect, connect_to
from services.store.event_store import EventStore
from services.store.live_updates import LiveUpdates
from services.store.queue import AppendNotifier, BotJobs, lifecycle_queue, projection_queue
from services.store.tokens import TokenStore


async def healthz(request: Request) -> JSONResponse:
    await app_context(request).store.ping()
    return JSONResponse({"status": "ok"})


async def openapi(request: Request) -> JSONResponse:
    return JSONResponse(openapi_document())


def create_app(settings: Settings, connect: Connect | None = None) -> Starlette:
    """The app. ``connect`` makes its (async, sync) Redis clients inside the app's own event loop;
    by default from ``settings.redis_url`` (tests hand in fakeredis)."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        aclient, sclient = (connect or connect_to(settings.redis_url))()
        store = EventStore(aclient)
        tokens = TokenStore(aclient)
        cache = StateCache()  # one fold per game for both sides of this process
        app.state.context = AppContext(
            settings=settings,
            store=store,
            callers=Callers(tokens, settings.admin_token),
            commands=GameCommands(
                store,
                tokens,
                AppendNotifier(store, projection_queue(sclient)),
                cache,
                Lifecycle(store, BotJobs(lifecycle_queue(sclient))),
            ),
            queries=GameQueries(store, cache),
            live=LiveUpdates(aclient),
        )
        try:
            yield
        finally:
            await aclient.aclose()
            sclient.close()

    routes = [
        *game_routes,
        Route("/games/{game_id}/live", live, methods=["GET"]),
        *history_routes,
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(RequestContext)],
        exception_handlers=EXCEPTION_HANDLERS,
        lifespan=lifespan,
    )
