"""The cap on waiting tables is per client address as well as global, and a new table waits for
players an hour at most."""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest
from starlette.testclient import TestClient

from services.api.app import create_app
from services.config import Settings
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only


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
