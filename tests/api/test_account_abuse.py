"""Accounts under attack (issue 24): guesses limited per address and per name without locking the
owner out, registrations capped per address, a real Argon2 check on every miss, a password change
that needs the current password and logs every other device out, client addresses from trusted
proxies only, and ``logout`` a reserved word.

Client addresses: the test client is the proxy 127.0.0.1, trusted, and names each client in
``X-Forwarded-For``. On fakeredis with the in-process counts, and on a real Redis with the counts
shared through it (``async+redis://``)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import anyio
import fakeredis
import pytest
import redis
from argon2 import PasswordHasher
from starlette.testclient import TestClient

from services.accounts.names import RESERVED
from services.accounts.registry import HashPool
from services.api.account_routes import routes as account_routes
from services.api.app import create_app
from services.errors import UnavailableError
from services.operating.config import Settings
from services.store.connection import connect_to
from services.store.embedded import EmbeddedRedis
from tests.api.conftest import UNLIMITED

PROXY = ("127.0.0.1", 40000)
RIGHT = "the right password"


class Site:
    """The app behind a trusted proxy: ``post``/``get`` as the client at ``address``."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def post(self, path: str, address: str, body: dict[str, Any], token: str | None = None) -> Any:
        headers = {"X-Forwarded-For": address}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return self.client.post(path, json=body, headers=headers)

    def login(self, address: str, name: str, password: str) -> Any:
        return self.post("/accounts/login", address, {"name": name, "password": password})

    def register(self, address: str, name: str, password: str | None = RIGHT) -> dict[str, Any]:
        body = {"name": name} if password is None else {"name": name, "password": password}
        response = self.post("/accounts", address, body)
        assert response.status_code == 201, response.text
        registered: dict[str, Any] = response.json()
        return registered

    def me(self, token: str) -> int:
        status: int = self.client.get(
            "/accounts/me", headers={"Authorization": f"Bearer {token}"}
        ).status_code
        return status


SiteFactory = Callable[..., Any]


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def site(request: pytest.FixtureRequest) -> SiteFactory:
    """``with site(**settings) as s``: the app with these settings over the backend of the param."""

    @contextmanager
    def open_site(peer: tuple[str, int] = PROXY, **overrides: Any) -> Iterator[Site]:
        values = {**UNLIMITED, "trusted_proxies": "127.0.0.1", **overrides}
        if request.param == "fakeredis":
            server = fakeredis.FakeServer()
            app = create_app(
                Settings(**values),
                lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
            )
        else:
            embedded: EmbeddedRedis = request.getfixturevalue("redis_server")
            with redis.Redis.from_url(embedded.url) as sync:
                sync.flushall()
            values["rate_limit_storage"] = "async+" + embedded.url
            app = create_app(Settings(**values), connect_to(embedded.url))
        with TestClient(app, raise_server_exceptions=False, client=peer) as client:
            yield Site(client)

    return open_site


def code(response: Any) -> str:
    found: str = response.json()["error"]["code"]
    return found


# -- guesses ----------------------------------------------------------------------------------------


@pytest.mark.thorough
def test_guesses_at_one_account_from_one_address_are_refused_after_five_even_the_right_one(
    site: SiteFactory,
) -> None:
    with site(login_guess_rate="5/15 minutes") as s:
        s.register("10.0.0.9", "Ada")
        for guess in range(5):
            assert s.login("10.0.0.66", "ada", f"guess number {guess}").status_code == 401
        refused = s.login("10.0.0.66", "Ada", "guess number 5")
        assert refused.status_code == 429 and code(refused) == "login_throttled"
        assert 1 <= int(refused.headers["Retry-After"]) <= 15 * 60
        assert s.login("10.0.0.66", "ADA", RIGHT).status_code == 429  # locked: no verdict at all
        assert s.login("10.0.0.9", "Ada", RIGHT).status_code == 200  # the owner's address is not


