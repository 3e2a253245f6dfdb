"""An account: a player who comes back. Event-sourced like a table, folded from its own stream.

The stream records registration, password changes, every token issued and every token revoked
(a log-out; at a password change, all but the changer's); the state is what a login or a bearer
check needs. Secrets appear only as hashes (SHA-256 of a token, Argon2 of a password), never as
themselves. Pure: hashing and clocks belong to the caller.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Union

import msgspec

from domain.kernel import Event


class AccountRegistered(Event, tag="account_registered", frozen=True):
    account_id: str
    display_name: str  # as the player typed it, NFKC-normalised and trimmed
    normalised: str  # NFKC + casefold: what "the same name" means
    skeleton: str  # the confusables skeleton: what "a name that looks the same" means


class PasswordSet(Event, tag="password_set", frozen=True):
    password_hash: str  # Argon2id, PHC string format


class TokenIssued(Event, tag="token_issued", frozen=True):
    token_hash: str  # SHA-256 hex of the bearer token
    via: str  # "register" or "login"
    issued_ms: int = 0  # when (ms since the epoch); 0: issued before tokens carried their time


class TokenRevoked(Event, tag="token_revoked", frozen=True):
    token_hash: str  # SHA-256 hex of a token issued before: it stops working (a log-out)


class OtherTokensRevoked(Event, tag="other_tokens_revoked", frozen=True):
    kept_hash: str  # the one token that keeps working (the password changer's); every other stops


class AccountBanned(Event, tag="account_banned", frozen=True):
    """An operator banned the account: it may not log in, and its tokens are refused (403
    ``account_banned``) until an ``account_unbanned``. ``operator``: ``admin`` or an operator
    account's id."""

    reason: str
    operator: str


class AccountUnbanned(Event, tag="account_unbanned", frozen=True):
    reason: str
    operator: str


ACCOUNT_EVENTS: tuple[type[Event], ...] = (
    AccountRegistered,
    PasswordSet,
    TokenIssued,
    TokenRevoked,
    OtherTokensRevoked,
    AccountBanned,
    AccountUnbanned,
)
# a msgspec tagged union
AccountEvent = Union[  # noqa: UP007
    AccountRegistered,
    PasswordSet,
    TokenIssued,
    TokenRevoked,
    OtherTokensRevoked,
    AccountBanned,
    AccountUnbanned,
]


class AccountState(msgspec.Struct, frozen=True, kw_only=True):
    account_id: str
    display_name: str
    normalised: str
    skeleton: str
    password_hash: str | None = None
    token_hashes: frozenset[str] = frozenset()
    token_issued: dict[str, int] = {}  # token hash -> issued_ms (a token's age: services.accounts.registry)
    banned: bool = False
    ban_reason: str | None = None


def evolve(state: AccountState | None, event: Event) -> AccountState:
    if isinstance(event, AccountRegistered):
        return AccountState(
            account_id=event.account_id,
            display_name=event.display_name,
            normalised=event.normalised,
            skeleton=event.skeleton,
        )
    assert state is not None, "an account's first event is account_registered"
    if isinstance(event, PasswordSet):
        return msgspec.structs.replace(state, password_hash=event.password_hash)
    if isinstance(event, TokenIssued):
        return msgspec.structs.replace(
            state,
            token_hashes=state.token_hashes | {event.token_hash},
            token_issued={**state.token_issued, event.token_hash: event.issued_ms},
        )
    if isinstance(event, TokenRevoked):
        issued = {h: at for h, at in state.token_issued.items() if h != event.token_hash}
        return msgspec.structs.replace(
            state, token_hashes=state.token_hashes - {event.token_hash}, token_issued=issued
        )
    if isinstance(event, OtherTokensRevoked):
        issued = {h: at for h, at in state.token_issued.items() if h == event.kept_hash}
        return msgspec.structs.replace(
            state, token_hashes=state.token_hashes & {event.kept_hash}, token_issued=issued
        )
    if isinstance(event, AccountBanned):
        return msgspec.structs.replace(state, banned=True, ban_reason=event.reason)
    if isinstance(event, AccountUnbanned):
        return msgspec.structs.replace(state, banned=False, ban_reason=None)
    raise TypeError(f"not an account event: {event!r}")


def fold(events: Iterable[Event]) -> AccountState | None:
    state: AccountState | None = None
    for event in events:
        state = evolve(state, event)
    return state
