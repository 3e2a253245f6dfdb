"""The routes of docs/api.md: tables and lobby, commands, views, events, scores.

Creating and joining also set the token in an HttpOnly cookie for browsers (``http.set_token_cookie``);
joining seats an account by its token in the ``Authorization`` header, else in the browser's
``ts_account`` cookie."""

from __future__ import annotations

import secrets
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request

from domain.table import Account
from services.accounts.seat_names import seat_name
from services.api.answers import CommandAnswer, Created, Lobby, Seated, SeatOnly, SeatsFilled, View
from services.api.answers_history import GameEvents, Scoreboard
from services.api.bodies import CreateGame, Empty, FillBots, JoinGame, SendCommand
from services.api.command_lane import command_answer
from services.api.context import app_context
from services.api.contract import (
    BANNED_OR_CROSS_SITE,
    BEARER,
    COOKIES,
    MAYBE_ACCOUNT,
    TOKEN,
    Answer,
    Narration,
    Operation,
    errors,
)
from services.api.http import (
    MAX_VERSION,
    JSONResponse,
    account_token,
    bearer,
    caller_of,
    client_address,
    cookie_name,
    game_id_of,
    host_of,
    identified,
    int_query,
    network_of,
    optional_int_query,
    read_body,
    set_token_cookie,
)
from services.api.idempotency import CreateGameHeaders, JoinGameHeaders, idempotency_key
from services.api.invite_routes import invite_of
from services.api.view_cache import viewer_of
from services.errors import ForbiddenError, InvalidError, UnauthorizedError
from services.people import waiting_budget
from services.store import indexes, retention, your_tables
from services.table.callers import Caller
from services.table.lifecycle import wall_clock_ms
from services.table.queries import ViewParts

MAX_EVENTS_PAGE = 1000
MAX_LOBBY_PAGE = 1000


async def create_game(request: Request) -> JSONResponse:
    context = app_context(request)
    address = client_address(request)
    await context.rate_limits.hit("create", address)
    key = idempotency_key(request)
    body = await read_body(request, CreateGame)
    trust = await creator_trust(request)
    held = None  # a known Idempotency-Key creates no new table: its retry is answered as the first
    if key is None or not await context.commands.idempotency.known(key):
        kind = waiting_budget.kind_of(body.options)
        spent = waiting_budget.budgets(context.settings, kind, address, network_of(address), trust)
        held = await waiting_budget.reserve(context.store, spent)
    chosen = None
    if trust is not None and trust.established:  # a table of a known player: the lobby lists it first
        chosen = secrets.token_hex(8)
        await context.store.run(indexes.mark_first(chosen, wall_clock_ms()))
    game_id = None
    try:
        game_id, host_token = await context.commands.create(
            body.game, body.players, body.options, idempotency_key=key, game_id=chosen
        )
    finally:
        if held is not None:
            await waiting_budget.settle(context.store, held, game_id)
    created = {"game_id": game_id, "host_token": host_token}
    if body.options.get("private") is True:  # the creator's invite link (services.table.invitations)
        created |= await invite_of(request, game_id)
    response = JSONResponse(created, status_code=201)
    set_token_cookie(request, response, "host", game_id, host_token)
    return response


async def creator_trust(request: Request) -> waiting_budget.Trust | None:
    """The creator's account and its trust, when the request carries a working account token; a
    token that does not work (an old cookie) leaves the creator a guest, who may create all the same."""
    found = account_token(request)
    if found is None:
        return None
    context = app_context(request)
    try:
        state = await context.accounts.authenticate(found[0])
    except (UnauthorizedError, ForbiddenError):
        return None
    return await waiting_budget.trust_of(context.store, state.account_id)


async def lobby(request: Request) -> JSONResponse:
    limit = int_query(request, "limit", 100, low=1, high=MAX_LOBBY_PAGE)
    return JSONResponse({"games": await app_context(request).queries.lobby(limit)})


