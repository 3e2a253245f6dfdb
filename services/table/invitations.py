"""Private tables and their invite links.

A table created with the option ``private`` is never listed in the lobby (its projection writes no
lobby entry), and everything about it - its page, view, live stream, events, scores, commands,
seats, replay, audit and export - answers as an unknown game (404 ``game_not_found``) unless the
request shows one of: the invite code (``?invite=<code>``, or the ``ts_invite_<id>`` cookie the
table's page sets when opened with a right code), a token of that table (a seat's or the host's,
as the bearer or the browser's cookie) or the operator's token. So a wrong link is a 404 and a
stranger cannot even learn that the table exists. A finished private table's history (replay,
audit, export) stays with the same people: its players and whoever holds its link.

The code is made at create (128 bits from the CSPRNG) and kept in the game's secret hash beside its
seeds (written in the same atomic step as the create batch, removed with the game): as they are,
not hashed, because seated players may be shown the link again (``GET /games/{id}/invite``) to
pass it on; whoever reads that hash holds the seeds anyway. Whether a game is private never
changes, so each process keeps it in memory after one read.
"""

from __future__ import annotations

import hmac
import secrets
from collections import OrderedDict
from collections.abc import Sequence

from services.errors import AppError
from services.store.event_store import EventStore
from services.store.keys import game_keys
from services.store.requests import Call, Operation, text
from services.table.callers import Callers

INVITE_FIELD = "invite"
"""The field of the game's secret hash that holds a private table's invite code."""
CODE_BYTES = 16
KEPT = 50_000
"""Games whose privacy a process remembers (the oldest remembered are forgotten first)."""
PUBLIC = ""


def new_invite_code() -> str:
    """A fresh invite code: 128 bits, URL-safe."""
    return secrets.token_urlsafe(CODE_BYTES)


def invite_cookie(game_id: str) -> str:
    """The browser cookie that holds a private table's invite code once its link was opened."""
    return f"ts_invite_{game_id}"


def invite_lookup(game_id: str) -> Operation[str | None]:
    """The game's invite code, ``PUBLIC`` for a public game, ``None`` for an unknown one."""
    reply = yield Call(("HMGET", game_keys(game_id).secret, INVITE_FIELD, "root"))
    code, root = reply
    if root is None:
        return None
    return text(code) if code is not None else PUBLIC


class Invitations:
    """Whether a game is private, and whether a request may see it."""

    def __init__(self, store: EventStore, callers: Callers) -> None:
        self.store = store
        self.callers = callers
        self._codes: OrderedDict[str, str] = OrderedDict()

    async def code(self, game_id: str) -> str | None:
        """The invite code of a private game, ``PUBLIC`` for a public one, ``None`` if unknown."""
        known = self._codes.get(game_id)
        if known is not None:
            return known
        found = await self.store.run(invite_lookup(game_id))
        if found is not None:  # an unknown game is not remembered: it may be created later
            self._codes[game_id] = found
            if len(self._codes) > KEPT:
                self._codes.popitem(last=False)
        return found

    def known_public(self, game_id: str) -> bool:
        """Whether this process already knows ``game_id`` to be a public table (no I/O)."""
        return self._codes.get(game_id) == PUBLIC

    async def admits(self, game_id: str, code: str, offered: Sequence[str], tokens: Sequence[str]) -> bool:
        """Whether a request about private game ``game_id`` (invite code ``code``) may go on: it
        offers the code (``offered``: from the query or the cookie) or a token of that table."""
        if any(hmac.compare_digest(code.encode(), given.encode()) for given in offered if given):
            return True
        for token in tokens:
            try:
                # from this process's memory when it can: the route verifies the token again
                caller = await self.callers.identify(game_id, token, assume=True)
            except AppError:  # not a token of this table (an account's bearer, a stale cookie)
                continue
            if caller.role in ("seat", "host", "operator"):
                return True
        return False
