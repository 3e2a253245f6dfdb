"""Hints at practice tables (``services.table.hints``): ``POST /games/{id}/hint`` for the seat whose turn it
is."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType
from starlette.requests import Request

from projections.narration import LANGUAGES, pick_language
from services.api.answers_play import Hint
from services.api.bodies import Empty
from services.api.context import app_context
from services.api.contract import BEARER, Answer, Operation, ReasonLanguage, errors
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


class AskHintQuery(msgspec.Struct):
    lang: ReasonLanguage | UnsetType = UNSET


operations = [
    Operation(
        "POST",
        "/games/{game_id}/hint",
        ask_hint,
        answers={
            200: Answer(
                "The hint: {'version': the hint's version, 'command': one of the seat's legal commands, "
                "'command_text': it in words, 'reason': null or {'key': glossary key, 'params': {...}, "
                "'text': the reason in the language}, 'receipt': {...}}",
                Hint,
            )
        },
        summary="Ask the strong bot what it would play from your seat (practice tables only)",
        description=(
            "The seat's token, or a browser's 'ts_seat_<game_id>' cookie, while the seat is awaited. The "
            "server asks the 'strong' bot level from the seat's own view (exactly GET /view's), its chance "
            "keyed by the game's secret. The hint is recorded as the table event 'hint_given' (other seats "
            "see only that a hint was asked for, until the game is over), and a game with hints is unrated. "
            "Asked again before the game moves on, the same hint comes back and nothing new is recorded. Per "
            "seat at most TABLESTREAM_HINT_RATE (10/minute)."
        ),
        security=BEARER,
        body=Empty,
        query=AskHintQuery,
        errors=errors(
            401,
            403,
            404,
            409,
            s401="Bad or missing token",
            s403=(
                "hints_not_allowed (not a practice table: never at rated or public tables), not_a_player (the"
                " host's token)"
            ),
            s409=(
                "not_your_turn, seat_taken_over, version_conflict (the game moved on while the bot thought: "
                "ask again), game_over, not_started"
            ),
        ),
        rate_limited=True,
    ),
]
