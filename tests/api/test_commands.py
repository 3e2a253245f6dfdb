"""Commands over HTTP: acceptance, idempotency, concurrency control, and every kind of bad input."""

from __future__ import annotations

import random

import jsonschema_rs
import pytest

from bots import choose
from services.fairness.signing import ReceiptCheck, public_keys_from_document, verify_receipt
from tests.api.conftest import Api, unsigned

FLOWER = {"type": "place_disc", "disc": "flower"}


def test_an_accepted_command_answers_its_version_events_and_a_receipt(api: Api) -> None:
    game_id = api.started()
    head = api.head(game_id)
    response = api.send(game_id, 0, FLOWER)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["version"] > head
    assert body["events"][0]["version"] == head + 1
    assert body["receipt"]["game_id"] == game_id
    assert body["receipt"]["version"] == body["version"]
    assert len(body["receipt"]["hash"]) == 64


def test_a_repeated_command_id_with_the_same_body_gets_the_same_answer_and_appends_nothing(api: Api) -> None:
    game_id = api.started()
    first = api.send(game_id, 0, FLOWER, command_id="same")
    head = api.head(game_id)
    again = api.send(game_id, 0, FLOWER, command_id="same")
    assert again.status_code == 200
    # the same answer and receipt, its signature made again at the answer's own second (signed_at)
    assert unsigned(again.json()) == unsigned(first.json())
    assert api.head(game_id) == head


def test_a_command_id_reused_with_another_body_is_a_409(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 0, FLOWER, command_id="once")
    head = api.head(game_id)
    response = api.send(game_id, 0, {"type": "place_disc", "disc": "skull"}, command_id="once")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "command_id_reused"
    assert api.head(game_id) == head


def test_a_command_id_beginning_like_the_servers_own_is_a_422_and_appends_nothing(api: Api) -> None:
    game_id = api.started()
    head = api.head(game_id)
    for command_id in (f"timeout-{head}-0", f"bot-{head + 1}-0", "expire-1", "create"):
        response = api.send(game_id, 0, FLOWER, command_id=command_id)
        assert response.status_code == 422, response.text
        error = response.json()["error"]
        assert error["code"] == "reserved_command_id" and "timeout-" in error["message"]
    assert api.head(game_id) == head
    assert api.send(game_id, 0, FLOWER, command_id=f"my-timeout-{head}-0").status_code == 200


def test_a_stale_expected_version_is_a_409_with_the_current_version(api: Api) -> None:
    game_id = api.started()
    head = api.head(game_id)
    api.send(game_id, 1, FLOWER)
    response = api.send(game_id, 0, FLOWER, expected_version=head)
    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "version_conflict"
    assert error["current_version"] == api.head(game_id)


def test_without_expected_version_the_server_decides_against_the_newest_state(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 1, FLOWER)
    response = api.send(game_id, 0, FLOWER)
    assert response.status_code == 200


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, "malformed_json"),
        (b"", 400, "malformed_json"),
        (b"[]", 422, "invalid_request"),
        (b'{"command_id": "x"}', 422, "invalid_request"),
        (b'{"command_id": "", "command": {"type": "pass"}}', 422, "invalid_request"),
        (b'{"command_id": "' + b"x" * 65 + b'", "command": {"type": "pass"}}', 422, "invalid_request"),
        (b'{"command_id": "x", "command": {"type": "fly"}}', 422, "unknown_command"),
        (b'{"command_id": "x", "command": {"disc": "flower"}}', 422, "invalid_command"),
        (b'{"command_id": "x", "command": {"type": "place_disc", "disc": "rose"}}', 422, "invalid_command"),
        (b'{"command_id": "x", "command": {"type": "place_disc"}}', 422, "invalid_command"),
        (b'{"command_id": "x", "expected_version": -1, "command": {"type": "pass"}}', 422, "invalid_request"),
        (b'{"command_id": "x", "command": {"type": "bid", "count": 3}}', 422, "wrong_phase"),
    ],
)
def test_bad_input_gets_a_specific_4xx_and_appends_nothing(
    api: Api, body: bytes, status: int, code: str
) -> None:
    game_id = api.started()
    head = api.head(game_id)
    response = api.client.post(
        f"/games/{game_id}/commands",
        content=body,
        headers={**api.auth(game_id, 0), "Content-Type": "application/json"},
    )
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert api.head(game_id) == head


