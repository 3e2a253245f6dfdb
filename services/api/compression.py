"""Gzip for the API's large JSON answers, and for nothing on the hot paths.

The answers worth compressing are the long ones a page reads once: the lobby, the options schema,
a game's events, replay, export, audit and scores, the OpenAPI document, leaderboards and account
histories (several KiB of repetitive JSON, 80-90 % smaller gzipped). Views and commands are a
player's hot path and small: they are never touched (``services.api.view_lane`` answers kept views
ahead of all middleware anyway), nor are live streams (server-sent events must reach the client as
each message is written, never held in a compressor's buffer).

``CompressLargeAnswers`` wraps only a ``GET`` whose path is one of those, at level 6, from 1 KiB.
Measured on a whole 4-player Skull King game: its events with sentences, 52 KiB, become 7.4 KiB in
0.96 ms (level 9: 6.8 KiB in 2.3 ms; level 1: 10.6 KiB in 0.26 ms); its export, 153 KiB, 38.8 KiB in
3.2 ms (level 9: 38.0 KiB in 7.1 ms; bodies from 128 KiB are compressed in a worker thread).
Everything else goes straight to the app after one method check (and, for a ``GET``, a set lookup
of its last segment): about 0.3 us more per command and 0.6 us per view not answered by the view
lane, measured. Starlette's ``GZipMiddleware`` responders do the work (they add
``Vary: Accept-Encoding`` and leave event streams alone); the static files and the page shell are
compressed once, ahead of time (``services.api.assets``).
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
# The last segments of those paths: a set lookup turns every other GET (views above all) away
# before the regular expression runs.
TAILS = frozenset(
    {"games", "options", "events", "replay", "export", "audit", "scores", "openapi.json", "history"}
)
MINIMUM_SIZE = 1024
LEVEL = 6


def compressed(path: str) -> bool:
    """Whether a GET of ``path`` is one of the long answers worth compressing."""
    if path[path.rfind("/") + 1 :] not in TAILS and not path.startswith("/leaderboards/"):
        return False
    return COMPRESSED.fullmatch(path) is not None


class CompressLargeAnswers:
    def __init__(self, app: ASGIApp, minimum_size: int = MINIMUM_SIZE, level: int = LEVEL) -> None:
        self.app = app
        self.minimum_size = minimum_size
        self.level = level

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "GET" or not compressed(scope["path"]):
            await self.app(scope, receive, send)
            return
        if accepts_gzip(Headers(scope=scope).get("accept-encoding", "")):
            await GZipResponder(self.app, self.minimum_size, compresslevel=self.level)(scope, receive, send)
        else:  # says Vary: Accept-Encoding all the same, for caches in between
            await IdentityResponder(self.app, self.minimum_size)(scope, receive, send)
