"""Kept views answered ahead of the other middleware and the router (``services.api.view_cache``)."""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from services.api.context import AppContext
from services.api.http import bearer, remembered_tokens
from services.api.raw_responses import send_json
from services.api.view_cache import viewer_of
from services.errors import UnauthorizedError

VIEW_PATH = re.compile(r"/games/([A-Za-z0-9_-]{1,64})/view")  # the game ids of http.GAME_ID


class ViewLane:
    """Answers ``GET /games/{id}/view`` (no query: not time travel) with a kept view when the caller
    is known without I/O (``Callers.known``); passes everything else on, and everything while the
    app starts or drains. Like a view the route answers, it echoes the request id."""

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
    """The caller's kept view with its clock, or ``None`` (the route answers)."""
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
    return context.queries.finish(parts) if parts is not None else None
