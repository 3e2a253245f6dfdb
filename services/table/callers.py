"""Who is asking: a seat, the host, the operator (admin token) or, without a token, a spectator.

A caller may be *assumed* from the role this process remembers for its token (``assume=True``):
then it carries a ``TokenCheck``, and whoever serves it reads the token's role again in the same
round trip as its own reads (views and commands: ``services.store.operations``) and calls
``verify`` before using any of them. A token revoked or rebound meanwhile raises ``TokenChanged``:
nothing read for it is shown, nothing is decided, and the route identifies the caller afresh
(``services.api.http.identified``). A remembered token so costs no round trip of its own.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from services.errors import ForbiddenError, UnauthorizedError
from services.store.tokens import Remembered, TokenStore

Role = Literal["seat", "spectator", "host", "operator"]


@dataclass(frozen=True)
class TokenCheck:
    """An identity assumed from memory: the token's digest and the role it must still hold."""

    game_id: str
    digest: str
    role: str


class TokenChanged(Exception):
    """An assumed identity no longer holds: its token was revoked or rebound (see the module)."""

    def __init__(self, check: TokenCheck) -> None:
        super().__init__(f"token of game {check.game_id} changed role")
        self.check = check


def verify(check: TokenCheck | None, role_now: str | None) -> None:
    """Raise ``TokenChanged`` unless the assumed identity (if any) still holds ``role_now``."""
    if check is not None and role_now != check.role:
        raise TokenChanged(check)


@dataclass(frozen=True)
class Caller:
    role: Role
    seat: int | None = None
    check: TokenCheck | None = field(default=None, compare=False)
    """Set when assumed from memory: verify it in the round trip that serves the caller."""

    @property
    def token_digest(self) -> str | None:
        return self.check.digest if self.check is not None else None

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

    async def identify(self, game_id: str, token: str | None, assume: bool = False) -> Caller:
        """``assume``: a remembered token's caller without I/O, to be verified by whoever serves it."""
        if token is None:
            return Caller("spectator")
        if self._is_admin(token):
            return Caller("operator")
        if assume and (known := self._assumed(game_id, token)) is not None:
            return known
        role = await self._tokens.role(game_id, token)
        if role is None:
            raise UnauthorizedError("unauthorized", "The token is not valid for this game.")
        return _caller(role)

    async def remembered(self, game_id: str, tokens: Sequence[str], assume: bool = False) -> Caller:
        """A caller without a credential but with tokens a browser remembers (seat first): the first
        still valid for this game counts; a stale one is ignored, and with none left it is a spectator.
        The operator's token is never remembered. ``assume``: as ``identify``, when the first token's
        role is remembered (a later one may only count if the first is no longer valid)."""
        if assume and tokens and (known := self._assumed(game_id, tokens[0])) is not None:
            return known
        for token in tokens:
            role = await self._tokens.role(game_id, token)
            if role is not None:
                return _caller(role)
        return Caller("spectator")

    def known(self, game_id: str, token: str | None, remembered: Sequence[str]) -> Caller | None:
        """The caller ``identify(token, assume=True)`` (or, without a token, ``remembered(remembered,
        assume=True)``) would give, when that needs no I/O; ``None`` when it does, and for the
        operator."""
        if token is None:
            return self._assumed(game_id, remembered[0]) if remembered else Caller("spectator")
        return None if self._is_admin(token) else self._assumed(game_id, token)

    def forget(self, check: TokenCheck) -> None:
        """Drop an assumed identity that did not hold."""
        self._tokens.forget(check.game_id, check.digest)

    def is_operator(self, token: str | None) -> bool:
        """Whether ``token`` is the operator's admin token (never true when none is configured)."""
        return token is not None and self._is_admin(token)

    def is_admin(self, token: str) -> bool:
        """Whether ``token`` is the operator's admin token (never when none is configured)."""
        return self._is_admin(token)

    def _is_admin(self, token: str) -> bool:
        admin = self._admin_token
        return admin is not None and admin != "" and hmac.compare_digest(token.encode(), admin.encode())

    def _assumed(self, game_id: str, token: str) -> Caller | None:
        known = self._tokens.remembered(game_id, token)
        return _assumed_caller(game_id, known) if known is not None else None


def _assumed_caller(game_id: str, known: Remembered) -> Caller:
    caller = _caller(known.role)
    return Caller(caller.role, caller.seat, TokenCheck(game_id, known.digest, known.role))


def _caller(role: str) -> Caller:
    """The caller of a game token's stored role: ``"host"`` or a seat number."""
    return Caller("host") if role == "host" else Caller("seat", int(role))
