"""Waiting tables are counted against their creator's budgets (services.people.waiting_budget): a guest's
address, network and the guests' pool, an account's own allowance that grows with trust, turn-based
tables apart from real-time ones; and a new table waits for players an hour at most."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import fakeredis
import msgspec
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from projections.ratings import PROVISIONAL_GAMES, PROVISIONAL_OPPONENTS, Skill
from services.api.app import create_app
from services.api.http import network_of
from services.operating.config import Settings
from services.people import waiting_budget
from services.store import indexes
from services.store.event_store import SyncEventStore
from services.store.keys import LOBBY_CHANNEL, rating_key
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only
from tests.support.waiting import Deadline


@pytest.fixture
def capped() -> Iterator[tuple[Api, fakeredis.FakeServer, object]]:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **{**UNLIMITED, "max_waiting_tables_per_address": 3}),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with TestClient(app, raise_server_exceptions=False, client=("203.0.113.7", 5000)) as client:
        yield Api(bearer_only(client), fakeredis.FakeRedis(server=server)), server, app


def create(client: TestClient, **options: object) -> tuple[int, dict[str, object]]:
    response = client.post("/games", json={"game": "skull", "players": 3, "options": options})
    return response.status_code, response.json() | {"retry-after": response.headers.get("retry-after")}


def test_one_address_holds_at_most_its_cap_of_waiting_tables_and_others_still_create(
    capped: tuple[Api, fakeredis.FakeServer, object],
) -> None:
    api, _, app = capped
    tables = [api.create() for _ in range(3)]
    status, body = create(api.client)
    assert status == 429 and body["error"]["code"] == "too_many_tables_from_address"  # type: ignore[index]
    assert "3 tables waiting" in body["error"]["message"] and int(body["retry-after"]) >= 1  # type: ignore[index,arg-type]
    with TestClient(app, raise_server_exceptions=False, client=("198.51.100.9", 5000)) as other:  # type: ignore[arg-type]
        assert create(other)[0] == 201  # another address is not locked out
    for seat in range(3):  # one of the tables fills and starts: it no longer waits
        api.join(tables[0], f"P{seat}")
    api.project()
    assert create(api.client)[0] == 201
    assert create(api.client)[0] == 429


def test_a_retried_create_with_its_idempotency_key_is_answered_even_at_the_cap(
    capped: tuple[Api, fakeredis.FakeServer, object],
) -> None:
    api, _, _ = capped
    body = {"game": "skull", "players": 3}
    headers = {"Idempotency-Key": "a-client-secret-key-0001"}
    first = api.client.post("/games", json=body, headers=headers)
    assert [create(api.client)[0] for _ in range(3)] == [201, 201, 429]
    again = api.client.post("/games", json=body, headers=headers)  # its answer was lost: the same table
    assert again.status_code == 201 and again.json() == first.json()
    other_key = api.client.post("/games", json=body, headers={"Idempotency-Key": "a-client-secret-key-0002"})
    assert other_key.status_code == 429


def test_a_refused_or_failed_create_holds_no_place(capped: tuple[Api, fakeredis.FakeServer, object]) -> None:
    api, _, _ = capped
    for _ in range(5):
        bad = api.client.post("/games", json={"game": "skull", "players": 2})
        assert bad.status_code == 422
    assert [create(api.client)[0] for _ in range(4)] == [201, 201, 201, 429]


def test_expire_minutes_is_at_most_an_hour_for_a_new_table(
    capped: tuple[Api, fakeredis.FakeServer, object],
) -> None:
    api, _, _ = capped
    status, body = create(api.client, expire_minutes=61)
    assert status == 422 and body["error"]["code"] == "invalid_options"  # type: ignore[index]
    assert "at most 60" in body["error"]["message"]  # type: ignore[index]
    assert create(api.client, expire_minutes=7 * 24 * 60)[0] == 422
    assert create(api.client, expire_minutes=60)[0] == 201
    for game in api.client.get("/games/options").json()["games"]:  # the lobby's form says so
        assert [o["maximum"] for o in game["options"] if o["name"] == "expire_minutes"] == [60]


def budgeted(**limits: Any) -> tuple[Starlette, fakeredis.FakeServer]:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **{**UNLIMITED, **limits}),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    return app, server


@contextmanager
def client_at(app: Starlette, address: str) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False, client=(address, 5000)) as client:
        yield bearer_only(client)


def creates(client: TestClient, count: int, token: str | None = None, **options: object) -> list[int]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"game": "skull", "players": 3, "options": options}
    return [client.post("/games", json=body, headers=headers).status_code for _ in range(count)]


def refusal(client: TestClient, token: str | None = None, **options: object) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    answer = client.post("/games", json={"game": "skull", "players": 3, "options": options}, headers=headers)
    assert answer.status_code in (429, 503) and int(answer.headers["retry-after"]) >= 1, answer.text
    error: dict[str, Any] = answer.json()["error"]
    return error


def test_a_network_counts_once_however_many_of_its_addresses_create_and_another_network_still_creates() -> (
    None
):
    app, _ = budgeted(max_waiting_tables_per_address=3, max_waiting_tables_per_network=4)
    with client_at(app, "203.0.113.7") as one, client_at(app, "203.0.113.99") as neighbour:
        assert creates(one, 3) + creates(neighbour, 1) == [201] * 4
        error = refusal(neighbour)
        assert error["code"] == "too_many_tables_from_network" and "4 tables" in error["message"]
    with client_at(app, "2001:db8:1:2::1") as six, client_at(app, "2001:db8:1:ff::1") as six_neighbour:
        assert creates(six, 3) + creates(six_neighbour, 1) == [201] * 4  # one /48
        assert refusal(six_neighbour)["code"] == "too_many_tables_from_network"
    with client_at(app, "198.51.100.9") as elsewhere:
        assert creates(elsewhere, 3) == [201] * 3


def test_a_flood_of_guests_fills_only_the_guests_pool_and_an_account_still_creates() -> None:
    app, _ = budgeted(max_waiting_tables=3, max_waiting_tables_new_account=2)
    for n in range(3):  # three networks, a table each: the guests' pool is full
        with client_at(app, f"198.51.{n}.1") as guest:
            assert creates(guest, 1) == [201]
    with client_at(app, "192.0.2.1") as newcomer:
        error = refusal(newcomer)
        assert error["code"] == "too_many_tables" and "register a name" in error["message"]
        account = newcomer.post("/accounts", json={"name": "Ada"}).json()
        assert creates(newcomer, 2, account["token"]) == [201, 201]  # on the account's own allowance
        newcomer.cookies.set("ts_account", account["token"])  # a browser's cookie counts as the header
        assert refusal(newcomer)["code"] == "too_many_tables_from_account"


def test_an_accounts_allowance_grows_with_its_rated_games_and_is_whole_once_it_is_established() -> None:
    app, server = budgeted(max_waiting_tables_new_account=2, max_waiting_tables_per_account=9)
    redis = fakeredis.FakeRedis(server=server)
    with client_at(app, "203.0.113.7") as client:
        account = client.post("/accounts", json={"name": "Ada"}).json()
        token, account_id = account["token"], account["account_id"]
        assert creates(client, 3, token) == [201, 201, 429]
        error = refusal(client, token)
        assert error["code"] == "too_many_tables_from_account"
        assert "2 tables" in error["message"] and "grows with the rated games" in error["message"]

        def rated(games: int, met: int) -> None:
            skill = Skill(mu=25.0, sigma=6.0, games=games, met=tuple(f"{n:016x}" for n in range(met)))
            redis.hset(rating_key("skull"), account_id, msgspec.json.encode(skill))

        rated(games=3, met=0)  # 2 + 3 rated games
        assert creates(client, 4, token) == [201, 201, 201, 429]
        rated(games=PROVISIONAL_GAMES, met=PROVISIONAL_OPPONENTS)  # established: the whole allowance
        assert creates(client, 5, token) == [201, 201, 201, 201, 429]
        assert "9 tables" in refusal(client, token)["message"]
        assert creates(client, 1, "0123456789abcdef.not-a-token") == [201]  # a token that fails: a guest


def test_turn_based_tables_are_counted_apart_from_real_time_ones_in_every_budget() -> None:
    app, _ = budgeted(max_waiting_tables_per_address=2, max_waiting_turn_based_tables=3)
    turn = {"turn_based": True}
    with client_at(app, "203.0.113.7") as client:
        assert creates(client, 3, **turn) == [201, 201, 429]
        error = refusal(client, **turn)
        assert error["code"] == "too_many_tables_from_address" and "turn-based tables" in error["message"]
        assert creates(client, 3) == [201, 201, 429]  # the real-time budget is untouched
    with client_at(app, "198.51.100.9") as other:
        assert creates(other, 1, **turn) == [201]
        error = refusal(other, **turn)  # the guests' turn-based pool: 3, now full
        assert error["code"] == "too_many_tables" and "3 turn-based tables" in error["message"]
        assert creates(other, 1) == [201]  # real-time tables of guests still open


def test_a_network_is_an_ipv4_slash_24_or_an_ipv6_slash_48() -> None:
    assert network_of("203.0.113.7") == "203.0.113.0/24"
    assert network_of("2001:db8:1:2::/64") == "2001:db8:1::/48"
    assert network_of("2001:db8::/32") == "2001:db8::/32"  # already wider: as it is
    assert network_of("testclient") == "testclient"


def established(sync: Any, account_id: str) -> None:
    """The account is established in Skull: enough rated games against enough established opponents."""
    met = tuple(f"{n:016x}" for n in range(PROVISIONAL_OPPONENTS))
    skill = Skill(mu=25.0, sigma=6.0, games=PROVISIONAL_GAMES, met=met)
    sync.hset(rating_key("skull"), account_id, msgspec.json.encode(skill))


def test_the_lobby_lists_an_established_players_table_first_however_many_guests_create_after(
    api: Api,
) -> None:
    ada = api.client.post("/accounts", json={"name": "Ada"}).json()
    established(api.sync, ada["account_id"])
    feed = api.sync.pubsub()
    feed.subscribe(LOBBY_CHANNEL)
    body = {"game": "skull", "players": 3}
    hers = api.client.post("/games", json=body, headers={"Authorization": f"Bearer {ada['token']}"})
    assert hers.status_code == 201
    first = hers.json()["game_id"]
    api.project()
    guests = []
    for _ in range(4):  # each listed before the next is created: the lobby's order is the listing's
        guests.append(api.create())
        api.project()
    lobby = api.client.get("/games", params={"limit": 3}).json()["games"]
    assert [g["game_id"] for g in lobby] == [first, guests[3], guests[2]]
    assert lobby[0]["first"] is True and all("first" not in g for g in lobby[1:])

    published: dict[str, dict[str, Any]] = {}  # what the live lobby sends says so too
    deadline = Deadline(10)
    while not {first, *guests} <= published.keys():
        assert not deadline.passed(), sorted(published)
        message = feed.get_message(timeout=0.2)
        if message and message["type"] == "message":
            entry = msgspec.json.decode(message["data"])
            published[entry["game_id"]] = entry
    feed.close()
    assert published[first]["first"] is True and all("first" not in published[g] for g in guests)


def test_a_table_marked_first_is_listed_first_by_the_pipelined_index_write_too() -> None:
    """The lobby write of a cluster, where the indexes live apart from the game (not the Lua script)."""
    store = SyncEventStore(fakeredis.FakeRedis())
    ids = [f"{n:016x}" for n in range(4)]
    store.run(indexes.mark_first(ids[0], 1_000))
    for game_id in ids:
        store.run(indexes.put_lobby(game_id, msgspec.json.encode({"game_id": game_id, "version": 1})))
    listed = [msgspec.json.decode(raw) for raw in store.run(indexes.lobby(10))]
    assert [entry["game_id"] for entry in listed] == [ids[0], ids[3], ids[2], ids[1]]
    assert listed[0]["first"] is True and all("first" not in entry for entry in listed[1:])
    store.run(indexes.mark_first(ids[1], 1_000 + indexes.FIRST_MARK_MS + 1))  # an old mark is dropped
    assert store.redis.zrange(indexes.LOBBY_FIRST, 0, -1) == [ids[1].encode()]


def test_every_waiting_budget_key_expires_after_its_last_create_whether_it_succeeded_or_was_refused() -> None:
    """A budget (``ts:waiting-from:<digest>``) lives ``KEEP_MS`` after its holder's last create
    (docs/security.md). The first create of a holder left its budget without a time to live: the
    reservation alone filled it, settling the create removed it (the key went with its last member)
    and added the table to a new key that had none (302 such keys after the operator's soak)."""
    app, server = budgeted(max_waiting_tables_per_address=2)
    sync = fakeredis.FakeRedis(server=server)
    with client_at(app, "203.0.113.7") as first, client_at(app, "198.51.100.9") as second:
        assert creates(first, 3) == [201, 201, 429]  # a created table, and a refused create
        assert creates(second, 1) == [201]
    keys = sync.keys("ts:waiting-from:*")
    assert keys
    for key in keys:
        ttl = sync.pttl(key)
        assert 0 < ttl <= waiting_budget.KEEP_MS, (key, ttl)
