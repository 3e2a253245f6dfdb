"""The table chat's routes (``services.people.chat``): send, read, report, and the host's switch.

Who speaks: the seat of the caller's seat token (bearer or ``ts_seat_<id>`` cookie) in channel
``table``; anyone else in channel ``rail``, as the account of an account token (bearer or the
``ts_account`` cookie), else as this browser: an HttpOnly ``ts_rail`` cookie with a random id, set
by the first message it sends (a spectator needs no account to cheer).
"""

from __future__ import annotations

import json
import math
import re
import secrets
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import Response

from services.api.answers_people import ChatPage, ChatReported, ChatSwitched, PostedChat
from services.api.bodies import ChatPost, ChatReport, ChatSettings
from services.api.context import AppContext, app_context
from services.api.contract import BEARER, TOKEN, Answer, Operation, errors
from services.api.http import (
    ACCOUNT_COOKIE,
    MAX_VERSION,
    JSONResponse,
    bearer,
    client_address,
    game_id_of,
    host_of,
    int_query,
    read_body,
    remembered_tokens,
)
from services.api.rate_limits import CHAT, CHAT_SPEAKER
from services.errors import ForbiddenError, InvalidError, TooManyError, UnauthorizedError
from services.history.chat_export import chat_section
from services.history.folding import Folded
from services.people.chat import MAX_PAGE, Speaker, TableChat, checked_text, ended, numbered, spectator_tag
from services.store import chat as store_chat
from services.table.callers import Caller
from services.table.lifecycle import wall_clock_ms

RAIL_COOKIE = "ts_rail"
RAIL_ID = re.compile(r"[0-9a-f]{32}")
RAIL_COOKIE_SECONDS = 180 * 24 * 3600


def table_chat(context: AppContext) -> TableChat:
    return TableChat(context.store, context.settings.chat_max_messages, context.settings.chat_max_reports)


async def reader_of(request: Request, game_id: str) -> tuple[Caller | None, str | None]:
    """The caller's game role (``None``: a bearer that is an account token, a spectator) and the
    account id of an account token (bearer, else the ``ts_account`` cookie) when not seated."""
    context = app_context(request)
    token = bearer(request)
    if token is not None:
        try:
            caller = await context.callers.identify(game_id, token)
        except UnauthorizedError as refused:  # not a token of this game: an account's, or nothing
            try:
                account = await context.accounts.authenticate(token)
            except UnauthorizedError:
                raise refused from None
            return None, account.account_id
        return caller, None
    caller = await context.callers.remembered(game_id, remembered_tokens(request, game_id))
    return caller, None


def seated(caller: Caller | None, folded: Folded) -> bool:
    return caller is not None and caller.seat is not None and folded.state.holds(caller.seat)


async def at_table(request: Request, game_id: str, folded: Folded) -> bool:
    """Whether any credential the request carries is one of a person at the table, from whom the
    rail is hidden while the game runs (per person, not per credential): a seat token of a seat
    still held or the host's token (as the bearer, or remembered in this browser's cookies), or an
    account that holds a seat (its token as the bearer, or this browser's login cookie). A request
    with none of them is a spectator's."""
    context = app_context(request)
    tokens = [token for token in (bearer(request), *remembered_tokens(request, game_id)) if token]
    for token in dict.fromkeys(tokens):
        try:
            caller = await context.callers.identify(game_id, token)
        except UnauthorizedError:  # an account's token, or a stale one
            continue
        if caller.role == "host" or seated(caller, folded):
            return True
    accounts = {
        p.account.id for p in folded.state.seated if p.account is not None and folded.state.holds(p.seat)
    }
    if not accounts:
        return False
    for token in dict.fromkeys(t for t in (bearer(request), request.cookies.get(ACCOUNT_COOKIE)) if t):
        try:
            if (await context.accounts.authenticate(token)).account_id in accounts:
                return True
        except UnauthorizedError:
            continue
    return False


async def rail_hidden(request: Request, game_id: str, folded: Folded) -> bool:
    """Whether the rail is hidden from this reader now: a person at the table while the game runs."""
    return not ended(folded.state.status) and await at_table(request, game_id, folded)


