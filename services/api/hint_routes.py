"""Hints at practice tables (``services.table.hints``): ``POST /games/{id}/hint`` for the seat whose turn it
is."""

from __future__ import annotations

from starlette.requests import Request
from starlette.routing import Route

from projections.narration import LANGUAGES, pick_language
from services.api.bodies import Empty
from services.api.context import app_context
from services.api.http import JSONResponse, caller_of, game_id_of, read_body
from services.table.hints import answer, give_hint


async def ask_hint(request: Request) -> JSONResponse:
    """The seat's token (or cookie) asks what the ``strong`` bot would play from its own view: 403
    ``hints_not_allowed`` at a table that is not a practice table, 409 ``not_your_turn`` while the
    seat is not awaited, 429 ``rate_limited`` past ``hint_rate`` per seat."""
    game_id = game_id_of(request)
    context = app_context(request)
    seat = (await caller_of(request, game_id)).acting_seat()
    await read_body(request, Empty)
    await context.rate_limits.hit("hint", f"{game_id}\n{seat}")
    lang = request.query_params.get("lang")
    if lang not in LANGUAGES:
        lang = pick_language(request.headers.get("accept-language"))
    outcome = await give_hint(context.commands, game_id, seat)
    return JSONResponse(answer(outcome, seat, lang))


routes = [Route("/games/{game_id}/hint", ask_hint, methods=["POST"])]
