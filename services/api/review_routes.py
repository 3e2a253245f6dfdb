"""The post-game review (``workers.review``): ``GET /games/{id}/review?seat=N``.

200 with the review once cached; 202 (``Retry-After``) while the ``review`` queue's job builds it
(queued here when it is missing: the first request, or after the cache expired); 409
``game_not_finished`` while the game runs (a review shows what the rules hide until the end) and
``not_a_person`` for a seat the host gave a bot from the start. With ``lang`` every command comes
with its words (``played_text``, ``strong_text``, each share's ``text``)."""

from __future__ import annotations

from typing import Annotated, Any

import anyio.to_thread
import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request
from starlette.responses import Response

from projections.narration import describe_move
from services.api.answers_play import Review, ReviewComputing
from services.api.context import app_context
from services.api.contract import Answer, Operation, ReasonLanguage, errors
from services.api.http import JSONResponse, game_id_of, int_query
from services.errors import ConflictError, UnavailableError
from services.store.queue import enqueue_review, review_key, review_queue
from services.table.queries import check_language

RETRY_SECONDS = 2


async def get_review(request: Request) -> Response:
    game_id = game_id_of(request)
    context = app_context(request)
    folded = await context.queries.load(game_id)
    state = folded.state
    seat = int_query(request, "seat", 0, high=state.players - 1)
    if state.status != "finished":
        raise ConflictError("game_not_finished", "A game's review is available once it is over.")
    if state.takeovers.get(seat) == "host":
        raise ConflictError("not_a_person", "A bot played this seat: there is nothing to review.")
    connection = context.queue
    if connection is None:
        raise UnavailableError("review_unavailable", "Reviews need the job queue.", retry_after=30)
    lang = request.query_params.get("lang") or "en"
    check_language(lang)
    cached = await anyio.to_thread.run_sync(connection.get, review_key(game_id, seat))
    if cached is not None:
        review = worded(msgspec.json.decode(cached), state.game, lang)
        return JSONResponse(review, headers={"Cache-Control": "no-store"})
    await anyio.to_thread.run_sync(enqueue_review, review_queue(connection), game_id, seat)
    return JSONResponse(
        {"status": "computing", "retry_after": RETRY_SECONDS},
        status_code=202,
        headers={"Retry-After": str(RETRY_SECONDS)},
    )


def worded(review: dict[str, Any], game: str, lang: str) -> dict[str, Any]:
    """The cached review of a ``game`` with each command said in ``lang`` (``text`` beside ``command``)."""
    for move in review["moves"]:
        move["played_text"] = describe_move(game, move["played"], lang)
        move["strong_text"] = describe_move(game, move["strong"], lang)
        for share in move["shares"]:
            share["text"] = describe_move(game, share["command"], lang)
    return review


class GetReviewQuery(msgspec.Struct):
    seat: Annotated[int, Meta(ge=0, description="The seat reviewed (default 0)")] | UnsetType = UNSET
    lang: ReasonLanguage | UnsetType = UNSET


operations = [
    Operation(
        "GET",
        "/games/{game_id}/review",
        get_review,
        answers={
            200: Answer(
                "{'game_id', 'seat', 'level': 'strong', 'head', 'differs': count, 'moves': [{'version', "
                "'played', 'played_text', 'strong', 'strong_text', 'differs', 'played_share', 'reason', "
                "'shares': [{'command', 'text', 'share'}]}]}",
                Review,
            ),
            202: Answer(
                "Being built: {'status': 'computing', 'retry_after': s}",
                ReviewComputing,
                headers={"Retry-After": "Seconds to wait before asking again"},
            ),
        },
        summary="The strong bot's review of one seat's moves, once the game is over",
        description=(
            "For each move the seat's player made: what was played, what the 'strong' level would have played"
            " from the seat's view then, whether they differ, and the share of its simulations behind each "
            "candidate. Built off the request by an RQ job (queue 'review') and cached; while it is built the"
            " answer is 202 with Retry-After."
        ),
        query=GetReviewQuery,
        errors=errors(
            404,
            409,
            422,
            s409=(
                "game_not_finished (a review waits for the end), not_a_person (a bot sat there from the "
                "start)"
            ),
            s422="invalid_query (seat or lang)",
        ),
    ),
]
