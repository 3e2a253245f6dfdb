"""'Your tables' over HTTP: ``GET /me/tables`` (the list), ``GET /me/live`` (the same list as
server-sent events, sent again whenever it changes) and ``POST /me/tables/{game_id}/seat`` (an
account's seat, opened on this device).

The caller is the account of the ``Authorization`` header or the ``ts_account`` cookie (a cookie
that no longer works counts as none: the browser's own seats still show) plus the seats of the
browser's ``ts_seat_<id>`` cookies (``services.people.your_tables``).

Why a stream rather than polling: a tab of the site stays open for hours while a turn-based table
waits days, and every page of the site shows the count. The stream subscribes to the live channels
of the caller's tables (``LiveHub``, one subscriber per process however many tabs) and sends the list
only when a move, a timeout or a join changes it; between changes it costs nothing but a comment
line now and then, and the list of tables itself is read again every ``RESCAN_SECONDS`` (a seat
taken on another device). A poll would cost every open tab a full read every few seconds and still
tell the player late.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import msgspec
import structlog
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from services.api.answers import Seated
from services.api.answers_people import YourTables
from services.api.bodies import Empty
from services.api.context import AppContext, app_context
from services.api.contract import ACCOUNT, MAYBE_ACCOUNT, Answer, Event, Operation, Stream, errors
from services.api.http import (
    JSONResponse,
    account_token,
    client_address,
    game_id_of,
    read_body,
    set_token_cookie,
)
from services.api.invite_gate import invitations_of
from services.api.live import LiveResponse
from services.api.stream_slots import Slot
from services.errors import (
    AppError,
    ConflictError,
    ForbiddenError,
    UnauthorizedError,
    UnavailableError,
    game_not_found,
)
from services.people.your_tables import account_seat, your_tables
from services.store.connection import UNAVAILABLE
from services.store.live_updates import Wakeups
from services.table.invitations import PUBLIC

log = structlog.get_logger("tablestream.your_tables")

SEAT_COOKIE = "ts_seat_"
RETRY_MS = 1000
RESCAN_SECONDS = 10.0  # how often a stream reads the list of tables again (a seat taken elsewhere)
MAX_SUBSCRIBED = 20  # tables a stream is woken by; more are read again at each rescan

_encode = msgspec.json.Encoder().encode


def seat_cookies(request: Request) -> dict[str, str]:
    """The browser's remembered seat tokens: game id -> token."""
    return {
        name[len(SEAT_COOKIE) :]: token
        for name, token in request.cookies.items()
        if name.startswith(SEAT_COOKIE) and token and len(name) > len(SEAT_COOKIE)
    }


BANNED_IN_HEADER = (
    "account_banned: the Authorization header's account was banned by an operator (a banned account's "
    "cookie counts as no account)"
)


async def account_of(request: Request) -> str | None:
    """The caller's account id: a bad token in the header is a 401, a banned account's a 403; a cookie
    that no longer works is no account (the browser's own seats still count)."""
    found = account_token(request)
    if found is None:
        return None
    token, where = found
    try:
        return (await app_context(request).accounts.authenticate(token)).account_id
    except AppError:
        if where == "header":
            raise
        return None


async def _listing(context: AppContext, account_id: str | None, cookies: dict[str, str]) -> dict[str, object]:
    listing = await your_tables(context.store, context.queries, context.callers, account_id, cookies)
    return {**listing, "account": account_id is not None}


async def my_tables(request: Request) -> JSONResponse:
    context = app_context(request)
    return JSONResponse(await _listing(context, await account_of(request), seat_cookies(request)))