@pytest.mark.thorough
def test_the_owner_logs_in_at_the_first_try_while_the_name_is_under_attack_from_many_addresses(
    site: SiteFactory,
) -> None:
    with site(login_guess_rate="5/15 minutes", login_name_rate="10/15 minutes") as s:
        s.register("10.0.0.9", "Ada")
        for attacker in ("10.1.0.1", "10.1.0.2"):  # 10 wrong guesses: the name is under attack
            for guess in range(5):
                assert s.login(attacker, "Ada", f"{attacker} {guess}").status_code == 401
        # an address that has guessed wrong may not guess again while the name is under attack ...
        assert s.login("10.1.0.3", "Ada", "first guess").status_code == 401
        again = s.login("10.1.0.3", "Ada", "second guess")
        assert again.status_code == 429 and code(again) == "login_throttled"
        # ... but the owner, from an address that has not, gets in with the right password
        assert s.login("10.0.0.9", "Ada", RIGHT).status_code == 200
        # an owner who mistyped waits a bounded time (the window of their own address), no longer
        assert s.login("10.0.0.10", "Ada", "mistyped").status_code == 401
        waiting = s.login("10.0.0.10", "Ada", RIGHT)
        assert waiting.status_code == 429 and 1 <= int(waiting.headers["Retry-After"]) <= 15 * 60
        assert s.login("10.0.0.11", "Ada", RIGHT).status_code == 200  # from another device at once


@pytest.mark.thorough
def test_logins_from_one_address_are_limited_whatever_the_names(site: SiteFactory) -> None:
    with site(login_rate="10/minute") as s:
        for index in range(10):
            assert s.login("10.0.0.66", f"nobody {index}", "some password").status_code == 401
        refused = s.login("10.0.0.66", "nobody 10", "some password")
        assert refused.status_code == 429 and code(refused) == "rate_limited"
        assert "Retry-After" in refused.headers
        assert s.login("10.0.0.67", "nobody 10", "some password").status_code == 401


def test_an_address_creates_at_most_its_daily_accounts_and_a_refused_name_costs_nothing(
    site: SiteFactory,
) -> None:
    with site(register_rate="3/day") as s:
        s.register("10.0.0.1", "Taken Name", password=None)
        for index in range(3):
            assert s.post("/accounts", "10.0.0.66", {"name": "Taken Name"}).status_code == 409
            s.register("10.0.0.66", f"Spam {index}", password=None)
        refused = s.post("/accounts", "10.0.0.66", {"name": "Spam 3"})
        assert refused.status_code == 429 and code(refused) == "rate_limited"
        assert 3600 < int(refused.headers["Retry-After"]) <= 24 * 3600
        s.register("10.0.0.67", "Spam 3", password=None)  # another address is not affected


# -- the miss path costs a real Argon2 check ----------------------------------------------------------


