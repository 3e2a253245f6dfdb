"""Rematch (``services.people.rematch``): ``GET /games/{id}/rematch`` (its state; a seat's new token for that
seat's caller only, also as the browser's seat cookie of the new table), ``POST .../rematch``
(accept; the last accept makes the table) and ``POST .../rematch/decline``, by a seated player of
the finished game (its seat token, or the browser's seat cookie)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from domain.table import Account
from services.api.bodies import Empty
from services.api.context import app_context
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


routes = [
    Route("/games/{game_id}/rematch", get_rematch, methods=["GET"]),
    Route("/games/{game_id}/rematch", accept_rematch, methods=["POST"]),
    Route("/games/{game_id}/rematch/decline", decline_rematch, methods=["POST"]),
]
