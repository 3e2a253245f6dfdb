"""``POST /games`` with an ``Idempotency-Key``: one table per key and body, for 24 hours."""

from __future__ import annotations

import uuid

from services.store.idempotency import KEEP_SECONDS
from services.store.keys import IDEMPOTENCY_PREFIX, LOBBY
from tests.api.conftest import Api

BODY = {"game": "skull", "players": 3, "options": {}}


def key() -> str:
    return uuid.uuid4().hex


def test_the_same_key_and_body_answer_with_the_same_table_and_create_nothing(api: Api) -> None:
    headers = {"Idempotency-Key": key()}
    first = api.client.post("/games", json=BODY, headers=headers)
    assert first.status_code == 201
    tables = api.sync.hlen(LOBBY)
    again = api.client.post("/games", json=BODY, headers=headers)
    assert again.status_code == 201
    assert again.json() == first.json()
    assert api.sync.hlen(LOBBY) == tables
    host = {"Authorization": f"Bearer {again.json()['host_token']}"}
    assert api.client.get(f"/games/{first.json()['game_id']}/view", headers=host).status_code == 200


def test_the_same_key_with_another_body_is_a_409_and_reveals_no_table(api: Api) -> None:
    headers = {"Idempotency-Key": key()}
    first = api.client.post("/games", json=BODY, headers=headers)
    other = api.client.post("/games", json={**BODY, "players": 4}, headers=headers)
    assert other.status_code == 409
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    assert first.json()["game_id"] not in other.text and first.json()["host_token"] not in other.text


def test_different_keys_or_no_key_create_separate_tables(api: Api) -> None:
    ids = {api.client.post("/games", json=BODY, headers={"Idempotency-Key": key()}).json()["game_id"]}
    ids.add(api.client.post("/games", json=BODY, headers={"Idempotency-Key": key()}).json()["game_id"])
    ids.add(api.client.post("/games", json=BODY).json()["game_id"])
    ids.add(api.client.post("/games", json=BODY).json()["game_id"])
    assert len(ids) == 4


def test_a_refused_creation_frees_its_key_for_a_corrected_retry(api: Api) -> None:
    headers = {"Idempotency-Key": key()}
    refused = api.client.post("/games", json={**BODY, "players": 1}, headers=headers)
    assert refused.status_code == 422
    assert api.client.post("/games", json={**BODY, "players": 1}, headers=headers).status_code == 422
    assert api.client.post("/games", json=BODY, headers=headers).status_code == 201


def test_the_key_is_stored_only_as_a_digest_with_a_sealed_token_for_24_hours(api: Api) -> None:
    secret_key = key()
    created = api.client.post("/games", json=BODY, headers={"Idempotency-Key": secret_key}).json()
    (name,) = api.sync.keys(IDEMPOTENCY_PREFIX + "*")
    stored = api.sync.get(name)
    assert secret_key.encode() not in name and secret_key.encode() not in stored
    assert created["host_token"].encode() not in stored
    assert KEEP_SECONDS - 60 < api.sync.ttl(name) <= KEEP_SECONDS


def test_a_short_long_or_non_visible_key_is_a_422(api: Api) -> None:
    for bad in (b"short", b"x" * 129, b"caf\xc3\xa9-caf\xc3\xa9-caf\xc3\xa9", b"has space in it!!"):
        response = api.client.post("/games", json=BODY, headers={b"Idempotency-Key": bad})
        assert response.status_code == 422, bad
        assert response.json()["error"]["code"] == "invalid_idempotency_key"
