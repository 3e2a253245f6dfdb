"""Quick play's routes (``services.people.quickplay``): queue a ticket, read it (a long-poll), agree to bots,
cancel it.

The ticket's secret travels as ``Authorization: Bearer <ticket_token>`` (API clients) or in the
browser's HttpOnly ``ts_quickplay`` cookie (``<ticket id>.<secret>``), set by ``POST /quickplay``.
On ``POST /quickplay`` the ``Authorization`` header is the account token (as for joining), and the
cookie is what makes one browser hold one live ticket: a second press answers the same ticket.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import Response

from domain.table import Account
from services.accounts.seat_names import seat_name
from services.api.answers_quickplay import CancelledTicket, OpenedTicket, Ticket
from services.api.bodies import Empty, QuickPlayRequest
from services.api.context import app_context
from services.api.contract import BANNED_OR_CROSS_SITE, MAYBE_ACCOUNT, TICKET, Answer, Operation, errors
from services.api.http import (
    JSONResponse,
    account_token,
    bearer,
    client_address,
    int_query,
    read_body,
    set_token_cookie,
)
from services.errors import NotFoundError, UnauthorizedError
from services.people.quickplay import QuickPlay

COOKIE = "ts_quickplay"
TICKET_ID = re.compile(r"[0-9a-f]{16}")
MAX_POLL_SECONDS = 25
POLL_STEP_SECONDS = 0.25  # how often a long-poll reads its ticket (one Redis round trip each)


def quickplay_of(request: Request) -> QuickPlay:
    """The process's quick play tickets (made on first use, on the app's store)."""
    found: QuickPlay | None = getattr(request.app.state, "quickplay", None)
    if found is None:
        found = request.app.state.quickplay = QuickPlay(app_context(request).store)
    return found


def _ticket_of(request: Request) -> str:
    ticket_id: str = request.path_params["ticket"]
    if not TICKET_ID.fullmatch(ticket_id):
        raise NotFoundError("ticket_not_found", f"No quick play ticket {ticket_id!r} for this secret.")
    return ticket_id


def _remembered(request: Request) -> tuple[str, str] | None:
    """The ticket id and secret the browser's cookie holds."""
    ticket_id, _, secret = request.cookies.get(COOKIE, "").partition(".")
    return (ticket_id, secret) if TICKET_ID.fullmatch(ticket_id) and secret else None


def _secret(request: Request, ticket_id: str) -> str:
    token = bearer(request)
    if token is not None:
        return token
    held = _remembered(request)
    if held is None or held[0] != ticket_id:
        raise UnauthorizedError("unauthorized", "Send the ticket's token as 'Authorization: Bearer <token>'.")
    return held[1]


def _set_cookie(request: Request, response: Response, ticket_id: str, secret: str) -> None:
    response.set_cookie(
        COOKIE,
        f"{ticket_id}.{secret}",
        max_age=3600,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",
    )


async def open_ticket(request: Request) -> JSONResponse:
    context = app_context(request)
    await context.rate_limits.hit("quickplay", client_address(request))
    body = await read_body(request, QuickPlayRequest)
    found = account_token(request)
    state = account = None
    if found is not None:  # as for joining: the ticket carries the account (and its rating)
        state = await context.accounts.authenticate(found[0])
        account = Account(id=state.account_id, name=state.display_name)
    name = await seat_name(context.accounts, body.name, state)
    quickplay = quickplay_of(request)
    opened = await quickplay.open(
        body.game,
        body.players,
        name,
        body.bots_after_wait,
        account,
        _remembered(request),
        client_address(request),
    )
    shown = await quickplay.state(opened.ticket, opened.secret, deliver=False)
    response = JSONResponse(
        {**shown, "ticket_token": opened.secret}, status_code=201 if opened.fresh else 200
    )
    _set_cookie(request, response, opened.ticket, opened.secret)
    return response


async def read_ticket(request: Request) -> JSONResponse:
    """The ticket's state; ``wait`` (seconds, at most 25): answer once it is no longer waiting, or
    when the wait is up (a long-poll). A seated ticket's seat token is in the first answer that
    shows it seated (and in the browser's seat cookie), never again."""
    ticket_id = _ticket_of(request)
    secret = _secret(request, ticket_id)
    wait = int_query(request, "wait", 0, high=MAX_POLL_SECONDS)
    quickplay = quickplay_of(request)
    deadline = time.monotonic() + wait
    shown = await quickplay.state(ticket_id, secret)
    while shown["state"] in ("queued", "matched") and time.monotonic() < deadline:
        await asyncio.sleep(POLL_STEP_SECONDS)
        shown = await quickplay.state(ticket_id, secret)
    response = JSONResponse(shown)
    if "token" in shown:
        set_token_cookie(request, response, "seat", str(shown["game_id"]), str(shown["token"]))
    return response