class CountingHasher(PasswordHasher):
    """Argon2id with small parameters, counting the checks it makes and what they checked against."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=1024, parallelism=1)
        self.checked: list[str] = []

    def verify(self, hash: str | bytes, password: str | bytes) -> Literal[True]:
        self.checked.append(hash if isinstance(hash, str) else hash.decode())
        return super().verify(hash, password)


def test_a_login_of_an_unknown_name_or_of_an_account_without_password_runs_one_real_argon2_check(
    site: SiteFactory,
) -> None:
    with site() as s:
        hasher = CountingHasher()
        s.client.app.state.context.accounts.hasher = hasher
        s.register("10.0.0.1", "Ada")
        s.register("10.0.0.1", "Bo", password=None)
        for name in ("Nobody", "Bo", "Ada"):
            before = len(hasher.checked)
            assert s.login("10.0.0.2", name, "not the password").status_code == 401
            assert len(hasher.checked) == before + 1, name
            assert hasher.checked[-1].startswith("$argon2id$v=19$m=1024,t=1,p=1$"), name
        assert hasher.checked[0] == hasher.checked[1]  # one dummy hash, made once
        assert hasher.checked[2] != hasher.checked[0]  # Ada's own


@pytest.mark.anyio
async def test_the_hash_pool_runs_at_most_its_slots_at_once_and_refuses_past_its_queue() -> None:
    pool = HashPool(slots=2, queue=1, wait_seconds=30)
    release = anyio.Event()
    running: list[int] = []
    most = 0
    outcomes: list[str] = []

    def work() -> str:
        nonlocal most
        running.append(1)
        most = max(most, len(running))
        anyio.from_thread.run(release.wait)
        running.pop()
        return "done"

    async def one() -> None:
        try:
            outcomes.append(await pool.run(work))
        except UnavailableError as busy:
            outcomes.append(busy.code)

    async with anyio.create_task_group() as tasks:
        for _ in range(3):  # two run, one waits in the queue
            tasks.start_soon(one)
        with anyio.fail_after(10):
            while len(running) < 2:
                await anyio.sleep(0.01)
        await one()  # the queue is full: refused at once
        assert outcomes == ["password_check_busy"]
        release.set()
    assert sorted(outcomes) == ["done", "done", "done", "password_check_busy"] and most == 2


@pytest.mark.anyio
async def test_a_hash_that_waits_past_its_bound_is_refused_as_busy() -> None:
    pool = HashPool(slots=1, queue=4, wait_seconds=0.05)
    release = anyio.Event()
    started = anyio.Event()

    def hold() -> None:
        anyio.from_thread.run_sync(started.set)
        anyio.from_thread.run(release.wait)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(pool.run, hold)
        await started.wait()
        with pytest.raises(UnavailableError) as busy:
            await pool.run(lambda: None)
        assert busy.value.code == "password_check_busy" and busy.value.retry_after == 1
        release.set()
    assert await pool.run(lambda: "free again") == "free again"


class RefusingPool(HashPool):
    """A hash pool that refuses every hash and check as busy while ``refusing`` (as a pool filled by
    an attacker does), and works as usual once it is not."""

    def __init__(self) -> None:
        super().__init__()
        self.refusing = True

    async def run(self, work: Callable[[], Any]) -> Any:
        if self.refusing:
            raise UnavailableError("password_check_busy", "Too many passwords are being checked.", 1)
        return await super().run(work)


def refusing_pool(s: Site) -> RefusingPool:
    app: Any = s.client.app
    accounts = app.state.context.accounts
    accounts.hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    accounts.pool = RefusingPool()
    pool: RefusingPool = accounts.pool
    return pool


def test_a_registration_refused_as_busy_leaves_its_name_free_for_the_retry(site: SiteFactory) -> None:
    with site() as s:
        pool = refusing_pool(s)
        busy = s.post("/accounts", "10.0.0.1", {"name": "Ada", "password": RIGHT})
        assert busy.status_code == 503 and code(busy) == "password_check_busy"
        pool.refusing = False
        s.register("10.0.0.1", "Ada")
        assert s.login("10.0.0.1", "Ada", RIGHT).status_code == 200


@pytest.mark.thorough
def test_logins_refused_as_busy_do_not_count_and_the_owner_logs_in_once_the_pool_frees(
    site: SiteFactory,
) -> None:
    limits = {"login_rate": "5/minute", "login_guess_rate": "5/15 minutes", "login_name_rate": "5/15 minutes"}
    with site(**limits) as s:
        s.register("10.0.0.9", "Ada")
        pool = refusing_pool(s)
        for _ in range(8):  # more than every limit: none of them counted
            busy = s.login("10.0.0.9", "Ada", RIGHT)
            assert busy.status_code == 503 and code(busy) == "password_check_busy"
        pool.refusing = False
        assert s.login("10.0.0.9", "Ada", RIGHT).status_code == 200


@pytest.mark.thorough
def test_password_changes_refused_as_busy_do_not_count_as_guesses(site: SiteFactory) -> None:
    with site(login_guess_rate="5/15 minutes", login_name_rate="5/15 minutes") as s:
        token = s.register("10.0.0.9", "Ada")["token"]
        pool = refusing_pool(s)
        body = {"password": "a new password", "current_password": RIGHT}
        for _ in range(8):
            busy = s.post("/accounts/me/password", "10.0.0.9", body, token)
            assert busy.status_code == 503 and code(busy) == "password_check_busy"
        pool.refusing = False
        assert s.post("/accounts/me/password", "10.0.0.9", body, token).status_code == 200


# -- changing the password --------------------------------------------------------------------------


@pytest.mark.thorough
def test_a_password_change_needs_the_current_password_and_logs_every_other_device_out(
    site: SiteFactory,
) -> None:
    with site() as s:
        first = s.register("10.0.0.1", "Ada")["token"]
        others = [s.login("10.0.0.1", "Ada", RIGHT).json()["token"] for _ in range(2)]
        missing = s.post("/accounts/me/password", "10.0.0.1", {"password": "a new password"}, first)
        assert missing.status_code == 422 and code(missing) == "current_password_required"
        wrong_body = {"password": "a new password", "current_password": "not it at all"}
        wrong = s.post("/accounts/me/password", "10.0.0.1", wrong_body, first)
        assert wrong.status_code == 403 and code(wrong) == "wrong_current_password"
        assert all(s.me(token) == 200 for token in (first, *others))  # refusals changed nothing
        right_body = {"password": "a new password", "current_password": RIGHT}
        changed = s.post("/accounts/me/password", "10.0.0.1", right_body, others[0])
        assert changed.status_code == 200 and changed.json()["has_password"] is True
        assert s.me(others[0]) == 200  # the caller keeps its token
        assert [s.me(first), s.me(others[1])] == [401, 401]  # every other one is revoked
        assert s.login("10.0.0.1", "Ada", RIGHT).status_code == 401
        assert s.login("10.0.0.1", "Ada", "a new password").status_code == 200


@pytest.mark.thorough
def test_a_browser_changing_its_password_by_cookie_keeps_its_cookie_working(site: SiteFactory) -> None:
    with site() as s:
        s.register("10.0.0.1", "Ada")
        phone = s.login("10.0.0.1", "Ada", RIGHT).json()["token"]
        browser = s.client.post(
            "/accounts/login",
            json={"name": "Ada", "password": RIGHT, "cookie": True},
            headers={"X-Forwarded-For": "10.0.0.1"},
        )
        assert browser.status_code == 200 and "ts_account" in s.client.cookies
        body = {"password": "a new password", "current_password": RIGHT}
        changed = s.client.post("/accounts/me/password", json=body, headers={"X-Forwarded-For": "10.0.0.1"})
        assert changed.status_code == 200
        assert s.client.get("/accounts/me").status_code == 200  # by the cookie
        assert s.me(phone) == 401


@pytest.mark.thorough
def test_an_account_without_a_password_sets_one_without_a_current_one(site: SiteFactory) -> None:
    with site() as s:
        token = s.register("10.0.0.1", "Bo", password=None)["token"]
        assert (
            s.post("/accounts/me/password", "10.0.0.1", {"password": "first password"}, token).status_code
            == 200
        )
        assert s.me(token) == 200
        assert s.login("10.0.0.2", "Bo", "first password").status_code == 200


@pytest.mark.thorough
def test_wrong_current_passwords_count_as_guesses_at_the_account(site: SiteFactory) -> None:
    with site(login_guess_rate="5/15 minutes") as s:
        token = s.register("10.0.0.1", "Ada")["token"]
        body = {"password": "a new password", "current_password": "wrong"}
        for _ in range(3):
            assert s.post("/accounts/me/password", "10.0.0.66", body, token).status_code == 403
        for guess in range(2):
            assert s.login("10.0.0.66", "Ada", f"guess {guess}").status_code == 401
        refused = s.post("/accounts/me/password", "10.0.0.66", {**body, "current_password": RIGHT}, token)
        assert refused.status_code == 429 and code(refused) == "login_throttled"


# -- client addresses -------------------------------------------------------------------------------


@pytest.mark.thorough
def test_x_forwarded_for_is_ignored_from_an_untrusted_peer(site: SiteFactory) -> None:
    with site(peer=("10.9.9.9", 40000), login_rate="2/minute") as s:
        statuses = [s.login(f"10.0.0.{n}", f"nobody {n}", "some password").status_code for n in range(3)]
        assert statuses == [401, 401, 429]  # all three counted against the peer, 10.9.9.9


@pytest.mark.thorough
def test_x_forwarded_for_is_honoured_from_a_trusted_proxy_from_its_right_end(site: SiteFactory) -> None:
    with site(login_rate="2/minute") as s:
        statuses = [s.login(f"10.0.0.{n}", f"nobody {n}", "some password").status_code for n in range(3)]
        assert statuses == [401, 401, 401]  # three clients behind the proxy
        # what the client wrote itself (the left end) is not believed: the proxy's entry is
        spoofed = [
            s.login(f"10.7.7.{n}, 10.0.0.50", f"nobody {n}", "some password").status_code for n in range(3)
        ]
        assert spoofed == [401, 401, 429]
        # a chain of trusted proxies: the first untrusted address from the right is the client
        assert s.login("10.0.0.51, 127.0.0.1", "nobody", "some password").status_code == 401


@pytest.mark.thorough
def test_an_ipv6_client_is_counted_as_its_64_and_a_mapped_ipv4_one_as_the_ipv4_address(
    site: SiteFactory,
) -> None:
    with site(login_rate="2/minute") as s:
        hosts = ["2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:2::77"]  # one /64
        statuses = [s.login(host, f"nobody {n}", "some password").status_code for n, host in enumerate(hosts)]
        assert statuses == [401, 401, 429]
        assert s.login("2001:db8:1:3::1", "nobody", "some password").status_code == 401  # the next /64
        assert s.login("10.5.5.5", "nobody", "some password").status_code == 401
        assert s.login("10.5.5.5", "nobody", "some password").status_code == 401
        assert s.login("::ffff:10.5.5.5", "nobody", "some password").status_code == 429


def test_a_trusted_proxy_list_that_does_not_parse_stops_the_process_at_start() -> None:
    with pytest.raises(ValueError, match="trusted_proxies"):
        Settings(trusted_proxies="10.0.0.0/8, proxy.example")
    assert len(Settings(trusted_proxies="10.0.0.0/8, ::1").trusted_networks) == 2


# -- reserved words ---------------------------------------------------------------------------------


def test_every_fixed_word_under_accounts_is_a_reserved_name_and_logout_cannot_be_registered(
    site: SiteFactory,
) -> None:
    fixed = {
        route.path.split("/")[2]
        for route in account_routes
        if route.path.startswith("/accounts/") and not route.path.split("/")[2].startswith("{")
    }
    assert fixed == {"login", "logout", "me"} and fixed <= RESERVED
    with site() as s:
        for word in ("logout", "Logout", "LOGIN", "me"):
            refused = s.post("/accounts", "10.0.0.1", {"name": word})
            assert refused.status_code == 422 and code(refused) == "invalid_name", word


def test_options_of_the_fixed_account_paths_advertise_only_their_own_methods(site: SiteFactory) -> None:
    with site() as s:
        expected = {"/accounts/logout": "POST", "/accounts/login": "POST", "/accounts/me": "GET, HEAD"}
        for path, allowed in expected.items():
            answer = s.client.options(path)
            assert answer.status_code == 405 and answer.headers["Allow"] == allowed, path
        assert s.client.get("/accounts/logout").status_code == 405
        profile = s.client.options(f"/accounts/someone-{uuid.uuid4().hex[:6]}")
        assert profile.headers["Allow"] == "GET, HEAD"
