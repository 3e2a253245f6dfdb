"""Accounts: register a display name, get a bearer token, log in again with a password.

An account is its own event stream (``domain.accounts``), appended with an exact expected
version; its name is claimed atomically on the name's confusables skeleton (``services.accounts.names``),
so no two accounts have names that look alike. Tokens look like ``<account id>.<secret>`` (the id
says which stream to check) and are stored only as SHA-256; passwords only as Argon2id hashes.

Argon2id costs 64 MiB and a few hundred milliseconds per hash or check, so every one of them runs
through ``HashPool``: a few at a time per process, in threads, the others waiting a bounded time
in a bounded queue (then 503 ``password_check_busy``). A login of a name without an account, or of
an account without a password, checks the password against a dummy hash all the same, so the time
an answer takes does not say which names have a password. How often anyone may ask is
``services.api.rate_limits.LoginGuard``'s business.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread
import msgspec
import structlog
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from domain.accounts import (
    AccountBanned,
    AccountEvent,
    AccountRegistered,
    AccountState,
    AccountUnbanned,
    OtherTokensRevoked,
    PasswordSet,
    TokenIssued,
    TokenRevoked,
    fold,
)
from domain.kernel import Event
from services.accounts.names import Name, check_single_script, checked_name, normalise, skeleton
from services.errors import (
    ConflictError,
    ForbiddenError,
    InvalidError,
    NotFoundError,
    UnauthorizedError,
    UnavailableError,
)
from services.store import accounts as store_accounts
from services.store import name_index, retention
from services.store.event_store import EventStore
from services.store.requests import clock_ms
from services.telemetry import metrics

ACCOUNT_ID = re.compile(r"[0-9a-f]{16}")
DAY_MS = 86_400_000
TOKEN_DAYS = 180.0
"""How long an account token works after it was issued (a login, a registration): as long as the
browser keeps its cookie (``services.api.http.ACCOUNT_COOKIE_SECONDS``). Then 401
``account_token_expired``, and the player logs in again."""
LEGACY_ISSUED_MS = 1_796_515_200_000
"""2026-12-06T00:00Z, when tokens began to carry their time: a token recorded before counts as
issued then, so it expires with the others of its day rather than never."""
MIN_PASSWORD, MAX_PASSWORD = 8, 256
MAX_ATTEMPTS = 25
MAX_REASON = 200

T = TypeVar("T")

log = structlog.get_logger("tablestream.accounts")
_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(AccountEvent)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class HashPool:
    """Runs Argon2 work in threads, ``slots`` at a time; up to ``queue`` more wait for a slot, each
    at most ``wait_seconds``; past either bound the call is refused at once with 503
    ``password_check_busy`` (memory stays near ``slots`` x 64 MiB whatever the load)."""

    def __init__(self, slots: int = 2, queue: int = 32, wait_seconds: float = 5.0) -> None:
        self._limiter = anyio.CapacityLimiter(slots)
        self._threads = anyio.CapacityLimiter(slots)
        self._queue = queue
        self._wait = wait_seconds
        self._waiting = 0

    async def run(self, work: Callable[[], T]) -> T:
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self._wait_for_slot()
        try:
            return await anyio.to_thread.run_sync(work, limiter=self._threads)
        finally:
            self._limiter.release()

    async def _wait_for_slot(self) -> None:
        if self._waiting >= self._queue:
            raise _busy()
        acquired = False
        self._waiting += 1
        try:
            with anyio.move_on_after(self._wait):
                await self._limiter.acquire()
                acquired = True
        finally:
            self._waiting -= 1
        if not acquired:
            raise _busy()


def _busy() -> UnavailableError:
    return UnavailableError(
        "password_check_busy", "Too many passwords are being checked right now; try again in a moment.", 1
    )


class Accounts:
    """The write side of accounts, and the bearer check of account tokens."""

    def __init__(
        self,
        store: EventStore,
        hasher: PasswordHasher | None = None,
        pool: HashPool | None = None,
        token_days: float = TOKEN_DAYS,
        clock: Callable[[], int] = clock_ms,
    ) -> None:
        self.store = store
        self.hasher = hasher or PasswordHasher()
        self.pool = pool or HashPool()
        self.token_ms = int(token_days * DAY_MS)
        self.clock = clock
        self._dummy_hash: str | None = None

    async def register(
        self, raw_name: str, password: str | None, admit: Callable[[], Awaitable[None]] | None = None
    ) -> tuple[AccountState, str]:
        """A new account and its first token; ``name_taken`` (409) for a name already registered
        up to case and width, ``name_confusable`` (422) for one that only looks like it. ``admit``
        is awaited once the name is known to be free, before anything costly: a per-client cap on
        accounts created raises there."""
        name = checked_name(raw_name)
        _check_password(password)
        holder = await self.store.run(store_accounts.name_holder(name.skeleton))
        if holder is not None:
            await self._refuse_lookalike(name, holder)
        check_single_script(name)
        if admit is not None:
            await admit()
        # hashed before the name is claimed: a hash refused as busy (503) leaves the name free
        password_hash = None if password is None else await self._hash(password)
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
        if password_hash is not None:
            events.append(PasswordSet(password_hash=password_hash))
        events.append(TokenIssued(token_hash=token_digest(token), via="register", issued_ms=self.clock()))
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
        await self._seen(account_id)
        # the operator's search (services.store.name_index): best effort, rebuilt by rebuild-all
        await self.store.run_best_effort(name_index.add(name.skeleton, account_id), "name_index")
        state = fold(events)
        assert state is not None
        log.info("account_registered", account_id=account_id, outcome="ok")
        return state, token

    async def login(self, raw_name: str, password: str) -> tuple[AccountState, str]:
        """A fresh token for the account of that name, if the password is its own. A name without
        an account, or an account without a password, costs the same Argon2 check (a dummy one)."""
        wrong = UnauthorizedError("invalid_credentials", "The name or the password is wrong.")
        state = await self.by_name(raw_name)
        if state is None or state.password_hash is None:
            await self._verify(await self._dummy(), password)
            metrics.login_failed()
            raise wrong
        if not await self._verify(state.password_hash, password):
            log.info("login", account_id=state.account_id, outcome="wrong_password")
            metrics.login_failed()
            raise wrong
        if state.banned:  # said only to whoever knows the password: a name alone tells nothing
            log.info("login", account_id=state.account_id, outcome="banned")
            raise banned_error()
        token = _new_token(state.account_id)
        await self._append(
            state.account_id,
            lambda _: [TokenIssued(token_hash=token_digest(token), via="login", issued_ms=self.clock())],
        )
        log.info("login", account_id=state.account_id, outcome="ok")
        return state, token

    async def check_current_password(self, account: AccountState, current: str | None) -> None:
        """Before a password change: the account's password, when it has one, must be ``current``
        (``current_password_required``, 422, without it; ``wrong_current_password``, 403)."""
        if account.password_hash is None:
            return
        if current is None:
            raise InvalidError(
                "current_password_required", "This account has a password: send it as current_password."
            )
        if not await self._verify(account.password_hash, current):
            log.info("password_change", account_id=account.account_id, outcome="wrong_password")
            raise ForbiddenError("wrong_current_password", "The current password is wrong.")

    async def set_password(self, account: AccountState, password: str, keep_token: str) -> None:
        """Set a new password and revoke every token of the account but ``keep_token`` (the caller's),
        in one append: whoever else held a token (a stolen one too) is logged out. The caller has
        checked the current password (``check_current_password``)."""
        _check_password(password)
        password_hash = await self._hash(password)
        kept = token_digest(keep_token)
        await self._append(
            account.account_id,
            lambda _: [PasswordSet(password_hash=password_hash), OtherTokensRevoked(kept_hash=kept)],
        )
        log.info("password_change", account_id=account.account_id, outcome="ok")

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
        """The account whose token this is; ``invalid_account_token`` (401) otherwise, and
        ``account_token_expired`` (401) for one issued longer ago than the tokens' lifetime (a
        token recorded without its time counts as issued at ``LEGACY_ISSUED_MS``)."""
        invalid = UnauthorizedError("invalid_account_token", "The account token is not valid.")
        account_id, dot, _ = token.partition(".")
        if not dot or not ACCOUNT_ID.fullmatch(account_id):
            raise invalid
        state = await self.load(account_id)
        digest = token_digest(token)
        found = (
            None
            if state is None
            else next((known for known in state.token_hashes if hmac.compare_digest(digest, known)), None)
        )
        if state is None or found is None:
            raise invalid
        if state.banned:
            raise banned_error()
        issued = state.token_issued.get(found) or LEGACY_ISSUED_MS
        if self.clock() - issued > self.token_ms:
            raise UnauthorizedError(
                "account_token_expired", "This login has expired; log in again (or register anew)."
            )
        return state

    async def ban(self, account_id: str, reason: str, operator: str) -> AccountState:
        """Record ``account_banned`` (``already_banned``, 409, if it is): from now on its logins and
        its tokens are refused with 403 ``account_banned``."""
        return await self._set_ban(account_id, reason, operator, banned=True)

    async def unban(self, account_id: str, reason: str, operator: str) -> AccountState:
        """Record ``account_unbanned`` (``not_banned``, 409, if it is not banned): its tokens work again."""
        return await self._set_ban(account_id, reason, operator, banned=False)

    async def _set_ban(self, account_id: str, reason: str, operator: str, banned: bool) -> AccountState:
        reason = reason.strip()
        if not 1 <= len(reason) <= MAX_REASON:
            raise InvalidError("invalid_reason", f"A reason has 1 to {MAX_REASON} characters.")

        def decide(current: AccountState) -> list[Event]:
            if current.banned == banned:
                if banned:
                    raise ConflictError("already_banned", "This account is already banned.")
                raise ConflictError("not_banned", "This account is not banned.")
            if banned:
                return [AccountBanned(reason=reason, operator=operator)]
            return [AccountUnbanned(reason=reason, operator=operator)]

        await self._append(account_id, decide)
        state = await self.load(account_id)
        assert state is not None
        log.info("account_banned" if banned else "account_unbanned", account_id=account_id, operator=operator)
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
                await self._seen(account_id)
                return
        raise ConflictError("account_busy", "The account changed too often; try again.")

    async def _seen(self, account_id: str) -> None:
        """When the account was last used (retention removes idle unverified accounts): best effort
        after a committed append, which a failed index write must not turn into an error."""
        await self.store.run_best_effort(retention.account_seen(account_id, clock_ms()), "account_seen")

    async def _hash(self, password: str) -> str:
        return await self.pool.run(lambda: self.hasher.hash(password))

    async def _verify(self, password_hash: str, password: str) -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(password_hash, password)
            except (VerificationError, InvalidHashError):
                return False

        return await self.pool.run(verify)

    async def _dummy(self) -> str:
        """A hash of a random password with this hasher's parameters (made once, on first need), for
        the checks of logins that have no hash of their own to check against."""
        if self._dummy_hash is None:
            self._dummy_hash = await self._hash(secrets.token_urlsafe(24))
        return self._dummy_hash


def banned_error() -> ForbiddenError:
    return ForbiddenError("account_banned", "This account is banned by an operator.")


def _check_password(password: str | None) -> None:
    if password is not None and not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise InvalidError("invalid_password", f"A password has {MIN_PASSWORD} to {MAX_PASSWORD} characters.")


def _new_token(account_id: str) -> str:
    return f"{account_id}.{secrets.token_urlsafe(24)}"