async def agree_to_bots(request: Request) -> JSONResponse:
    ticket_id = _ticket_of(request)
    secret = _secret(request, ticket_id)
    await read_body(request, Empty)
    return JSONResponse(await quickplay_of(request).agree_to_bots(ticket_id, secret))


async def cancel_ticket(request: Request) -> JSONResponse:
    """Cancel a queued ticket: nothing of it is left; 409 ``already_matched`` once it is being seated."""
    ticket_id = _ticket_of(request)
    secret = _secret(request, ticket_id)
    await quickplay_of(request).cancel(ticket_id, secret)
    response = JSONResponse({"ticket": ticket_id, "state": "cancelled"})
    response.delete_cookie(
        COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )
    return response


class ReadTicketQuery(msgspec.Struct):
    wait: (
        Annotated[
            int,
            Meta(ge=0, le=25, description="Seconds to hold the answer while the ticket waits (default 0)"),
        ]
        | UnsetType
    ) = UNSET


operations = [
    Operation(
        "POST",
        "/quickplay",
        open_ticket,
        answers={
            200: Answer("The browser's live ticket, answered again", OpenedTicket),
            201: Answer("The new ticket, its state and its ticket_token", OpenedTicket),
        },
        summary="Play now: queue for a table of this game and player count",
        description=(
            "With an account token (header or 'ts_account' cookie) the ticket carries the account and its "
            "rating (seated as the account's seat). A browser holding a live ticket (its 'ts_quickplay' "
            "cookie) gets the same ticket again (200); an account with a live ticket elsewhere, or a browser "
            "queued for another game, is 409 already_queued. The ticket's token as 'Authorization: Bearer "
            "<ticket_token>', else the browser's HttpOnly 'ts_quickplay' cookie set by POST /quickplay. A "
            "ticket reads as {ticket, state (queued, matched, seated, timed_out), game, players, "
            "bots_after_wait, waited_ms, wait_bound_seconds, max_wait_seconds, position (while queued), "
            "game_id and seat (once seated), token (the seat's, in the first answer that shows it seated "
            "only; the answer also sets the seat cookie)}."
        ),
        security=MAYBE_ACCOUNT,
        body=QuickPlayRequest,
        errors=errors(
            401,
            403,
            409,
            422,
            s401="Bad account token (header or cookie)",
            s403=BANNED_OR_CROSS_SITE,
            s409="already_queued (the live ticket's id is in 'ticket')",
            s422="unknown_game, bad_player_count, invalid_name, name_not_yours",
        ),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/quickplay/{ticket}",
        read_ticket,
        answers={200: Answer("The ticket", Ticket)},
        summary="The ticket's state; with 'wait' a long-poll",
        description=(
            "The ticket's token as 'Authorization: Bearer <ticket_token>', else the browser's HttpOnly "
            "'ts_quickplay' cookie set by POST /quickplay. A ticket reads as {ticket, state (queued, matched,"
            " seated, timed_out), game, players, bots_after_wait, waited_ms, wait_bound_seconds, "
            "max_wait_seconds, position (while queued), game_id and seat (once seated), token (the seat's, in"
            " the first answer that shows it seated only; the answer also sets the seat cookie)}."
        ),
        security=TICKET,
        query=ReadTicketQuery,
        errors=errors(401, 404, 422, s401="No ticket token", s404="ticket_not_found"),
    ),
    Operation(
        "DELETE",
        "/quickplay/{ticket}",
        cancel_ticket,
        answers={200: Answer("{ticket, state: cancelled}", CancelledTicket)},
        summary="Cancel a queued ticket: nothing of it is left",
        security=TICKET,
        errors=errors(
            401,
            403,
            404,
            409,
            s401="No ticket token",
            s403="A browser's request from a page of another site (cross_origin)",
            s404="ticket_not_found",
            s409="already_matched: the table is being set (or is set)",
        ),
    ),
    Operation(
        "POST",
        "/quickplay/{ticket}/bots",
        agree_to_bots,
        answers={200: Answer("The ticket", Ticket)},
        summary="Agree to bots filling the table once the wait bound has passed",
        security=TICKET,
        body=Empty,
        errors=errors(401, 404, s401="No ticket token", s404="ticket_not_found"),
    ),
]
