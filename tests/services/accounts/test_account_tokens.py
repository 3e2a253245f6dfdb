"""An account token works for the tokens' lifetime after its login, then answers 401
``account_token_expired``; a token recorded before tokens carried their time expires too."""

from __future__ import annotations

import fakeredis
import msgspec
import pytest
from argon2 import PasswordHasher

from domain.accounts import AccountRegistered, OtherTokensRevoked, TokenIssued, TokenRevoked, fold
from services.accounts.registry import DAY_MS, LEGACY_ISSUED_MS, Accounts, token_digest
from services.errors import UnauthorizedError
from services.store import accounts as store_accounts
from services.store.event_store import EventStore

pytestmark = pytest.mark.anyio

NOW = LEGACY_ISSUED_MS + 30 * DAY_MS


class Clock:
    def __init__(self, now: int) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


def accounts_at(clock: Clock, days: float = 10) -> Accounts:
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)  # the check, not the cost
    return Accounts(EventStore(fakeredis.FakeAsyncRedis()), hasher=cheap, token_days=days, clock=clock)


async def refusal(accounts: Accounts, token: str) -> str:
    with pytest.raises(UnauthorizedError) as refused:
        await accounts.authenticate(token)
    return refused.value.code


async def test_a_token_works_for_its_lifetime_and_then_answers_account_token_expired() -> None:
    clock = Clock(NOW)
    accounts = accounts_at(clock, days=10)
    account, first = await accounts.register("Ada", "a long password")
    clock.now += 10 * DAY_MS
    assert (await accounts.authenticate(first)).account_id == account.account_id  # its last moment
    _, second = await accounts.login("Ada", "a long password")
    clock.now += 1
    assert await refusal(accounts, first) == "account_token_expired"
    assert (await accounts.authenticate(second)).account_id == account.account_id  # a new login: new time
    clock.now += 10 * DAY_MS
    assert await refusal(accounts, second) == "account_token_expired"
    assert await refusal(accounts, "0123456789abcdef.nothing") == "invalid_account_token"


async def test_a_token_recorded_without_its_time_counts_as_issued_when_tokens_began_to_carry_it() -> None:
    clock = Clock(LEGACY_ISSUED_MS)
    accounts = accounts_at(clock, days=10)
    account, _ = await accounts.register("Grace", None)
    old_token = f"{account.account_id}.an-old-secret"
    legacy = TokenIssued(token_hash=token_digest(old_token), via="login")  # as recorded before
    version = len(await accounts.store.run(store_accounts.account_events(account.account_id)))
    await accounts.store.run(
        store_accounts.append_account(account.account_id, version, [msgspec.json.encode(legacy)])
    )
    clock.now = LEGACY_ISSUED_MS + 10 * DAY_MS
    assert (await accounts.authenticate(old_token)).account_id == account.account_id
    clock.now += 1
    assert await refusal(accounts, old_token) == "account_token_expired"


def test_the_account_state_keeps_each_live_tokens_issue_time_and_forgets_revoked_ones() -> None:
    events = [
        AccountRegistered(
            account_id="0123456789abcdef", display_name="Ada", normalised="ada", skeleton="ada"
        ),
        TokenIssued(token_hash="a", via="register", issued_ms=1),
        TokenIssued(token_hash="b", via="login", issued_ms=2),
        TokenIssued(token_hash="c", via="login", issued_ms=3),
    ]
    state = fold(events)
    assert state is not None and state.token_issued == {"a": 1, "b": 2, "c": 3}
    state = fold([*events, TokenRevoked(token_hash="a")])
    assert state is not None and state.token_issued == {"b": 2, "c": 3}
    state = fold([*events, OtherTokensRevoked(kept_hash="c")])
    assert state is not None and state.token_issued == {"c": 3} and state.token_hashes == {"c"}
