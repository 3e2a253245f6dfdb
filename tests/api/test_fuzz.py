"""No request body, however wrong, gets a 5xx or changes the game."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.games import game_names
from tests.api.conftest import JSON, Api

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
command_types = st.sampled_from(
    [
        "place_disc",
        "bid",
        "pass",
        "flip",
        "discard_pick",
        "discard_own",
        "choose_first_player",
        "select_card",
        "x",
    ]
)
commands = st.fixed_dictionaries(
    {"type": command_types},
    optional={"disc": json_values, "count": json_values, "seat": json_values, "position": json_values},
)
bodies = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"command_id": st.text(max_size=70), "command": commands | json_values},
        optional={"expected_version": json_values},
    ),
)
SETTINGS = settings(
    max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None
)


@pytest.mark.thorough
@SETTINGS
@given(body=bodies)
def test_random_command_bodies_get_a_4xx_or_a_200_never_a_5xx(fake_api: Api, body: Any) -> None:
    game_id = fake_api.shared_game()
    before = fake_api.head(game_id)
    response = fake_api.client.post(
        f"/games/{game_id}/commands", json=body, headers=fake_api.auth(game_id, 0)
    )
    assert response.status_code < 500, response.text
    if response.status_code != 200:
        assert set(response.json()["error"]) >= {"code", "message"}
        assert fake_api.head(game_id) == before


@SETTINGS
@given(
    body=st.one_of(
        json_values,
        st.fixed_dictionaries(
            {
                "game": st.sampled_from(game_names()) | json_values,
                "players": json_values,
            },
            optional={"options": json_values},
        ),
    )
)
@pytest.mark.thorough
def test_random_table_bodies_never_get_a_5xx(fake_api: Api, body: Any) -> None:
    response = fake_api.client.post("/games", json=body)
    assert response.status_code < 500, response.text


@SETTINGS
@given(raw=st.binary(max_size=60))
def test_random_bytes_as_a_body_are_a_clean_400_or_422(fake_api: Api, raw: bytes) -> None:
    response = fake_api.client.post("/games", content=raw, headers={"Content-Type": "application/json"})
    assert response.status_code in (201, 400, 422), response.text


ENDPOINTS = [("GET", "view"), ("GET", "events"), ("GET", "scores"), ("GET", "audit"), ("GET", "export"),
             ("POST", "players"), ("POST", "commands")]  # fmt: skip


@SETTINGS
@given(
    game_id=st.text(min_size=1, max_size=80), endpoint=st.sampled_from(ENDPOINTS), token=st.text(max_size=40)
)
@pytest.mark.thorough
def test_any_game_id_and_token_in_the_path_gets_a_4xx_never_a_5xx(
    fake_api: Api, game_id: str, endpoint: tuple[str, str], token: str
) -> None:
    method, name = endpoint
    headers = {"Authorization": f"Bearer {token}"} if token.isascii() and token.isprintable() else {}
    path = f"/games/{quote(game_id, safe='')}/{name}"
    body = {"name": "x", "command_id": "c", "command": {"type": "pass"}} if method == "POST" else None
    response = fake_api.client.request(method, path, json=body, headers=headers)
    assert 400 <= response.status_code < 500, response.text


def test_a_body_over_the_limit_is_refused_with_413(fake_api: Api) -> None:
    response = fake_api.client.post("/games", content=b"[" + b"0," * 40_000 + b"0]", headers=JSON)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"


def test_json_nested_too_deeply_is_a_clean_400(fake_api: Api) -> None:
    response = fake_api.client.post("/games", content=b"[" * 30_000 + b"]" * 30_000, headers=JSON)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_json"