async def open_seat(request: Request) -> JSONResponse:
    """The account's seat at this table, opened on this device: a token of its own for the seat
    (in the ``ts_seat_<id>`` cookie for browsers), so that a game begun on one device goes on from
    another where the account is logged in. Only while the game runs: a waiting table's seat can be
    left and taken by someone else, and a token must never outlive the seat it opens."""
    game_id = game_id_of(request)
    context = app_context(request)
    await context.rate_limits.hit("join", client_address(request))
    found = account_token(request)
    if found is None:
        raise UnauthorizedError("unauthorized", "Log in: an account's seat opens with the account's token.")
    account = await context.accounts.authenticate(found[0])
    await read_body(request, Empty)
    folded = await context.queries.load(game_id)
    seat = account_seat(folded, account.account_id)
    if seat is None:
        invitations = invitations_of(request.scope)
        if invitations is not None and await invitations.code(game_id) not in (None, PUBLIC):
            # a private table is shown to its players only: to anyone else it does not exist
            raise game_not_found(game_id)
        raise ForbiddenError("no_seat_here", "This account holds no seat at this table.")
    status = folded.state.status
    if status == "waiting":
        raise ConflictError("not_started", "The game has not started yet: open it on the device that joined.")
    if status in ("finished", "expired"):
        raise ConflictError("game_over", "The game is over; there is no seat to open.")
    token = await context.commands.tokens.issue(game_id, str(seat))
    log.info("seat_opened", game_id=game_id, seat=seat)
    response = JSONResponse({"seat": seat, "token": token})
    set_token_cookie(request, response, "seat", game_id, token)
    return response


class MineResponse(LiveResponse):
    """A stream whose table subscriptions close with it."""

    def __init__(self, content: AsyncIterator[bytes], slot: Slot, exits: contextlib.AsyncExitStack) -> None:
        super().__init__(content, slot)
        self.exits = exits

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.exits.aclose()


async def my_live(request: Request) -> MineResponse:
    context = app_context(request)
    if context.live.closing:
        raise UnavailableError("shutting_down", "This server is shutting down; reconnect.", retry_after=1)
    account_id = await account_of(request)
    cookies = seat_cookies(request)
    first = await _listing(context, account_id, cookies)  # before the response: a clean 503 if down
    slot = context.stream_slots.take(client_address(request))
    exits = contextlib.AsyncExitStack()
    return MineResponse(_stream(request, context, account_id, cookies, first, exits), slot, exits)


def _changed(before: dict[str, object] | None, after: dict[str, object]) -> bool:
    if before is None:
        return True
    return {k: v for k, v in before.items() if k != "now_ms"} != {
        k: v for k, v in after.items() if k != "now_ms"
    }


async def _first_wakeup(wakeups: list[Wakeups], timeout: float) -> bool:
    """``True`` on the first wake-up of any of the tables, ``False`` after ``timeout`` seconds."""
    if not wakeups:
        await asyncio.sleep(timeout)
        return False
    waits = [asyncio.ensure_future(w.wait(timeout)) for w in wakeups]
    try:
        done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
    return any(not task.cancelled() and task.result() for task in done)


class Subscriptions:
    """The live channels of the tables a stream follows (at most ``MAX_SUBSCRIBED``), each entered
    and left on its own as tables join or leave the list."""

    def __init__(self, context: AppContext) -> None:
        self.context = context
        self.held: dict[str, tuple[contextlib.AsyncExitStack, Wakeups]] = {}

    async def follow(self, game_ids: list[str]) -> None:
        wanted = game_ids[:MAX_SUBSCRIBED]
        for game_id in [g for g in self.held if g not in wanted]:
            stack, _ = self.held.pop(game_id)
            await stack.aclose()
        for game_id in wanted:
            if game_id not in self.held:
                stack = contextlib.AsyncExitStack()
                wakeups = await stack.enter_async_context(self.context.live.subscribe(game_id))
                self.held[game_id] = (stack, wakeups)

    def wakeups(self) -> list[Wakeups]:
        return [wakeups for _, wakeups in self.held.values()]

    async def aclose(self) -> None:
        await self.follow([])


