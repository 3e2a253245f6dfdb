"""Gzip for the API's large JSON answers, and for nothing on the hot paths.

The answers worth compressing are the long ones a page reads once: the lobby, the options schema,
a game's events, replay, export, audit and scores, the OpenAPI document, leaderboards and account
histories (several KiB of repetitive JSON, 80-90 % smaller gzipped). Views and commands are a
player's hot path and small: they are never touched (``services.api.view_lane`` answers kept views
ahead of all middleware anyway), nor are live streams (server-sent events must reach the client as
each message is written, never held in a compressor's buffer).

``CompressLargeAnswers`` wraps only a ``GET`` whose path is one of those, at level 6 (about level 9's
ratio on JSON at a third of its CPU), from 1 KiB; everything else goes straight to the app after
one method check (and, for a ``GET``, one regular expression). Starlette's ``GZipMiddleware``
responders do the work (they add ``Vary: Accept-Encoding`` and leave event streams alone); the
static files and the page shell are compressed once, ahead of time (``services.api.assets``).
"""

from __future__ import annotations

import re

from starlette.datastructures import Headers
from starlette.middleware.gzip import GZipResponder, IdentityResponder
from starlette.types import ASGIApp, Receive, Scope, Send

from services.api.asset_routes import accepts_gzip

GAME = r"[A-Za-z0-9_-]{1,64}"
COMPRESSED = re.compile(
    rf"/games(?:/options|/{GAME}/(?:events|replay|export|audit|scores))?"
    r"|/openapi\.json|/leaderboards/[^/]+|/accounts/[^/]+/history"
)
MINIMUM_SIZE = 1024
LEVEL = 6


class CompressLargeAnswers:
    def __init__(self, app: ASGIApp, minimum_size: int = MINIMUM_SIZE, level: int = LEVEL) -> None:
        self.app = app
        self.minimum_size = minimum_size
        self.level = level

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or not COMPRESSED.fullmatch(scope["path"]):
            await self.app(scope, receive, send)
            return
        if accepts_gzip(Headers(scope=scope).get("accept-encoding", "")):
            await GZipResponder(self.app, self.minimum_size, compresslevel=self.level)(scope, receive, send)
        else:  # says Vary: Accept-Encoding all the same, for caches in between
            await IdentityResponder(self.app, self.minimum_size)(scope, receive, send)
