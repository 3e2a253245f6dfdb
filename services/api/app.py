"""The Starlette application: routes, request context, errors as JSON, the connected parts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from argon2 import PasswordHasher
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp

from services.accounts.players import PlayerQueries
from services.accounts.registry import Accounts, HashPool
from services.api import operator_routes
from services.api.asset_routes import page_response, wants_page
from services.api.assets import AssetTree
from services.api.compression import CompressLargeAnswers
from services.api.context import AppContext
from services.api.drain import Drain, on_stop_signals
from services.api.error_responses import EXCEPTION_HANDLERS, http_error
from services.api.invite_gate import InviteGate
from services.api.lanes import Lanes
from services.api.metrics_route import RequestMetrics, route_methods, route_templates
from services.api.middleware import DrainGuard, RequestGuard, SecurityHeaders
from services.api.openapi import openapi_document
from services.api.operations import OPERATIONS
from services.api.probes import Readiness
from services.api.rate_limits import RateLimits
from services.api.request_log import RequestLog
from services.api.shell import Shell
from services.api.stream_slots import StreamSlots
from services.api.view_cache import ViewCache
from services.api.view_lane import ViewLane
from services.api.web import web_routes
from services.fairness.receipts import ReceiptSigner
from services.history.folding import StateCache
from services.operating.config import Settings
from services.store.archive import Archive
from services.store.connection import AsyncClients, Connect, PoolLimits, connect_to
from services.store.event_store import EventStore
from services.store.live_updates import LiveHub
from services.store.lobby_updates import LobbyHub
from services.store.queue import BotJobs, bot_queue, projection_queue
from services.store.tokens import TokenStore
from services.table.callers import Callers
from services.table.commands import GameCommands
from services.table.lifecycle import Lifecycle
from services.table.queries import GameQueries
from services.table.tracing import TracedAppendNotifier
from services.telemetry import metrics


async def http_error_or_page(request: Request, exc: Exception) -> Response:
    """A path nobody serves: for a person's browser (``text/html``, outside the API's paths) the
    shell with status 404, whose client router shows a page with a way back; else the API's JSON."""
    if isinstance(exc, HTTPException) and exc.status_code == 404 and wants_page(request):
        return page_response(request, missing=True)
    return await http_error(request, exc)


def pool_limits(settings: Settings) -> PoolLimits:
    return PoolLimits(
        max_connections=settings.redis_max_connections,
        pool_timeout=settings.redis_pool_timeout,
        socket_timeout=settings.redis_socket_timeout,
    )


def connect_to_settings(settings: Settings) -> Connect:
    """The store, index and queue clients the settings name (``services.store.connection``)."""
    return connect_to(
        settings.redis_url,
        pool_limits(settings),
        queue_url=settings.queue_url,
        cluster=settings.redis_cluster,  # type: ignore[arg-type]
    )


class GuardedStarlette(Starlette):
    """Starlette with the security headers outside everything, Starlette's own error middleware
    included: a 500 carries them as every other answer does (``services.api.middleware``); the
    request metrics outside them; and outside everything the lanes of the probes and the views
    (``services.api.lanes``), which give their answers the same headers and metrics."""

    def __init__(self, settings: Settings, **kwargs: Any) -> None:
        self.hsts_seconds = settings.hsts_seconds
        self.public_origin = settings.public_origin
        super().__init__(**kwargs)

    def build_middleware_stack(self) -> ASGIApp:
        guarded = SecurityHeaders(super().build_middleware_stack(), self.hsts_seconds, self.public_origin)
        measured = RequestMetrics(guarded, route_templates(self.routes))
        metrics.metrics().routes_known(route_methods(self.routes))
        return Lanes(measured, self, guarded, self.public_origin)