async def _stream(
    request: Request,
    context: AppContext,
    account_id: str | None,
    cookies: dict[str, str],
    listing: dict[str, object],
    exits: contextlib.AsyncExitStack,
) -> AsyncIterator[bytes]:
    settings = context.settings
    tables = Subscriptions(context)
    exits.push_async_callback(tables.aclose)
    sent: dict[str, object] | None = None
    quiet_since = time.monotonic()
    yield b"retry: %d\n\n" % RETRY_MS
    while not context.live.closing:
        await tables.follow([str(t["game_id"]) for t in listing["tables"]])  # type: ignore[attr-defined]
        if _changed(sent, listing):
            sent = listing
            yield b"event: tables\ndata: %s\n\n" % _encode(listing)
            quiet_since = time.monotonic()
        # Woken by a change of one of the tables, else the list is read again after RESCAN_SECONDS
        # (a seat taken elsewhere); waited for in steps of a second, so that a client gone or a
        # server shutting down is noticed soon (a wake-up costs nothing, a read of the list does).
        until = time.monotonic() + RESCAN_SECONDS
        while not context.live.closing and time.monotonic() < until:
            if await _first_wakeup(tables.wakeups(), min(1.0, until - time.monotonic())):
                break
            if await request.is_disconnected():
                return
            if time.monotonic() - quiet_since >= settings.live_heartbeat_seconds:
                yield b": keep-alive\n\n"
                quiet_since = time.monotonic()
        if context.live.closing or await request.is_disconnected():
            return
        try:
            listing = await _listing(context, account_id, cookies)
        except UNAVAILABLE:  # Redis went away: end; the client reconnects
            log.info("my_live_ended_store_unavailable")
            return


BAD_ACCOUNT_TOKEN = "invalid_account_token: a bad account token in the header"

operations = [
    Operation(
        "GET",
        "/me/tables",
        my_tables,
        answers={200: Answer("The tables", YourTables)},
        summary="Your tables: every table where you hold a seat, those awaiting you first",
        description=(
            "The caller is the account of the Authorization header or the browser's 'ts_account' cookie (a "
            "cookie that no longer works counts as none) plus the seats of the browser's 'ts_seat_<id>' "
            "cookies. Tables awaiting your move first (the nearest deadline first), then running, then "
            "waiting ones; tables that ended are left out."
        ),
        security=MAYBE_ACCOUNT,
        errors=errors(401, 403, s401=BAD_ACCOUNT_TOKEN, s403=BANNED_IN_HEADER),
    ),
    Operation(
        "POST",
        "/me/tables/{game_id}/seat",
        open_seat,
        answers={200: Answer("{'seat': i, 'token': '...'}", Seated)},
        summary="Open your account's seat at this table on this device",
        description=(
            "A new token for the seat the account holds (also set as the browser's 'ts_seat_<game_id>' "
            "cookie), while the game runs: a game begun on one device goes on from another where the account "
            "is logged in."
        ),
        security=ACCOUNT,
        body=Empty,
        errors=errors(
            401,
            403,
            404,
            409,
            s401="unauthorized (no account token), invalid_account_token",
            s403="no_seat_here: the account holds no seat at this table",
            s404="game_not_found",
            s409="not_started (the table still waits for players), game_over",
        ),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/me/live",
        my_live,
        answers={
            200: Stream(
                "retry: 1000, then an event 'tables' (the body of GET /me/tables) at once and per change",
                (Event("tables", YourTables),),
            )
        },
        summary="Server-sent events: 'tables' (the body of GET /me/tables) at once and on change",
        description=(
            "The caller is the account of the Authorization header or the browser's 'ts_account' cookie (a "
            "cookie that no longer works counts as none) plus the seats of the browser's 'ts_seat_<id>' "
            "cookies. Tables awaiting your move first (the nearest deadline first), then running, then "
            "waiting ones; tables that ended are left out. Woken by the tables' own live channels; the list "
            "is read again every 10 s besides (a seat taken on another device). Counted in the live-stream "
            "caps."
        ),
        security=MAYBE_ACCOUNT,
        errors=errors(401, 403, s401=BAD_ACCOUNT_TOKEN, s403=BANNED_IN_HEADER),
        capped=True,
    ),
]