async def join_game(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    await app_context(request).rate_limits.hit("join", client_address(request))
    key = idempotency_key(request)  # a retry with it answers with the same seat and token
    body = await read_body(request, JoinGame)
    context = app_context(request)
    found = account_token(request)
    state = account = None
    if found is not None:  # an account token (header, else the ts_account cookie): the seat is the account's
        state = await context.accounts.authenticate(found[0])
        account = Account(id=state.account_id, name=state.display_name)
    name = await seat_name(context.accounts, body.name, state)  # the name rule; an account's own name
    if account is not None and not await context.store.run(
        retention.account_seating(account.id, wall_clock_ms())
    ):
        # removed by retention since it was authenticated (an idle unverified account): no seat
        raise UnauthorizedError("invalid_account_token", "The account token is not valid.")
    if account is not None:  # noted before the seat is taken: "Your tables" on every device (checked on read)
        await context.store.run(your_tables.note_table(account.id, game_id, wall_clock_ms()))
    seat, seat_token = await context.commands.join(
        game_id, name, body.client_seed or "", account, idempotency_key=key
    )
    if account is not None:  # a use of the account: an idle unverified account is removed (retention)
        # best effort: the seat is taken, and its token must reach the player whatever the index does
        await context.store.run_best_effort(
            retention.account_seen(account.id, wall_clock_ms()), "account_seen"
        )
    response = JSONResponse({"seat": seat, "token": seat_token}, status_code=201)
    set_token_cookie(request, response, "seat", game_id, seat_token)
    return response


async def send_command(request: Request) -> JSONResponse:
    """A command the lane did not answer (``services.api.command_lane``: the same answer)."""
    game_id = game_id_of(request)
    context = app_context(request)
    await context.rate_limits.hit("command", client_address(request))
    assumed = await caller_of(request, game_id, assume=True)
    assumed.acting_seat()  # 401/403 before the body is read (and before a 422 for it)
    body = await read_body(request, SendCommand)

    async def send(caller: Caller) -> bytes:
        return await command_answer(context, game_id, caller, body)

    return JSONResponse(await identified(request, game_id, send, assumed))


async def get_view(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    context = app_context(request)
    queries = context.queries
    if "at" in request.query_params:  # time travel
        caller = await caller_of(request, game_id)
        at = optional_int_query(request, "at", low=1, high=MAX_VERSION)
        assert at is not None
        return JSONResponse(await queries.view_at(game_id, caller.seat, at))

    # Kept views are answered before the app (services.api.view_lane); here: read, keep, answer
    views = context.views
    assumed = await caller_of(request, game_id, assume=True)
    ticket = views.ticket(game_id)  # before the read

    async def view(caller: Caller) -> tuple[Caller, ViewParts]:
        return caller, await queries.view_parts(game_id, caller.seat, caller.check)

    served, parts = await identified(request, game_id, view, assumed)
    views.keep(game_id, ticket, viewer_of(served), parts)
    return JSONResponse(queries.finish(parts))


async def get_events(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    caller = await caller_of(request, game_id)
    after = int_query(request, "after", 0, high=MAX_VERSION)
    limit = int_query(request, "limit", 100, low=1, high=MAX_EVENTS_PAGE)
    lang = request.query_params.get("lang")
    return JSONResponse(await app_context(request).queries.events(game_id, caller, after, limit, lang))


async def get_scores(request: Request) -> JSONResponse:
    return JSONResponse(await app_context(request).queries.scores(game_id_of(request)))


async def fill_with_bots(request: Request) -> JSONResponse:
    """The host seats bots in every free seat, or in ``count`` of them (403 for anyone else, 409 once
    not waiting)."""
    game_id = game_id_of(request)
    await host_of(request, game_id)
    body = await read_body(request, FillBots)
    seats = await app_context(request).commands.fill_with_bots(game_id, body.level, body.count)
    return JSONResponse({"seats": seats})


async def leave_game(request: Request) -> JSONResponse:
    """A seated player (by token or seat cookie) leaves; during play a bot takes the seat over at once."""
    game_id = game_id_of(request)
    seat = (await caller_of(request, game_id)).acting_seat()
    await read_body(request, Empty)
    token = bearer(request) or request.cookies.get(cookie_name("seat", game_id))
    if token is None:
        raise InvalidError("invalid_request", "Leaving needs the seat's token.")
    response = JSONResponse({"seat": await app_context(request).commands.leave(game_id, seat, token)})
    response.delete_cookie(cookie_name("seat", game_id), path="/")  # its token no longer works
    return response


async def reclaim_seat(request: Request) -> JSONResponse:
    """A seated player (by token or seat cookie) takes back the seat a bot took over after their
    timeouts (409 ``not_taken_over`` when no bot plays it, ``cannot_reclaim`` when it was left)."""
    game_id = game_id_of(request)
    seat = (await caller_of(request, game_id)).acting_seat()
    await read_body(request, Empty)
    return JSONResponse({"seat": await app_context(request).commands.reclaim(game_id, seat)})


Version = Annotated[int, Meta(ge=1, le=MAX_VERSION)]


class LobbyQuery(msgspec.Struct):
    limit: Annotated[int, Meta(ge=1, le=MAX_LOBBY_PAGE, description="At most this many tables")] | (
        UnsetType
    ) = UNSET


class GetEventsQuery(msgspec.Struct):
    after: Annotated[int, Meta(ge=0, le=MAX_VERSION, description="Only versions after this")] | (
        UnsetType
    ) = UNSET
    limit: Annotated[int, Meta(ge=1, le=MAX_EVENTS_PAGE, description="At most this many")] | UnsetType = UNSET
    lang: Narration | UnsetType = UNSET


class GetViewQuery(msgspec.Struct):
    at: Annotated[Version, Meta(description="Time travel: the view at this version")] | UnsetType = UNSET


# A table's life in order: create, list, join, play, watch. The views and commands the clients poll
# are answered ahead of the router (``services.api.view_lane``, ``services.api.command_lane``), so the
# router's order costs them little; schemathesis tries the operations in this order too
# (tests/api/test_schemathesis.py).
operations = [
    Operation(
        "POST",
        "/games",
        create_game,
        answers={201: Answer("The table id and the host token", Created)},
        summary="Create a table",
        description=(
            "A waiting table counts against its creator's budgets: with 'Authorization: Bearer <account "
            "token>' (a browser: its ts_account cookie) the account's allowance, which grows with its rated "
            "games (429 'too_many_tables_from_account'); as a guest its address's, its network's (429 "
            "'too_many_tables_from_address', 'too_many_tables_from_network') and the guests' pool (503 "
            "'too_many_tables'). Turn-based tables are counted apart."
        ),
        body=CreateGame,
        headers=CreateGameHeaders,
        errors=errors(409, s409="The Idempotency-Key was used with another body"),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/games",
        lobby,
        answers={200: Answer("Tables", Lobby)},
        summary="The lobby: open and running tables",
        query=LobbyQuery,
        errors=errors(422),
    ),
    Operation(
        "POST",
        "/games/{game_id}/players",
        join_game,
        answers={201: Answer("The seat and its token", Seated)},
        summary="Take the next seat; the last seat starts the game",
        description=(
            "With 'Authorization: Bearer <account token>' (a browser: its 'ts_account' cookie) the seat is "
            "the account's (name optional, defaults to the display name); without either the seat is "
            "anonymous."
        ),
        security=MAYBE_ACCOUNT,
        body=JoinGame,
        headers=JoinGameHeaders,
        errors=errors(
            401,
            403,
            404,
            409,
            s401="Bad account token (header or cookie)",
            s403=BANNED_OR_CROSS_SITE,
            s409=(
                "Full, started, the account already sits here, or the Idempotency-Key was used with another "
                "body"
            ),
        ),
        rate_limited=True,
    ),
    Operation(
        "POST",
        "/games/{game_id}/commands",
        send_command,
        answers={
            200: Answer("Version, the events as this seat sees them, and a signed receipt", CommandAnswer)
        },
        summary="Send a command as the token's seat",
        security=TOKEN,
        body=SendCommand,
        errors=errors(401, 403, 404, 409, s409="Conflict, reuse or game over"),
        rate_limited=True,
    ),
    Operation(
        "GET",
        "/games/{game_id}/view",
        get_view,
        answers={200: Answer("The view", View)},
        summary="The caller's view (a spectator's without a token)",
        description=COOKIES,
        security=BEARER,
        query=GetViewQuery,
        errors=errors(401, 404, 422),
    ),
    Operation(
        "GET",
        "/games/{game_id}/events",
        get_events,
        answers={
            200: Answer(
                "Events and the head version; each event says 'by' whom its batch came: 'player', 'bot' or "
                "'timeout'",
                GameEvents,
            )
        },
        summary="Events as the caller may see them",
        description=COOKIES,
        security=BEARER,
        query=GetEventsQuery,
        errors=errors(401, 404, 422),
    ),
    Operation(
        "GET",
        "/games/{game_id}/scores",
        get_scores,
        answers={200: Answer("Per round and totals", Scoreboard)},
        summary="The scoreboard",
        errors=errors(404),
    ),
    Operation(
        "POST",
        "/games/{game_id}/bots",
        fill_with_bots,
        answers={200: Answer("The seats the bots took: {'seats': [..]}", SeatsFilled)},
        summary=(
            "The host seats bots of a level in every empty seat, or in 'count' of them (host token or "
            "ts_host_<id> cookie); body {} or {'level': 'easy'|'normal'|'strong', 'count': n} (default "
            "normal, every free seat; 422 invalid_bot_level, invalid_bot_count)"
        ),
        security=TOKEN,
        body=FillBots,
        errors=errors(
            401, 403, 404, 409, s401="Missing token", s403="Not the host", s409="The table is not waiting"
        ),
    ),
    Operation(
        "POST",
        "/games/{game_id}/leave",
        leave_game,
        answers={200: Answer("The seat left: {'seat': i}", SeatOnly)},
        summary="Leave the table: while waiting the seat is freed; during play a bot takes it",
        description="The seat's token, or a browser's 'ts_seat_<game_id>' cookie (then cleared).",
        security=BEARER,
        body=Empty,
        errors=errors(
            401, 403, 404, 409, s401="Bad or missing token", s409="Already left, or the game is over"
        ),
    ),
    Operation(
        "POST",
        "/games/{game_id}/reclaim",
        reclaim_seat,
        answers={200: Answer("The seat taken back: {'seat': i}", SeatOnly)},
        summary="Take back your seat from the bot that took it over after your timeouts",
        description=(
            "The seat's token, or a browser's 'ts_seat_<game_id>' cookie. The seat's turn timer starts again "
            "for you, with a fresh run of timeouts before the next takeover; the game stays unrated (a bot "
            "played for the seat). Recorded as 'seat_reclaimed'."
        ),
        security=BEARER,
        body=Empty,
        errors=errors(
            401,
            403,
            404,
            409,
            s401="Bad or missing token",
            s403="Not a seat's token (the host's)",
            s409=(
                "not_taken_over (no bot plays the seat), cannot_reclaim (the seat was left, or a bot sits "
                "there from the start), game_over, not_started, table_expired"
            ),
        ),
    ),
]
