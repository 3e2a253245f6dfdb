"""Accounts: register a display name, get a bearer token, log in again with a password.

An account is its own event stream (``domain.accounts``), appended with an exact expected
version; its name is claimed atomically on the name's confusables skeleton (``services.names``),
so no two accounts have names that look alike. Tokens look like ``<account id>.<secret>`` (the id
says which stream to check) and are stored only as SHA-256; passwords only as Argon2id hashes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

import anyio.to_thread
import msgspec
import structlog
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from domain.accounts import (
    AccountEvent,
    AccountRegistered,
    AccountState,
    PasswordSet,
    TokenIssued,
    TokenRevoked,
    fold,
)
from domain.kernel import Event
from services.errors import ConflictError, InvalidError, NotFoundError, UnauthorizedError
from services.names import Name, check_single_script, checked_name, normalise, skeleton
from services.store import accounts as store_accounts
from services.store.event_store import EventStore

ACCOUNT_ID = re.compile(r"[0-9a-f]{16}")
MIN_PASSWORD, MAX_PASSWORD = 8, 256
MAX_ATTEMPTS = 25

log = structlog.get_logger("tablestream.accounts")
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AccountEvent)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Accounts:
    """The write side of accounts, and the bearer check of account tokens."""

    def __init__(self, store: EventStore, hasher: PasswordHasher | None = None) -> None:
        self.store = store
        self.hasher = hasher or PasswordHasher()

    async def register(self, raw_name: str, password: str | None) -> tuple[AccountState, str]:
        """A new account and its first token; ``name_taken`` (409) for a name already registered
        up to case and width, ``name_confusable`` (422) for one that only looks like it."""
        name = checked_name(raw_name)
        _check_password(password)
        holder = await self.store.run(store_accounts.name_holder(name.skeleton))
        if holder is not None:
            await self._refuse_lookalike(name, holder)
        check_single_script(name)
        account_id = secrets.token_hex(8)
        holder = await self.store.run(store_accounts.claim_name(name.skeleton, account_id))
        if holder is not None:  # claimed by a racing registration since the lookup
            await self._refuse_lookalike(name, holder)
        token = _new_token(account_id)
        events: list[Event] = [
            AccountRegistered(
                account_id=account_id,
                display_name=name.display,
                normalised=name.normalised,
                skeleton=name.skeleton,
            )
        ]
        if password is not None:
            events.append(PasswordSet(password_hash=await self._hash(password)))
        events.append(TokenIssued(token_hash=token_digest(token), via="register"))
        try:
            appended = await self.store.run(
                store_accounts.append_account(account_id, 0, [_encoder.encode(e) for e in events])
            )
        except BaseException:
            await self.store.run(store_accounts.release_name(name.skeleton, account_id))
            raise
        if appended.status != "ok":  # a fresh random id: only a broken store gets here
            await self.store.run(store_accounts.release_name(name.skeleton, account_id))
            raise RuntimeError(f"account {account_id} already had a stream")
        state = fold(events)
        assert state is not None
        log.info("account_registered", account_id=account_id, outcome="ok")
        return state, token

    async def login(self, raw_name: str, password: str) -> tuple[AccountState, str]:
        """A fresh token for the account of that name, if the password is its own."""
        wrong = UnauthorizedError("invalid_credentials", "The name or the password is wrong.")
        state = await self.by_name(raw_name)
        if state is None or state.password_hash is None:
            raise wrong
        if not await self._verify(state.password_hash, password):
            log.info("login", account_id=state.account_id, outcome="wrong_password")
            raise wrong
        token = _new_token(state.account_id)
        await self._append(
            state.account_id, lambda _: [TokenIssued(token_hash=token_digest(token), via="login")]
        )
        log.info("login", account_id=state.account_id, outcome="ok")
        return state, token

    async def set_password(self, account: AccountState, password: str) -> None:
        _check_password(password)
        password_hash = await self._hash(password)
        await self._append(account.account_id, lambda _: [PasswordSet(password_hash=password_hash)])

    async def log_out(self, token: str) -> AccountState:
        """Revoke this token of its account (``invalid_account_token``, 401, if it does not work):
        it stops working at once; the account's other tokens (other devices) keep working."""
        state = await self.authenticate(token)
        digest = token_digest(token)
        await self._append(
            state.account_id,
            lambda current: [TokenRevoked(token_hash=digest)] if digest in current.token_hashes else [],
        )
        log.info("logout", account_id=state.account_id, outcome="ok")
        return state

    async def authenticate(self, token: str) -> AccountState:
        """The account whose token this is; ``invalid_account_token`` (401) otherwise."""
        invalid = UnauthorizedError("invalid_account_token", "The account token is not valid.")
        account_id, dot, _ = token.partition(".")
        if not dot or not ACCOUNT_ID.fullmatch(account_id):
            raise invalid
        state = await self.load(account_id)
        digest = token_digest(token)
        if state is None or not any(hmac.compare_digest(digest, known) for known in state.token_hashes):
            raise invalid
        return state

    async def load(self, account_id: str) -> AccountState | None:
        if not ACCOUNT_ID.fullmatch(account_id):
            return None
        state, _ = await self._fold(account_id)
        return state

    async def by_name(self, raw_name: str) -> AccountState | None:
        """The account registered under this name (up to case and width), if any."""
        normalised = normalise(raw_name)
        holder = await self.store.run(store_accounts.name_holder(skeleton(normalised)))
        state = None if holder is None else await self.load(holder)
        return state if state is not None and state.normalised == normalised else None

    async def find(self, name_or_id: str) -> AccountState:
        """An account by id or by name; ``account_not_found`` (404) otherwise."""
        state = await self.load(name_or_id) if ACCOUNT_ID.fullmatch(name_or_id) else None
        state = state or await self.by_name(name_or_id)
        if state is None:
            raise NotFoundError("account_not_found", f"There is no account {name_or_id!r}.")
        return state

    # -- internals ------------------------------------------------------------------------------

    async def _refuse_lookalike(self, name: Name, holder: str) -> None:
        existing = await self.load(holder)
        if existing is None or existing.normalised == name.normalised:
            raise ConflictError("name_taken", f"The name {name.display!r} is already registered.")
        raise InvalidError(
            "name_confusable",
            f"The name {name.display!r} looks like the registered name {existing.display_name!r}.",
            like=existing.display_name,
        )

    async def _fold(self, account_id: str) -> tuple[AccountState | None, int]:
        raw = await self.store.run(store_accounts.account_events(account_id))
        return fold(_decoder.decode(data) for data in raw), len(raw)

    async def _append(self, account_id: str, decide: Callable[[AccountState], list[Event]]) -> None:
        for _ in range(MAX_ATTEMPTS):
            state, version = await self._fold(account_id)
            if state is None:
                raise NotFoundError("account_not_found", f"There is no account {account_id!r}.")
            events = [_encoder.encode(e) for e in decide(state)]
            if not events:  # nothing left to record (a token revoked by a racing log-out)
                return
            appended = await self.store.run(store_accounts.append_account(account_id, version, events))
            if appended.status == "ok":
                return
        raise ConflictError("account_busy", "The account changed too often; try again.")

    async def _hash(self, password: str) -> str:
        hashed: str = await anyio.to_thread.run_sync(self.hasher.hash, password)
        return hashed

    async def _verify(self, password_hash: str, password: str) -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(password_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        return await anyio.to_thread.run_sync(verify)


def _check_password(password: str | None) -> None:
    if password is not None and not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise InvalidError("invalid_password", f"A password has {MIN_PASSWORD} to {MAX_PASSWORD} characters.")


def _new_token(account_id: str) -> str:
    return f"{account_id}.{secrets.token_urlsafe(24)}"