async def speaker_of(request: Request, game_id: str, folded: Folded) -> tuple[Speaker, str | None]:
    """Who speaks (a seat of a held seat token in channel ``table``, anyone else on the rail), and a
    new ``ts_rail`` id to set when this browser had none."""
    context = app_context(request)
    caller, account_id = await reader_of(request, game_id)
    if caller is not None and seated(caller, folded):
        assert caller.seat is not None
        return Speaker(caller.seat, folded.state.names()[caller.seat]), None
    if account_id is None and (cookie := request.cookies.get(ACCOUNT_COOKIE)):
        try:
            account_id = (await context.accounts.authenticate(cookie)).account_id
        except UnauthorizedError:  # a stale login cookie: this browser speaks as itself
            account_id = None
    if account_id is not None:
        state = await context.accounts.load(account_id)
        name = state.display_name if state is not None else ""
        return Speaker(None, name, spectator_tag(f"account:{account_id}")), None
    browser = request.cookies.get(RAIL_COOKIE, "")
    fresh = None
    if not RAIL_ID.fullmatch(browser):
        browser = fresh = secrets.token_hex(16)
    return Speaker(None, "", spectator_tag(f"browser:{browser}")), fresh


async def limit(context: AppContext, game_id: str, address: str, speaker: Speaker) -> None:
    """Count one message against the client's address and the speaker; 429 past either."""
    limits = context.rate_limits
    for action, who in ((CHAT, address), (CHAT_SPEAKER, f"{game_id}\n{speaker.sender}")):
        wait = await limits.counted(action, who)
        if wait is not None:
            seconds = max(1, math.ceil(wait))
            raise TooManyError(
                "chat_rate_limited",
                f"Too many chat messages (at most {limits.item(action)}); retry in {seconds} s.",
                retry_after=seconds,
            )


async def post_chat(request: Request) -> Response:
    game_id = game_id_of(request)
    context = app_context(request)
    folded = await context.queries.load(game_id)
    speaker, fresh = await speaker_of(request, game_id, folded)
    body = await read_body(request, ChatPost)
    if (body.text is None) == (body.reaction is None):
        raise InvalidError("invalid_request", "A chat message is a 'text' or a 'reaction', exactly one.")
    text = checked_text(body.text) if body.text is not None else None
    hidden = await rail_hidden(request, game_id, folded)
    if hidden and speaker.channel == "rail":
        raise ForbiddenError(
            "rail_closed_at_table",
            "A person at the table speaks in the table's channel, not on the rail, until the game ends.",
        )
    await limit(context, game_id, client_address(request), speaker)
    chat = table_chat(context)
    message = await chat.say(game_id, speaker, wall_clock_ms(), text, body.reaction)
    if hidden:  # numbered as the speaker numbers what it reads
        message = numbered(message, (await chat.numbers(game_id))[message["n"]])
    response = JSONResponse({"message": message}, status_code=201)
    if fresh is not None:
        response.set_cookie(
            RAIL_COOKIE,
            fresh,
            max_age=RAIL_COOKIE_SECONDS,
            httponly=True,
            samesite="strict",
            path="/",
            secure=request.url.scheme == "https",
        )
    return response


async def get_chat(request: Request) -> JSONResponse:
    """The chat this caller may see after ``after``, oldest first, ``limit`` records at most;
    ``next`` is the number to ask after for more. Numbers are record numbers, except for a person
    at the table while the game runs: its table numbers (``services.people.chat.table_numbers``)."""
    game_id = game_id_of(request)
    context = app_context(request)
    after = int_query(request, "after", 0, high=MAX_VERSION)
    limit_ = int_query(request, "limit", 100, low=1, high=MAX_PAGE)
    folded = await context.queries.load(game_id)
    await reader_of(request, game_id)  # a bearer that is neither this game's token nor an account's: 401
    chat = table_chat(context)
    messages, next_, more = await chat.page(
        game_id, after, limit_, await rail_hidden(request, game_id, folded)
    )
    body: dict[str, Any] = {
        "messages": messages,
        "next": next_,
        "more": more,
        "merged": ended(folded.state.status),
        "enabled": await chat.enabled(game_id),
    }
    return JSONResponse(body)


