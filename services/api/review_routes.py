"""The post-game review (``workers.review``): ``GET /games/{id}/review?seat=N``.

200 with the review once cached; 202 (``Retry-After``) while the ``review`` queue's job builds it
(queued here when it is missing: the first request, or after the cache expired); 409
``game_not_finished`` while the game runs (a review shows what the rules hide until the end) and
``not_a_person`` for a seat the host gave a bot from the start."""

from __future__ import annotations

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from services.api.context import app_context
from services.api.http import JSONResponse, game_id_of, int_query
from services.errors import ConflictError, UnavailableError
from services.store.queue import enqueue_review, review_key, review_queue

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
    cached = await anyio.to_thread.run_sync(connection.get, review_key(game_id, seat))
    if cached is not None:
        return Response(cached, media_type="application/json", headers={"Cache-Control": "no-store"})
    await anyio.to_thread.run_sync(enqueue_review, review_queue(connection), game_id, seat)
    return JSONResponse(
        {"status": "computing", "retry_after": RETRY_SECONDS},
        status_code=202,
        headers={"Retry-After": str(RETRY_SECONDS)},
    )


routes = [Route("/games/{game_id}/review", get_review, methods=["GET"])]
