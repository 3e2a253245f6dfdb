"""The operator's console (``services.operating.operator``): the page ``/operator`` and its JSON routes under
``/operator/...``. Every one of them first checks the caller is an operator (the admin token as a
bearer, or an operator account's token: bearer or the ``ts_account`` cookie) and refuses anyone else
with 403 ``not_an_operator``, before it reads anything else of the request."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.api.answers_operator import (
    AccountSummary,
    AuditLog,
    ChatReports,
    ClosedTable,
    Figures,
    FoundPlayers,
    FoundTables,
    HandledReport,
    OperatorMe,
    OperatorTable,
    PlayerCard,
)
from services.api.asset_routes import SHELL_VARY, page_response, shell_of
from services.api.bodies import VISIBLE, OperatorReason
from services.api.context import app_context
from services.api.contract import Answer, Handler, Operation, errors
from services.api.http import JSONResponse, account_token, game_id_of, int_query, read_body
from services.api.shell import LANG_COOKIE, LOADING
from services.errors import AppError, ForbiddenError, InvalidError
from services.operating.operator import (
    ADMIN,
    REPORT_ID,
    Operator,
    OperatorConsole,
    invalid_cursor,
    not_an_operator,
)
from services.table.lifecycle import wall_clock_ms

MAX_PAGE = 100
MAX_QUERY = 100
MAX_CURSOR = 200


def console_of(request: Request) -> OperatorConsole:
    context = app_context(request)
    return OperatorConsole(context.store, context.accounts, context.commands, context.queries)


async def operator_of(request: Request) -> Operator:
    """The operator asking, else 403 ``not_an_operator`` (no token, a bad one, a player's, a
    banned account's: all the same answer, which says nothing about the token)."""
    context = app_context(request)
    try:
        found = account_token(request)
    except AppError:  # a malformed Authorization header
        raise not_an_operator() from None
    if found is None:
        raise not_an_operator()
    token = found[0]
    if context.callers.is_admin(token):
        return Operator(ADMIN, ADMIN)
    try:
        account = await context.accounts.authenticate(token)
    except AppError:
        raise not_an_operator() from None
    if not await console_of(request).operator_account(account.account_id):
        raise not_an_operator()
    return Operator(account.account_id, account.display_name)


async def acting_operator(request: Request) -> Operator:
    """The operator asking for a change (a close, a ban, a report handled, a verdict), counted
    against ``operator_rate`` per operator (429 ``rate_limited`` past it): a stolen or scripted
    operator credential cannot act on the whole service in a moment."""
    who = await operator_of(request)
    await app_context(request).rate_limits.hit("operator", who.id)
    return who


def _query(request: Request) -> str:
    query = request.query_params.get("q", "").strip()
    if not 1 <= len(query) <= MAX_QUERY or not re.search(VISIBLE, query):
        raise InvalidError("invalid_query", f"Search with 'q': 1 to {MAX_QUERY} characters, not all blank.")
    return query


def _cursor(request: Request) -> str | None:
    """The ``next`` of the page before (``cursor``), checked by each list for its own shape."""
    cursor = request.query_params.get("cursor")
    if cursor is not None and not 1 <= len(cursor) <= MAX_CURSOR:
        raise invalid_cursor()
    return cursor


def _before(request: Request) -> str | None:
    """Where a page of a log (reports, audit) starts: ``cursor``, the entry id the page before ended
    at, or ``before``, its older name (either: entries older than that id)."""
    cursor = _cursor(request)
    before = request.query_params.get("before")
    if cursor is not None and not REPORT_ID.fullmatch(cursor):
        raise invalid_cursor()
    if before is not None and not REPORT_ID.fullmatch(before):
        raise InvalidError("invalid_query", "'before' is an entry id such as 1700000000000-0.")
    return cursor or before


async def page(request: Request) -> Response:
    """The console's page for an operator; anyone else gets 403 and, in a browser, a page saying
    that the console needs operator rights and how to sign in (never the JSON error)."""
    try:
        await operator_of(request)
    except ForbiddenError:
        if "text/html" not in request.headers.get("accept", ""):  # a program: the JSON error
            raise
        return refused_page(request)
    return page_response(request)


REFUSED = (
    '<section class="panel" data-testid="op-refused"><h1>Operator\'s console</h1>'
    "<p>This page needs operator rights. Log in on the lobby page with an account an administrator has "
    "made an operator, then open this page again.</p>"
    '<p><a href="/">Go to the lobby to log in</a></p></section>'
)


def refused_page(request: Request) -> Response:
    """The page shell with status 403: the client draws the refusal in the person's language
    (``js/operator.js``); without scripts, ``<main>`` says it in English."""
    shell = shell_of(request)
    lang = shell.language(request.cookies.get(LANG_COOKIE), request.headers.get("accept-language"))
    body = shell.page(request.url.path, lang).body.replace(LOADING.encode(), REFUSED.encode(), 1)
    return Response(
        body,
        status_code=403,
        media_type="text/html; charset=utf-8",
        headers={"Cache-Control": "no-store", "Vary": SHELL_VARY},
    )


async def me(request: Request) -> JSONResponse:
    who = await operator_of(request)
    return JSONResponse({"operator": who.id, "name": who.name})


async def figures(request: Request) -> JSONResponse:
    await operator_of(request)
    answer = await app_context(request).readiness.answer()
    health: dict[str, Any] = json.loads(answer.body)
    readiness = {"ready": answer.ready, "health": health.get("reason", health.get("status"))}
    return JSONResponse(await console_of(request).figures(readiness, app_context(request).queue))


async def find_tables(request: Request) -> JSONResponse:
    await operator_of(request)
    limit = int_query(request, "limit", 20, low=1, high=MAX_PAGE)
    return JSONResponse(await console_of(request).find_tables(_query(request), _cursor(request), limit))


async def table(request: Request) -> JSONResponse:
    await operator_of(request)
    return JSONResponse(await console_of(request).table(game_id_of(request)))


async def close_table(request: Request) -> JSONResponse:
    who = await acting_operator(request)
    game_id = game_id_of(request)
    body = await read_body(request, OperatorReason)
    closed = await console_of(request).close_table(who, game_id, body.reason)
    signed = await app_context(request).receipts.sign({k: closed[k] for k in ("game_id", "version", "hash")})
    return JSONResponse({**closed, **signed})


async def find_players(request: Request) -> JSONResponse:
    await operator_of(request)
    limit = int_query(request, "limit", 20, low=1, high=MAX_PAGE)
    return JSONResponse(await console_of(request).find_players(_query(request), _cursor(request), limit))


async def player(request: Request) -> JSONResponse:
    await operator_of(request)
    return JSONResponse(await console_of(request).find_player(request.path_params["account"]))


async def ban(request: Request) -> JSONResponse:
    who = await acting_operator(request)
    body = await read_body(request, OperatorReason)
    return JSONResponse(await console_of(request).ban(who, request.path_params["account"], body.reason))


async def unban(request: Request) -> JSONResponse:
    who = await acting_operator(request)
    body = await read_body(request, OperatorReason)
    return JSONResponse(await console_of(request).unban(who, request.path_params["account"], body.reason))


async def reports(request: Request) -> JSONResponse:
    await operator_of(request)
    limit = int_query(request, "limit", 20, low=1, high=MAX_PAGE)
    reports, following = await console_of(request).reports(_before(request), limit)
    return JSONResponse({"reports": reports, "next": following})


async def handle_report(request: Request) -> JSONResponse:
    who = await acting_operator(request)
    body = await read_body(request, OperatorReason)
    console = console_of(request)
    return JSONResponse(
        await console.handle_report(who, request.path_params["report_id"], body.reason, wall_clock_ms())
    )


async def audit(request: Request) -> JSONResponse:
    await operator_of(request)
    limit = int_query(request, "limit", 50, low=1, high=MAX_PAGE)
    entries, following = await console_of(request).audit(_before(request), limit)
    return JSONResponse({"entries": entries, "next": following})


LogId = Annotated[str, Meta(pattern=r"^\d{1,20}-\d{1,20}$")]
Search = Annotated[str, Meta(min_length=1, max_length=MAX_QUERY, pattern=VISIBLE)]
Cursor = Annotated[str, Meta(min_length=1, max_length=MAX_CURSOR)]
Page = Annotated[int, Meta(ge=1, le=MAX_PAGE)]
LOG_CURSOR = "The 'next' of the page before: the id of the last entry shown; only older entries follow"
BEFORE = "Only entries older than this id (the older name of 'cursor')"


class AuditQuery(msgspec.Struct):
    cursor: Annotated[LogId, Meta(description=LOG_CURSOR)] | UnsetType = UNSET
    before: Annotated[LogId, Meta(description=BEFORE)] | UnsetType = UNSET
    limit: Annotated[Page, Meta(description="At most this many (default 50)")] | UnsetType = UNSET


class ReportsQuery(msgspec.Struct):
    cursor: Annotated[LogId, Meta(description=LOG_CURSOR)] | UnsetType = UNSET
    before: Annotated[LogId, Meta(description=BEFORE)] | UnsetType = UNSET
    limit: Annotated[Page, Meta(description="At most this many (default 20)")] | UnsetType = UNSET


class FindPlayersQuery(msgspec.Struct):
    q: Search
    cursor: Annotated[Cursor, Meta(description="The 'next' of the page before: the last account shown")] | (
        UnsetType
    ) = UNSET
    limit: Annotated[Page, Meta(description="At most this many (default 20)")] | UnsetType = UNSET


class FindTablesQuery(msgspec.Struct):
    q: Search
    cursor: (
        Annotated[
            Cursor,
            Meta(
                description="The 'next' of the page before: where the following page starts in the open "
                "tables"
            ),
        ]
        | UnsetType
    ) = UNSET
    limit: Annotated[Page, Meta(description="At most this many (default 20)")] | UnsetType = UNSET


OPERATORS_ONLY = (
    "Operators only: 'Authorization: Bearer <admin token>', or the token (bearer or the 'ts_account' "
    "cookie) of an account granted the role with 'tablestream operator grant NAME'. Anyone else: 403 "
    "not_an_operator."
)
PAGING = (
    "One page: 'next' is the cursor of the following page, null on the last; send it back as "
    "'cursor' (422 invalid_cursor for one that is not a 'next' of this list)."
)
OPERATOR_RATE = (
    "rate_limited: too many operator actions by this operator (TABLESTREAM_OPERATOR_RATE, counted per "
    "operator whatever its address: acting_operator)"
)
"""The 429 of an operator's change (a close, a ban, a report handled, a verdict)."""


def console(
    method: str,
    path: str,
    handler: Handler,
    summary: str,
    *,
    query: type[msgspec.Struct] | None = None,
    body: type[msgspec.Struct] | None = None,
    paged: bool = False,
    answer: Any = None,
    acting: bool = False,
    **refusals: str,
) -> Operation:
    """An operation of the console: operators only (no 'security' object: that promises a 401 for a
    bad token, and the console answers every caller who is not an operator 403 'not_an_operator',
    whatever was sent); its 200 (of type ``answer``) is described as its summary (a ``paged`` list's with
    ``PAGING``); an ``acting`` one (a change, through ``acting_operator``) is rate limited per operator;
    ``refusals`` as ``s404="..."``."""
    summary = f"{summary} {PAGING}" if paged else summary
    statuses = sorted(int(name[1:]) for name in refusals)
    return Operation(
        method,
        path,
        handler,
        answers={200: Answer(summary, answer)},
        summary=summary,
        description=OPERATORS_ONLY,
        query=query,
        body=body,
        errors=errors(
            403,
            *statuses,
            s403="not_an_operator: no token, or one that is neither the admin token nor an operator's",
            **refusals,
        ),
        rate_limited=OPERATOR_RATE if acting else False,
    )


operations = [
    console(
        "GET",
        "/operator/me",
        me,
        "The operator asking: {operator: 'admin' or an account id, name}",
        answer=OperatorMe,
    ),
    console(
        "GET",
        "/operator/figures",
        figures,
        (
            "Live figures: ready, health (ok or /healthz's reason), lag_ms, tables_waiting, "
            "tables_running, games_lagging, chat_reports, queue_projections, queue_lifecycle, queue_bots,"
            " queue_review"
        ),
        answer=Figures,
    ),
    console(
        "GET",
        "/operator/tables",
        find_tables,
        (
            "Find tables: {tables, next}: on the first page the one with this id, then the waiting or "
            "running tables, most recently changed first, where a seat's name contains it "
            "(case-insensitive)."
        ),
        paged=True,
        query=FindTablesQuery,
        s422="invalid_query, invalid_cursor",
        answer=FoundTables,
    ),
    console(
        "GET",
        "/operator/tables/{game_id}",
        table,
        "A table: status, seats, names, accounts",
        s404="game_not_found",
        answer=OperatorTable,
    ),
    console(
        "POST",
        "/operator/tables/{game_id}/close",
        close_table,
        (
            "Close a waiting or running table: table_closed in its stream (with the reason and the "
            "operator), its seeds revealed, its timers stopped; answers the signed receipt (as a command)"
        ),
        body=OperatorReason,
        s404="game_not_found",
        s409="table_closed, game_over",
        s422="invalid_reason",
        answer=ClosedTable,
        acting=True,
    ),
    console(
        "GET",
        "/operator/players",
        find_players,
        (
            "Find accounts: {players: [{account_id, name, banned, ban_reason, match}], next}: the "
            "accounts whose name begins with 'q' or with a name that looks like it (confusables folded as"
            " for the names' claims), in that folded order; match is exact, prefix, lookalike, or id for "
            "an account id."
        ),
        paged=True,
        query=FindPlayersQuery,
        s422="invalid_query, invalid_cursor",
        answer=FoundPlayers,
    ),
    console(
        "GET",
        "/operator/players/{account}",
        player,
        (
            "An account's card, by name or id: banned, ban_reason, operator, has_password, games_played, "
            "recent_games (the last ten finished: game_id, game, title, finished_at, rated, rank, score, "
            "players, replay)"
        ),
        s404="account_not_found",
        answer=PlayerCard,
    ),
    console(
        "POST",
        "/operator/accounts/{account}/ban",
        ban,
        (
            "Ban an account (by name or id): account_banned in its stream; its logins and tokens are "
            "refused with 403 account_banned"
        ),
        body=OperatorReason,
        s404="account_not_found",
        s409="already_banned",
        s422="invalid_reason",
        answer=AccountSummary,
        acting=True,
    ),
    console(
        "POST",
        "/operator/accounts/{account}/unban",
        unban,
        "Lift a ban: account_unbanned in its stream",
        body=OperatorReason,
        s404="account_not_found",
        s409="not_banned",
        s422="invalid_reason",
        answer=AccountSummary,
        acting=True,
    ),
    console(
        "GET",
        "/operator/reports",
        reports,
        (
            "Chat reports, newest first, with the reported messages' text and who handled each: {reports,"
            " next}."
        ),
        paged=True,
        query=ReportsQuery,
        s422="invalid_query, invalid_cursor",
        answer=ChatReports,
    ),
    console(
        "POST",
        "/operator/reports/{report_id}/handled",
        handle_report,
        "Mark a chat report handled, with a note (the reason field)",
        body=OperatorReason,
        s404="report_not_found",
        s409="report_handled",
        s422="invalid_reason",
        answer=HandledReport,
        acting=True,
    ),
    console(
        "GET",
        "/operator/audit",
        audit,
        "The audit log, newest first: {entries: [{id, at, operator, name, action, target, reason}], next}.",
        paged=True,
        query=AuditQuery,
        s422="invalid_query, invalid_cursor",
        answer=AuditLog,
    ),
]

pages = [Route("/operator", page, methods=["GET"])]
"""The operator's page (HTML, not the API's)."""

routes = [*(operation.route() for operation in operations), *pages]
"""Every route of the console, its page included."""
