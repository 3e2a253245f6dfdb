"""Live updates as server-sent events: one message per new version with the caller's view.

Each message carries ``id: <version>``; a client reconnecting with ``Last-Event-ID`` gets every
version after it, in order, with no gap and no duplicate. The stream folds the stored events
itself (the same pure view functions as the projections), so it never waits on a lagging worker;
a wake-up on the game's channel (published on every append and every projection) or a short poll
tells it to read the tail. It ends when the game is over or the client goes away.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import StreamingResponse

from projections.views import encode, seat_view
from services.errors import ApiError
from services.folding import Folded, advance
from services.http import game_id_of, identify
from services.keys import game_keys
from services.state import Services, services

HEARTBEAT_SECONDS = 15.0


async def live(request: Request) -> StreamingResponse:
    game_id = game_id_of(request)
    ts = services(request)
    caller = await identify(request, game_id)
    head = await ts.handler.load(game_id)
    resume = _last_event_id(request)
    if resume is not None and resume > head.version:
        raise ApiError(422, "invalid_last_event_id", f"The game is at version {head.version}, not {resume}.")
    return StreamingResponse(
        _stream(request, ts, game_id, caller.seat, head, resume),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _last_event_id(request: Request) -> int | None:
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, "invalid_last_event_id", "Last-Event-ID must be a version number.") from None
    if value < 0:
        raise ApiError(422, "invalid_last_event_id", "Last-Event-ID must not be negative.")
    return value


def _message(folded: Folded, seat: int | None) -> bytes:
    data = encode(seat_view(folded.state, folded.version, seat))
    return b"id: %d\nevent: view\ndata: %s\n\n" % (folded.version, data)


async def _stream(
    request: Request, ts: Services, game_id: str, seat: int | None, head: Folded, resume: int | None
) -> AsyncIterator[bytes]:
    pubsub = ts.redis.pubsub()
    await pubsub.subscribe(game_keys(game_id).live)  # before reading the tail: no lost wake-up
    try:
        cursor: Folded | None
        if resume is None:
            cursor = head
            yield _message(head, seat)
        else:
            cursor = await ts.handler.load_at(game_id, resume) if resume > 0 else None
        quiet_since = time.monotonic()
        while True:
            after = cursor.version if cursor else 0
            for entry in await ts.store.read(game_id, after=after):
                cursor = advance(game_id, cursor, [entry])
                yield _message(cursor, seat)
                quiet_since = time.monotonic()
            if cursor is not None and cursor.state.status == "finished":
                return
            if await request.is_disconnected():
                return
            await pubsub.get_message(ignore_subscribe_messages=True, timeout=ts.settings.live_poll_seconds)
            if time.monotonic() - quiet_since >= HEARTBEAT_SECONDS:
                yield b": keep-alive\n\n"
                quiet_since = time.monotonic()
    finally:
        await pubsub.unsubscribe()
        await pubsub.aclose()