async def report_chat(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    context = app_context(request)
    folded = await context.queries.load(game_id)
    speaker, _ = await speaker_of(request, game_id, folded)
    body = await read_body(request, ChatReport)
    await limit(context, game_id, client_address(request), speaker)
    report = await table_chat(context).report(
        game_id,
        speaker,
        body.messages,
        body.reason,
        await rail_hidden(request, game_id, folded),  # a rail message it cannot see is not found
        wall_clock_ms(),
    )
    return JSONResponse({"report": report}, status_code=201)


async def chat_settings(request: Request) -> JSONResponse:
    """The host turns the table's chat off (or on again)."""
    game_id = game_id_of(request)
    await host_of(request, game_id)
    body = await read_body(request, ChatSettings)
    context = app_context(request)
    chat = table_chat(context)
    answer = await chat.switch(game_id, body.enabled, wall_clock_ms())
    if not ended((await context.queries.load(game_id)).state.status):  # the host is at the table
        numbers = await chat.numbers(game_id)
        answer["n"] = numbers.get(answer["n"], len(numbers))  # the settings record's, or the newest seen
    return JSONResponse(answer)


async def export_with_chat(request: Request) -> JSONResponse:
    """``GET /games/{id}/export?chat=1``: the finished game's export plus its ``chat`` section
    (``services.history.chat_export``), read now (the chat may still grow after the end)."""
    game_id = game_id_of(request)
    context = app_context(request)
    export = await context.queries.export(game_id)  # 404, 409 game_not_finished
    document = json.loads(export.body)
    document["chat"] = chat_section(await context.store.run(store_chat.stored_bytes(game_id)))
    return JSONResponse(document)


class GetChatQuery(msgspec.Struct):
    after: (
        Annotated[
            int, Meta(ge=0, le=MAX_VERSION, description="Records after this number (0: from the first)")
        ]
        | UnsetType
    ) = UNSET
    limit: Annotated[int, Meta(ge=1, le=500, description="Read at most this many records")] | UnsetType = (
        UNSET
    )


operations = [
    Operation(
        "POST",
        "/games/{game_id}/chat",
        post_chat,
        answers={
            201: Answer(
                "The stored record: {'message': {n, kind, channel, from, name, seat, text | reaction, at, "
                "version, numbering?}} (numbering 'table': n is the speaker's table number, a person at the "
                "table while the game runs)",
                PostedChat,
            )
        },
        summary="Send a chat message or a reaction to the table",
        description=(
            "A seat (its token, or the browser's ts_seat_<id> cookie) speaks in channel 'table'; anyone else "
            "in channel 'rail': an account (its token as the bearer, or the ts_account cookie), else this "
            "browser (an HttpOnly ts_rail cookie, set by its first message)."
        ),
        security=BEARER,
        body=ChatPost,
        errors=errors(
            401,
            403,
            404,
            409,
            413,
            422,
            s403=(
                "chat_off: the host turned chat off; rail_closed_at_table: a person at the table may not "
                "speak on the rail while the game runs (or cross_origin)"
            ),
            s409="chat_full: the table's chat holds its cap of messages",
            s413="chat_message_too_long (past the message limit) or body_too_large",
            s422="chat_message_empty, chat_control_characters, invalid_request",
        ),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/games/{game_id}/chat",
        get_chat,
        answers={200: Answer("{messages, next, more, merged, enabled}", ChatPage)},
        summary="The chat this caller may see: a person at the table sees no 'rail' message until the game "
        "ended",
        security=BEARER,
        query=GetChatQuery,
        errors=errors(401, 404, 422),
    ),
    Operation(
        "POST",
        "/games/{game_id}/chat/report",
        report_chat,
        answers={201: Answer("{'report': <id of the record in the operators' stream>}", ChatReported)},
        summary="Report chat messages (by number) to the operators",
        security=BEARER,
        body=ChatReport,
        errors=errors(
            401,
            404,
            409,
            s404="game_not_found, chat_message_not_found (not one you can see)",
            s409="chat_reports_full: the table's chat was reported chat_max_reports times",
        ),
        rate_limited=True,
    ),
    Operation(
        "POST",
        "/games/{game_id}/chat/settings",
        chat_settings,
        answers={200: Answer("{enabled, n}", ChatSwitched)},
        summary="The host turns the table's chat off or on (host token or ts_host_<id> cookie)",
        security=TOKEN,
        body=ChatSettings,
        errors=errors(401, 403, 404, s401="Missing token", s403="Not the host"),
    ),
]
