"""Live updates as server-sent events: one message per new version with the caller's view.

Each message carries ``id: <version>``; a client reconnecting with ``Last-Event-ID`` gets every
version after it, in order, with no gap and no duplicate. The stream folds the stored events
itself (the same pure view functions as the projections), so it never waits on a lagging worker;
a wake-up on the game's channel (published on every append and every projection) or a short poll
tells it to read the tail. It ends when the game is over, the client goes away, Redis becomes
unreachable (the client reconnects with ``Last-Event-ID``) or the server shuts down.

Streams are capped per server process and per client address (``StreamSlots``); a stream holds no
pooled Redis connection (``services.store.live_updates.LiveHub`` fans one subscriber out).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import structlog
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from services.api.answers import View
from services.api.answers_people import ChatRecord
from services.api.chat_routes import rail_hidden
from services.api.context import AppContext, app_context
from services.api.contract import BEARER, Event, Operation, Stream, errors
from services.api.http import MAX_VERSION, caller_of, client_address, game_id_of, int_query
from services.api.live_chat import LiveChat
from services.api.stream_slots import Slot
from services.errors import InvalidError, UnavailableError
from services.history.folding import Folded
from services.store.connection import UNAVAILABLE
from services.table.queries import GameQueries, rendered_view, with_clock
from services.telemetry import metrics

log = structlog.get_logger("tablestream.live")


class LiveResponse(StreamingResponse):
    """A stream that gives its slot back however it ends (even if it never started)."""

    def __init__(self, content: AsyncIterator[bytes], slot: Slot) -> None:
        super().__init__(
            content,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )
        self.slot = slot

    kind = "game"  # the label of its gauge (services.telemetry.metrics: live streams open)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            with metrics.stream_open(self.kind):
                await super().__call__(scope, receive, send)
        except OSError:  # the client's socket broke mid-stream: nothing to answer
            log.info("live_client_gone")
        finally:
            self.slot.release()


async def live(request: Request) -> StreamingResponse:
    game_id = game_id_of(request)
    context = app_context(request)
    if context.live.closing:
        raise UnavailableError("shutting_down", "This server is shutting down; reconnect.", retry_after=1)
    caller = await caller_of(request, game_id)
    queries = context.queries
    head = await queries.load(game_id)
    resume, chat_resume = _last_event_id(request)
    if resume is not None and resume > head.version:
        raise InvalidError("invalid_last_event_id", f"The game is at version {head.version}, not {resume}.")
    # Everything the first message needs is read before the response starts: a Redis that is down
    # or a pool that is exhausted now is a clean 503 with Retry-After, not a stream cut mid-way.
    cursor: Folded | None
    pending: list[Folded] = []
    joined_at: int | None = None
    if resume is None:
        cursor, first = head, await _message(queries, head, caller.seat)
    else:
        cursor, first = (await queries.load_at(game_id, resume) if resume > 0 else None), None
        if caller.seat is not None and resume < head.version:
            pending = await queries.successors(game_id, cursor)
            joined_at = _tenure_start(cursor, pending, caller.seat)
    chat = None
    if request.query_params.get("chat") == "1":  # the table's chat too (services.api.live_chat)
        after = (
            chat_resume if chat_resume is not None else int_query(request, "chat_after", 0, high=MAX_VERSION)
        )
        chat = LiveChat(context.store, game_id, after, await rail_hidden(request, game_id, head))
        if first is not None:
            first = _with_id(first, chat.event_id(head.version))
    slot = context.stream_slots.take(client_address(request))
    tenure = Tenure(caller.seat, joined_at)
    return LiveResponse(_stream(request, context, game_id, tenure, cursor, first, pending, chat), slot)


class Tenure:
    """Whose eyes a seat's stream shows each version with. A stream resumed from before the seat's
    current player sat down (``joined_at``) shows the versions before it as a spectator sees them
    (the seat was empty, or another player's who left while the table waited), then the seat's own
    view from its join; once the seat is no longer that player's, the stream ends."""

    def __init__(self, seat: int | None, joined_at: int | None) -> None:
        self.seat = seat
        self.joined_at = joined_at

    def viewer(self, folded: Folded) -> int | None:
        if self.joined_at is not None and folded.version < self.joined_at:
            return None
        return self.seat

    def gone(self, folded: Folded) -> bool:
        """The seat's player left (and a bot or a newcomer may hold it now)."""
        if self.seat is None or (self.joined_at is not None and folded.version < self.joined_at):
            return False
        return not folded.state.holds(self.seat)


def _tenure_start(cursor: Folded | None, successors: list[Folded], seat: int) -> int | None:
    """The version at which ``seat``'s current player sat down, if after ``cursor``: the last version
    whose table holds the seat while the one before did not (a join; seats change hands only by a
    join after a leave while the table waits)."""
    joined_at = None
    held = cursor is not None and cursor.state.holds(seat)
    for folded in successors:
        now = folded.state.holds(seat)
        if now and not held:
            joined_at = folded.version
        held = now
    return joined_at


def _last_event_id(request: Request) -> tuple[int | None, int | None]:
    """The version to resume after and, from a chat stream's ``<version>.<chat n>``, the chat
    record to resume after (``None`` when not given)."""
    raw = request.headers.get("last-event-id") or request.query_params.get("last_event_id")
    if raw is None:
        return None, None
    version, dot, chat = raw.partition(".")
    try:
        value = int(version)
        chat_value = int(chat) if dot else None
    except ValueError:
        raise InvalidError("invalid_last_event_id", "Last-Event-ID must be a version number.") from None
    if value < 0 or (chat_value is not None and chat_value < 0):
        raise InvalidError("invalid_last_event_id", "Last-Event-ID must not be negative.")
    return value, chat_value


def _with_id(message: bytes, event_id: str) -> bytes:
    """A view message with a chat stream's id in place of its version."""
    rest = message.split(b"\n", 1)[1]
    return b"id: %s\n%s" % (event_id.encode(), rest)


async def _message(queries: GameQueries, folded: Folded, seat: int | None) -> bytes:
    view = with_clock(rendered_view(folded, seat), await queries.clock_for(folded))
    return b"id: %d\nevent: view\ndata: %s\n\n" % (folded.version, view)


async def _stream(
    request: Request,
    context: AppContext,
    game_id: str,
    tenure: Tenure,
    cursor: Folded | None,
    first: bytes | None,
    pending: list[Folded],
    chat: LiveChat | None = None,
) -> AsyncIterator[bytes]:
    queries = context.queries
    settings = context.settings
    ended_at: float | None = None
    async with context.live.subscribe(game_id) as wakeups:  # before reading the tail: no lost wake-up
        if first is not None:
            yield first
        quiet_since = time.monotonic()
        while not wakeups.closing:
            try:
                successors = pending or await queries.successors(game_id, cursor)
                pending = []
                messages = [
                    (folded, await _message(queries, folded, tenure.viewer(folded))) for folded in successors
                ]
                if chat is not None:
                    messages = [(f, _with_id(m, chat.event_id(f.version))) for f, m in messages]
            except UNAVAILABLE:  # Redis went away: end; the client resumes from its Last-Event-ID
                log.info("live_ended_store_unavailable", game_id=game_id)
                return
            for folded, message in messages:
                if tenure.gone(folded):
                    # the seat's player left (and a bot or a newcomer may hold it now): the stream
                    # that the seat's token opened must not show what the seat sees from here on
                    log.info("live_seat_left", game_id=game_id, seat=tenure.seat, version=folded.version)
                    return
                cursor = folded
                yield message
                quiet_since = time.monotonic()
            if chat is not None:
                try:
                    said = await chat.events(cursor)
                except UNAVAILABLE:
                    log.info("live_ended_store_unavailable", game_id=game_id)
                    return
                for message in said:
                    yield message
                    quiet_since = time.monotonic()
            if cursor is not None and cursor.state.status in ("finished", "closed"):
                if chat is None:
                    return
                ended_at = time.monotonic() if ended_at is None else ended_at
                if time.monotonic() - ended_at >= settings.chat_after_end_seconds:
                    return
            if await request.is_disconnected():
                return
            await wakeups.wait(settings.live_poll_seconds)
            if time.monotonic() - quiet_since >= settings.live_heartbeat_seconds:
                yield b": keep-alive\n\n"
                quiet_since = time.monotonic()


GAME_EVENT_ID = r"^[0-9]+(\.[0-9]+)?$"
"""A game stream's event id: the version, and on a chat stream ``<version>.<chat n>``."""

operations = [
    Operation(
        "GET",
        "/games/{game_id}/live",
        live,
        answers={
            200: Stream(
                "One event 'view' per version with the caller's view (its id the version). With the query "
                "'chat=1' the table's chat comes too, one event 'chat' per record (a person at the table "
                "(seat, host or seated account) gets no 'rail' record until the game ended), every id is "
                "'<version>.<chat n>', and 'chat_after=<n>' resumes the chat of a new stream. Resumes from "
                "Last-Event-ID; ends when the game is over (a chat stream a little later), or the seat's "
                "player left",
                (
                    Event("view", View, id_pattern=GAME_EVENT_ID),
                    Event("chat", ChatRecord, id_pattern=GAME_EVENT_ID),
                ),
            )
        },
        summary="Server-sent events: one message per version with the caller's view",
        security=BEARER,
        errors=errors(401, 404, 422),
        capped=True,
    ),
]
"""The schema of a ``text/event-stream`` answer describes one event (``services.api.contract.Stream``):
its ``event`` name, its ``id`` where the stream sends one, and its ``data``, a JSON document whose
shape is the ``contentSchema``. A comment line (``: keep-alive``) is no event
(``tests/api/test_live_schema.py`` checks every event of played games against it)."""