def create_app(
    settings: Settings, connect: Connect | None = None, *, assets: AssetTree | None = None
) -> Starlette:
    """The app. ``connect`` makes its (async, sync) Redis clients inside the app's own event loop;
    by default from ``settings.redis_url`` (tests hand in fakeredis). ``assets``: the web client's
    files (default: ``services/api/static`` and the glossary's language files).

    ``app.state.begin_shutdown()`` (thread- and signal-safe) ends every live stream at once, refuses
    new ones and bounds every request in flight (``services.api.drain``): call it when the server
    starts draining (``services.cli.serve`` does)."""
    drain = Drain(settings.shutdown_seconds)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        clients = (connect or connect_to_settings(settings))()
        if isinstance(clients, tuple):  # one standalone server for everything
            clients = AsyncClients(clients[0], clients[1])
        aclient, sclient = clients.store, clients.queue
        metrics.metrics()  # this process's series exist (at 0) from its start
        app.state.queue_client = sclient  # the scrape reads the queues' depth there
        store = EventStore(aclient, clients.index, settings.acks, Archive(settings.archive_directory))
        tokens = TokenStore(aclient)
        cache = StateCache()  # one fold per game for both sides of this process
        hub = LiveHub(aclient, settings.live_queue_size)
        signer = ReceiptSigner(store, settings.key_name)
        lobby = app.state.lobby = LobbyHub.of(clients)
        loop = asyncio.get_running_loop()

        def begin_shutdown() -> None:
            loop.call_soon_threadsafe(drain.begin)
            loop.call_soon_threadsafe(hub.begin_close)
            loop.call_soon_threadsafe(lobby.begin_close)

        app.state.begin_shutdown = begin_shutdown
        restore_signals = on_stop_signals(begin_shutdown)  # a stop drains, in any server process
        app.state.context = AppContext(
            settings=settings,
            store=store,
            callers=Callers(tokens, settings.admin_token),
            commands=GameCommands(
                store,
                tokens,
                TracedAppendNotifier(store, projection_queue(sclient)),
                cache,
                Lifecycle(store, BotJobs(bot_queue(sclient))),
                settings.bot_pace_ms,
            ),
            queries=GameQueries(
                store,
                cache,
                signer=signer,
                log_seconds=(settings.log_checkpoint_seconds, settings.log_append_seconds),
            ),
            accounts=Accounts(
                store,
                hasher=PasswordHasher(
                    time_cost=settings.password_hash_time_cost, memory_cost=settings.password_hash_memory_kib
                ),
                pool=HashPool(
                    settings.password_hash_slots,
                    settings.password_hash_queue,
                    settings.password_hash_wait_seconds,
                ),
                token_days=settings.account_token_days,
            ),
            players=PlayerQueries(store),
            live=hub,
            views=ViewCache(hub, settings.view_cache_games),
            readiness=Readiness(store.ping, lambda: hub.closing, settings.ready_check_seconds),
            stream_slots=StreamSlots(settings.live_max_streams, settings.live_max_streams_per_client),
            rate_limits=RateLimits.from_settings(settings),
            drain=drain,
            queue=sclient,
            signer=signer,
        )
        try:
            yield
        finally:
            restore_signals()
            await lobby.close()
            await hub.close()
            await store.aclose()
            await clients.aclose()

    # matched in order: the declared operations (the hot paths first; no two overlap), then the pages
    routes = [*(operation.route() for operation in OPERATIONS), *operator_routes.pages, *web_routes()]
    app = GuardedStarlette(
        settings,
        routes=routes,
        middleware=[
            Middleware(RequestLog),  # the request's context and id, its log line (and, tracing on, span)
            Middleware(InviteGate),  # a private table is an unknown game without its link
            Middleware(ViewLane),
            Middleware(RequestGuard, public_origin=settings.public_origin),
            Middleware(DrainGuard, drain=drain),
            Middleware(CompressLargeAnswers),  # only a few long answers (services.api.compression)
        ],
        exception_handlers={**EXCEPTION_HANDLERS, HTTPException: http_error_or_page},
        lifespan=lifespan,
    )
    app.state.shell = Shell(assets or AssetTree())
    app.state.openapi = openapi_document  # /openapi.json (services.api.service_routes)
    return app
