"""``GET /lobby/live``: the lobby as server-sent events, instead of a page polling ``GET /games``.

The stream starts with the whole lobby (``event: lobby``, the body of ``GET /games``: open and
running tables, newest first), then sends each table whose summary changed (``event: table``, one
lobby entry: created, a seat taken or freed, started, finished or expired, with its ``version``; a
finished or expired table leaves the lobby). A stream that may have missed a change (it fell behind,
or the process's subscriber was lost: ``services.store.lobby_updates``) gets the whole lobby again.
Every reconnection starts with the whole lobby too, so a client needs no ``Last-Event-ID``: its
state is the last ``lobby`` message plus the ``table`` messages after it (a ``table`` with an older
``version`` than one already seen is stale and is dropped by the client).

Like a game's live stream (``services.api.live``): capped per process and per client address
(``StreamSlots``, the same slots), a comment line after ``live_heartbeat_seconds`` of quiet, ended at
once when the server shuts down, and it holds no pooled Redis connection while it waits.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator

import msgspec
import structlog
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from services.api.answers import Lobby, LobbyTable
from services.api.context import AppContext, app_context
from services.api.contract import Event, Operation, Stream
from services.api.http import client_address
from services.api.live import LiveResponse
from services.api.stream_slots import Slot
from services.errors import UnavailableError
from services.store.connection import UNAVAILABLE
from services.store.lobby_updates import LobbyFeed, LobbyHub

log = structlog.get_logger("tablestream.live")

LOBBY_LIMIT = 100  # tables in the whole-lobby message (GET /games's default page)
RETRY_MS = 1000  # how soon a browser's EventSource reconnects after the stream ends

_encode = msgspec.json.Encoder().encode


class LobbyResponse(LiveResponse):
    """A lobby stream: gives back its slot and leaves the hub however it ends (even unstarted)."""

    def __init__(self, content: AsyncIterator[bytes], slot: Slot, exits: contextlib.AsyncExitStack) -> None:
        super().__init__(content, slot)
        self.exits = exits

    kind = "lobby"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.exits.aclose()


def lobby_hub(request: Request) -> LobbyHub:
    hub: LobbyHub = request.app.state.lobby
    return hub


async def lobby_live(request: Request) -> LobbyResponse:
    context = app_context(request)
    hub = lobby_hub(request)
    if hub.closing or context.live.closing:
        raise UnavailableError("shutting_down", "This server is shutting down; reconnect.", retry_after=1)
    slot = context.stream_slots.take(client_address(request))
    exits = contextlib.AsyncExitStack()
    try:
        # Subscribed before the lobby is read, so that no change after the read is lost; read before
        # the response starts, so that a Redis that is down now is a clean 503 with Retry-After.
        feed = await exits.enter_async_context(hub.subscribe())
        first = b"retry: %d\n" % RETRY_MS + await _whole(context)
    except BaseException:
        slot.release()
        await exits.aclose()
        raise
    return LobbyResponse(_stream(request, context, feed, first), slot, exits)


async def _whole(context: AppContext) -> bytes:
    games = await context.queries.lobby(LOBBY_LIMIT)
    return b"event: lobby\ndata: %s\n\n" % _encode({"games": games})


async def _stream(
    request: Request, context: AppContext, feed: LobbyFeed, first: bytes
) -> AsyncIterator[bytes]:
    settings = context.settings
    yield first
    quiet_since = time.monotonic()
    while not feed.closing:
        if feed.stale:
            feed.stale = False
            try:
                yield await _whole(context)
            except UNAVAILABLE:  # Redis went away: end; the client reconnects and reads it all
                log.info("lobby_live_ended_store_unavailable")
                return
            quiet_since = time.monotonic()
        summaries = await feed.next(settings.live_poll_seconds)
        for summary in summaries:
            yield b"event: table\ndata: %s\n\n" % summary
        if summaries:
            quiet_since = time.monotonic()
        if await request.is_disconnected():
            return
        if time.monotonic() - quiet_since >= settings.live_heartbeat_seconds:
            yield b": keep-alive\n\n"
            quiet_since = time.monotonic()


operations = [
    Operation(
        "GET",
        "/lobby/live",
        lobby_live,
        answers={
            200: Stream(
                "Every (re)connection starts with the whole lobby (event 'lobby', the first with 'retry'), "
                "then one event 'table' per table whose summary changed; the whole lobby again after the "
                "server lost its feed",
                (Event("lobby", Lobby, retry=True), Event("table", LobbyTable)),
            )
        },
        summary="Server-sent events: the whole lobby, then each table that changed",
        capped=True,
    ),
]
