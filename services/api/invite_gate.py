"""The gate of private tables (``services.table.invitations``), ahead of the kept-view lane and the router.

A request about a game (``/games/{id}/...``, or the pages ``/tables/{id}``, ``/replay/{id}``,
``/audit/{id}``, ``/disputes/{id}/{dispute}``) of a private table goes on only with the table's
invite code or one of its tokens. Without them it is answered exactly as a request about a game that
does not exist: its path is turned into one naming an id no game can have (the real id with its last
character replaced by ``_``, which no id the server makes contains: they are hexadecimal), the app
answers that as it answers any unknown game (404 ``game_not_found``, or whatever the route says
first, e.g. 401 for a command without a token), and the id in the answer is turned back into the one
asked for (the same length: the answer's length is unchanged). So a wrong link is a 404 and a
private table's existence does not leak.

A page opened with the right ``?invite=<code>`` also gets the code in an HttpOnly cookie
(``ts_invite_<id>``), so that the page's own requests (its view, live stream, join) are let in.
"""

from __future__ import annotations

import re
from http.cookies import SimpleCookie
from urllib.parse import parse_qs

from starlette.datastructures import State
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.api.context import AppContext
from services.table.invitations import PUBLIC, Invitations, invite_cookie

GAME_PATH = re.compile(r"/games/([A-Za-z0-9_-]{1,64})(/.+)")  # the game ids of http.GAME_ID
PAGE_PATH = re.compile(r"/(tables|replay|audit)/([A-Za-z0-9_-]{1,64})")
DISPUTE_PAGE = re.compile(r"/disputes/([A-Za-z0-9_-]{1,64})(/[A-Za-z0-9_-]{1,64})")
INVITE_COOKIE_SECONDS = 30 * 24 * 3600


def invitations_of(scope: Scope) -> Invitations | None:
    """The process's ``Invitations`` (made on first use), ``None`` while the app starts."""
    state = scope["app"].state
    context: AppContext | None = getattr(state, "context", None)
    if context is None:
        return None
    found: Invitations | None = getattr(state, "invitations", None)
    if found is None or found.store is not context.store:
        found = state.invitations = Invitations(context.store, context.callers)
    return found


def known_public(state: State, context: AppContext, game_id: str) -> bool:
    """Whether the process already knows ``game_id`` to be a public table's (no I/O): a request
    about it needs no gate. ``False`` for a private table and for one the gate has not met yet."""
    found: Invitations | None = getattr(state, "invitations", None)
    return found is not None and found.store is context.store and found.known_public(game_id)


class InviteGate:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        page = False
        if (match := GAME_PATH.fullmatch(path)) is not None:
            game_id, prefix, rest = match.group(1), "/games/", match.group(2)
        elif (page_match := PAGE_PATH.fullmatch(path)) is not None:
            game_id, prefix, rest = page_match.group(2), f"/{page_match.group(1)}/", ""
            page = True
        elif (dispute_match := DISPUTE_PAGE.fullmatch(path)) is not None:
            game_id, prefix, rest = dispute_match.group(1), "/disputes/", dispute_match.group(2)
            page = True
        else:
            await self.app(scope, receive, send)
            return
        invitations = invitations_of(scope)
        code = await invitations.code(game_id) if invitations is not None else None
        if invitations is None or code is None or code == PUBLIC:
            await self.app(scope, receive, send)
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = query.get("invite", [])[-1:]
        cookies = _cookies(scope)
        offered = [*given, cookies.get(invite_cookie(game_id), "")]
        tokens = [cookies.get(f"ts_{kind}_{game_id}", "") for kind in ("seat", "host")]
        if (bearer := _bearer(scope)) is not None:
            tokens.insert(0, bearer)
        if await invitations.admits(game_id, code, offered, [t for t in tokens if t]):
            if page and given and given[0] == code:
                await self.app(scope, receive, _with_cookie(scope, send, game_id, code))
            else:
                await self.app(scope, receive, send)
            return
        await self._as_unknown(scope, receive, send, game_id, prefix + _unknown(game_id) + rest)

    async def _as_unknown(self, scope: Scope, receive: Receive, send: Send, game_id: str, path: str) -> None:
        hidden = _unknown(game_id).encode()
        real = game_id.encode()

        async def send_back(message: Message) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                message = {**message, "body": message["body"].replace(hidden, real)}
            await send(message)

        inner = {**scope, "path": path, "raw_path": path.encode()}
        await self.app(inner, receive, send_back)


def _unknown(game_id: str) -> str:
    """An id of the same length that no game has (ids the server makes are hexadecimal)."""
    return game_id[:-1] + "_"


def _cookies(scope: Scope) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    for name, value in scope["headers"]:
        if name == b"cookie":
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed cookie header: as if it had none of ours
                continue
    return {key: morsel.value for key, morsel in jar.items()}


def _bearer(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def _with_cookie(scope: Scope, send: Send, game_id: str, code: str) -> Send:
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    cookie = (
        f"{invite_cookie(game_id)}={code}; Max-Age={INVITE_COOKIE_SECONDS}; Path=/; HttpOnly; "
        f"SameSite=Strict{secure}"
    ).encode()

    async def send_with_cookie(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message["headers"], (b"set-cookie", cookie)]}
        await send(message)

    return send_with_cookie
