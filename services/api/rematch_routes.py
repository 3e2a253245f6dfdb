"""Rematch (``services.people.rematch``): ``GET /games/{id}/rematch`` (its state; a seat's new token for that
seat's caller only, also as the browser's seat cookie of the new table), ``POST .../rematch``
(accept; the last accept makes the table) and ``POST .../rematch/decline``, by a seated player of
the finished game (its seat token, or the browser's seat cookie)."""

from __future__ import annotations

from starlette.requests import Request

from domain.table import Account
from services.api.answers import Rematch
from services.api.bodies import Empty
from services.api.context import app_context
from services.api.contract import BEARER, Operation, errors
from services.api.contract import Answer as Returns
from services.api.http import JSONResponse, caller_of, client_address, game_id_of, read_body, set_token_cookie
from services.people.rematch import Answer, Rematches
from services.store import retention, your_tables
from services.table.lifecycle import wall_clock_ms


def rematches(request: Request) -> Rematches:
    """The process's ``Rematches`` (made on first use, on the app's store)."""
    context = app_context(request)
    state = request.app.state
    found: Rematches | None = getattr(state, "rematches", None)
    if found is None or found.commands is not context.commands:
        found = state.rematches = Rematches(context.store.redis, context.commands)
    return found


def answered(request: Request, answer: Answer) -> JSONResponse:
    body = dict(answer.body)
    if answer.token is not None and answer.new_game_id is not None:
        body["token"] = answer.token
    response = JSONResponse(body)
    if answer.token is not None and answer.new_game_id is not None:
        set_token_cookie(request, response, "seat", answer.new_game_id, answer.token)
    return response


async def get_rematch(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    caller = await caller_of(request, game_id)
    return answered(request, await rematches(request).state(game_id, caller.seat))


async def accept_rematch(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    context = app_context(request)
    await context.rate_limits.hit("create", client_address(request))  # it may create a table
    seat = (await caller_of(request, game_id)).acting_seat()
    await read_body(request, Empty)

    async def may_sit(account: Account, new_game_id: str) -> bool:
        if not await context.store.run(retention.account_seating(account.id, wall_clock_ms())):
            return False
        # noted before the seat is taken, as a join does: "Your tables" on every device
        await context.store.run(your_tables.note_table(account.id, new_game_id, wall_clock_ms()))
        return True

    return answered(request, await rematches(request).accept(game_id, seat, may_sit))


async def decline_rematch(request: Request) -> JSONResponse:
    game_id = game_id_of(request)
    seat = (await caller_of(request, game_id)).acting_seat()
    await read_body(request, Empty)
    return answered(request, await rematches(request).decline(game_id, seat))


NOT_A_SEAT = "Not a seat's token (the game's seat token or 'ts_seat_<game_id>' cookie)"
NOT_A_PLAYER = "not_a_player: the seat was a bot's, or its player left during the game"
NOT_NOW = (
    "game_not_finished; rematch_declined (accepting after a decline); rematch_made (declining once "
    "every player accepted)"
)

operations = [
    Operation(
        "GET",
        "/games/{game_id}/rematch",
        get_rematch,
        answers={200: Returns("The rematch", Rematch)},
        summary=(
            "The rematch of a finished game: each human seat's answer, who declined, the new table once made "
            "(and to a seat's own caller its new seat and token, also set as the 'ts_seat_<new id>' cookie)"
        ),
        security=BEARER,
        errors=errors(401, 404, s401="A bad token"),
    ),
    Operation(
        "POST",
        "/games/{game_id}/rematch",
        accept_rematch,
        answers={200: Returns("The rematch (with the caller's new token once the table exists)", Rematch)},
        summary=(
            "Play again (a seated player of the finished game): the last human seat to accept makes exactly "
            "one new table with the same game, options and seats"
        ),
        security=BEARER,
        body=Empty,
        errors=errors(
            401,
            403,
            404,
            409,
            s401=NOT_A_SEAT,
            s403=NOT_A_PLAYER,
            s409=NOT_NOW,
        ),
        rate_limited="Rate limited: too many tables made from this client",
    ),
    Operation(
        "POST",
        "/games/{game_id}/rematch/decline",
        decline_rematch,
        answers={200: Returns("The rematch", Rematch)},
        summary="Decline the rematch: no new table is made, and everyone sees who declined",
        security=BEARER,
        body=Empty,
        errors=errors(
            401,
            403,
            404,
            409,
            s401=NOT_A_SEAT,
            s403=NOT_A_PLAYER,
            s409=NOT_NOW,
        ),
    ),
]
