"""Views answered ahead of the other middleware and the router: kept ones (``services.api.view_cache``)
and, for a caller known without I/O, ones read from Redis (one round trip, kept as the route keeps
them). Anything else, and any refusal or error, is left to the route, which answers it."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from services.api.context import AppContext
from services.api.http import bearer, remembered_tokens
from services.api.raw_responses import send_json
from services.api.view_cache import viewer_of
from services.errors import UnauthorizedError
from services.table.callers import Caller
from services.table.queries import ViewParts

VIEW_PATH = re.compile(r"/games/([A-Za-z0-9_-]{1,64})/view")  # the game ids of http.GAME_ID


class ViewLane:
    """Answers ``GET /games/{id}/view`` (no query: not time travel) when the caller is known without
    I/O (``Callers.known``): with the kept view, else with the view read from Redis (``read_view``);
    passes everything else on, and everything while the app starts or drains. Like a view the route
    answers, it echoes the request id."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and scope["method"] == "GET"
            and not scope["query_string"]
            and (match := VIEW_PATH.fullmatch(scope["path"])) is not None
        ):
            context: AppContext | None = getattr(scope["app"].state, "context", None)
            if context is not None and not context.drain.draining:
                body = await kept_view(context, match.group(1), Request(scope))
                if body is not None:
                    await send_json(scope, send, 200, body)
                    return
        await self.app(scope, receive, send)


async def kept_view(context: AppContext, game_id: str, request: Request) -> bytes | None:
    """The caller's view with its clock, kept or read, or ``None`` (the route answers)."""
    try:
        token = bearer(request)
    except UnauthorizedError:
        return None
    remembered = remembered_tokens(request, game_id) if token is None else []
    caller = context.callers.known(game_id, token, remembered)
    viewer = viewer_of(caller) if caller is not None else None
    if viewer is None:
        return None
    parts = await context.views.get(game_id, viewer)
    if parts is None:
        parts = await read_view(context, game_id, caller, viewer)
    return context.queries.finish(parts) if parts is not None else None


async def read_view(context: AppContext, game_id: str, caller: Caller, viewer: str) -> ViewParts | None:
    """The view read from Redis as the route reads it (``GameQueries.view_parts``: one round trip,
    the assumed token verified in it) and kept as the route keeps it; ``None`` on any refusal or
    error (a token that changed, an unknown game, Redis down), which the route then meets again
    and answers as it always does (nothing was shown or kept)."""
    views = context.views
    ticket = views.ticket(game_id)  # before the read
    try:
        parts = await context.queries.view_parts(game_id, caller.seat, caller.check)
    except Exception:
        return None
    views.keep(game_id, ticket, viewer, parts)
    return parts
