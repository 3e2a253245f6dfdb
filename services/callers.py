"""Who is asking: a seat, the host, the operator (admin token) or, without a token, a spectator."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from services.errors import ForbiddenError, UnauthorizedError
from services.store.tokens import TokenStore

Role = Literal["seat", "spectator", "host", "operator"]


@dataclass(frozen=True)
class Caller:
    role: Role
    seat: int | None = None

    def acting_seat(self) -> int:
        """The seat this caller may send commands for; only a seated player's token has one."""
        if self.role == "spectator":
            raise UnauthorizedError(
                "unauthorized", "Commands need a seat token: 'Authorization: Bearer <token>'."
            )
        if self.seat is None:
            raise ForbiddenError("not_a_player", "Only a seated player's token may send commands.")
        return self.seat


class Callers:
    """Resolves bearer tokens against a game's tokens and the operator's admin token."""

    def __init__(self, tokens: TokenStore, admin_token: str | None) -> None:
        self._tokens = tokens
        self._admin_token = admin_token

    async def identify(self, game_id: str, token: str | None) -> Caller:
        if token is None:
            return Caller("spectator")
        admin = self._admin_token
        if admin and hmac.compare_digest(token.encode(), admin.encode()):
            return Caller("operator")
        role = await self._tokens.role(game_id, token)
        if role is None:
            raise UnauthorizedError("unauthorized", "The token is not valid for this game.")
        return _caller(role)

    async def remembered(self, game_id: str, tokens: Sequence[str]) -> Caller:
        """A caller without a credential but with tokens a browser remembers (seat first): the first
        still valid for this game counts; a stale one is ignored, and with none left it is a spectator.
        The operator's token is never remembered."""
        for token in tokens:
            role = await self._tokens.role(game_id, token)
            if role is not None:
                return _caller(role)
        return Caller("spectator")


def _caller(role: str) -> Caller:
    """The caller of a game token's stored role: ``"host"`` or a seat number."""
    return Caller("host") if role == "host" else Caller("seat", int(role))
