"""Inputs at and past their limits: 4xx with the JSON error shape, the schema and the code agreeing."""

from __future__ import annotations

import pytest

from domain.games import game_names
from services.api.http import MAX_VERSION
from services.api.openapi import openapi_document
from tests.api.conftest import Api


@pytest.mark.parametrize("after", [2**64, 2**64 + 1, 10**30, MAX_VERSION + 1])
def test_an_events_cursor_past_any_version_is_a_422_not_a_500(fake_api: Api, after: int) -> None:
    game_id = fake_api.started()
    response = fake_api.client.get(f"/games/{game_id}/events", params={"after": after})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_query"


def test_the_largest_allowed_cursor_gives_an_empty_page(fake_api: Api) -> None:
    game_id = fake_api.started()
    response = fake_api.client.get(f"/games/{game_id}/events", params={"after": MAX_VERSION})
    assert response.status_code == 200
    assert response.json()["events"] == []


def test_a_name_padded_past_its_limit_is_refused_before_stripping_and_stores_nothing(fake_api: Api) -> None:
    game_id = fake_api.create()
    before = fake_api.sync.xlen(f"ts:{{{game_id}}}:events")
    response = fake_api.client.post(f"/games/{game_id}/players", json={"name": "a" + " " * 65_000})
    assert response.status_code in (413, 422)
    response = fake_api.client.post(f"/games/{game_id}/players", json={"name": "a" + " " * 40})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
    assert fake_api.sync.xlen(f"ts:{{{game_id}}}:events") == before


def test_a_405_names_every_allowed_method_in_allow(fake_api: Api) -> None:
    response = fake_api.client.delete("/games")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD, POST"
    assert response.json()["error"]["code"] == "method_not_allowed"
    response = fake_api.client.put("/games/abc/commands")
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"


def schema_of(path: str, method: str, name: str) -> dict[str, object]:
    operation = openapi_document()["paths"][path][method]
    schema: dict[str, object] = next(p for p in operation["parameters"] if p["name"] == name)["schema"]
    return schema


def test_the_schema_states_the_bounds_the_code_enforces(fake_api: Api) -> None:
    assert schema_of("/games", "get", "limit") == {"type": "integer", "minimum": 1, "maximum": 1000}
    assert schema_of("/games/{game_id}/events", "get", "limit")["maximum"] == 1000
    assert schema_of("/games/{game_id}/view", "get", "at")["minimum"] == 1
    create = openapi_document()["components"]["schemas"]["CreateGame"]["anyOf"]
    games = {alternative["properties"]["game"]["const"] for alternative in create}
    assert games == set(game_names())
    game_id = fake_api.started()
    assert fake_api.client.get("/games", params={"limit": 1000}).status_code == 200
    assert fake_api.client.get("/games", params={"limit": 1001}).status_code == 422
    assert fake_api.client.get(f"/games/{game_id}/events", params={"limit": 1001}).status_code == 422
    assert fake_api.client.get(f"/games/{game_id}/view", params={"at": 0}).status_code == 422
    assert fake_api.client.get(f"/games/{game_id}/view", params={"at": 1}).status_code == 200
    assert fake_api.client.post("/games", json={"game": "", "players": 3}).status_code == 422


def test_every_route_documents_its_client_errors_in_the_json_error_shape() -> None:
    doc = openapi_document()
    error = {"$ref": "#/components/schemas/Error"}
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            statuses = {int(s) for s in operation["responses"] if int(s) >= 400}  # 202 (review) is no error
            if path.startswith("/games/{game_id}"):
                assert 404 in statuses, (path, method)
            if "requestBody" in operation:
                assert {400, 413, 422} <= statuses, (path, method)
            if operation.get("security"):
                assert 401 in statuses, (path, method)
            for status in statuses:
                if (path, status) == ("/healthz", 503):
                    continue  # readiness says why in a body of its own (tests/api/test_commands.py)
                assert operation["responses"][str(status)]["content"]["application/json"]["schema"] == error