def test_commands_without_a_token_or_with_a_wrong_one_are_401(api: Api) -> None:
    game_id = api.started()
    body = {"command_id": "x", "command": FLOWER}
    assert api.client.post(f"/games/{game_id}/commands", json=body).status_code == 401
    wrong = {"Authorization": "Bearer not-a-token"}
    assert api.client.post(f"/games/{game_id}/commands", json=body, headers=wrong).status_code == 401
    other_game = api.started()
    foreign = api.auth(other_game, 0)
    assert api.client.post(f"/games/{game_id}/commands", json=body, headers=foreign).status_code == 401


def test_a_token_acts_as_its_own_seat_only(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 2, FLOWER)
    view = api.view(game_id, 2)
    assert view["seat"] == 2
    assert 2 not in view["to_act"]
    assert 0 in view["to_act"]


def test_a_command_before_the_game_starts_is_a_409(api: Api) -> None:
    game_id = api.create("skull", 3)
    api.join(game_id)
    response = api.send(game_id, 0, FLOWER)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "not_started"


def test_acting_when_not_awaited_is_a_422_naming_the_rule(api: Api) -> None:
    game_id = api.started()
    api.send(game_id, 0, FLOWER)
    response = api.send(game_id, 0, FLOWER)
    assert response.status_code == 422
    assert response.json()["error"]["code"] != "internal_error"


def test_a_not_ready_healthz_answers_503_with_the_body_its_openapi_schema_documents(fake_api: Api) -> None:
    fake_api.sync.connection_pool.connection_kwargs["server"].connected = False  # Redis stops answering
    response = fake_api.client.get("/healthz")
    assert response.status_code == 503 and response.headers["retry-after"]
    documented = fake_api.client.get("/openapi.json").json()["paths"]["/healthz"]["get"]["responses"]["503"]
    schema = documented["content"]["application/json"]["schema"]
    jsonschema_rs.validate(schema, response.json())
    assert response.json()["reason"] == "redis_unreachable"


def test_every_response_carries_a_request_id(api: Api) -> None:
    response = api.client.get("/healthz")
    assert response.headers["x-request-id"].startswith("test-")
    assert api.client.get("/nowhere").json()["error"]["code"] == "not_found"


def test_an_accepted_commands_receipt_is_signed_by_a_key_the_well_known_url_publishes(api: Api) -> None:
    game_id = api.started()
    view = api.view(game_id)
    seat = view["to_act"][0]
    own = api.view(game_id, seat)
    body = api.send(game_id, seat, choose(own["game"], own, random.Random(3))).json()
    receipt = body["receipt"]
    assert set(receipt) == {"game_id", "version", "hash", "key_id", "signed_at", "signature"}
    keys = api.client.get("/.well-known/tablestream-keys")
    assert keys.status_code == 200 and keys.headers["cache-control"] == "public, max-age=300"
    document = keys.json()
    assert document["current"] == receipt["key_id"] and "private" not in keys.text
    assert verify_receipt(receipt, public_keys_from_document(document)) is ReceiptCheck.OK
    assert verify_receipt(
        {**receipt, "version": receipt["version"] + 1}, public_keys_from_document(document)
    ) is (ReceiptCheck.BAD_SIGNATURE)


def test_a_repeated_command_answers_the_same_receipt_signed_again(api: Api) -> None:
    game_id = api.started()
    seat = api.view(game_id)["to_act"][0]
    own = api.view(game_id, seat)
    command = choose(own["game"], own, random.Random(4))
    first = api.send(game_id, seat, command, command_id="same-id").json()["receipt"]
    again = api.send(game_id, seat, command, command_id="same-id").json()["receipt"]
    assert {k: again[k] for k in ("game_id", "version", "hash")} == {
        k: first[k] for k in ("game_id", "version", "hash")
    }
    keys = public_keys_from_document(api.client.get("/.well-known/tablestream-keys").json())
    assert verify_receipt(again, keys) is ReceiptCheck.OK
