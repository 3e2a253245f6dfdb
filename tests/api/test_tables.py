"""Tables and the lobby over HTTP: creation, seats, start, and the errors a client can cause."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api


def test_creating_a_table_returns_its_id_and_an_unguessable_host_token(api: Api) -> None:
    response = api.client.post("/games", json={"game": "skull", "players": 3})
    assert response.status_code == 201
    body = response.json()
    assert len(body["game_id"]) >= 8
    assert len(body["host_token"]) >= 22  # >= 128 bits of url-safe base64


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"game": "chess", "players": 3}, "unknown_game"),
        ({"game": "skull", "players": 2}, "bad_player_count"),
        ({"game": "skull", "players": 7}, "bad_player_count"),
        ({"game": "skull", "players": "three"}, "invalid_request"),
        ({"game": "skull", "players": 3, "options": {"no_such_option": True}}, "invalid_options"),
        ({"game": "skull", "players": 3, "options": {"last_chance": "yes"}}, "invalid_options"),
        ({"game": "skull", "players": 3, "options": {"seed": "not-hex"}}, "invalid_options"),
        ({"players": 3}, "invalid_request"),
    ],
)
def test_a_table_the_rules_refuse_gets_a_422_with_a_specific_code(api: Api, body: dict, code: str) -> None:
    response = api.client.post("/games", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"].endswith(".")


def test_seats_are_given_in_order_and_the_last_join_starts_the_game(api: Api) -> None:
    game_id = api.create("skull", 3)
    assert [api.join(game_id, name) for name in ("Ada", "Bo")] == [0, 1]
    assert api.view(game_id)["status"] == "waiting"
    assert api.join(game_id, "Cy") == 2
    view = api.view(game_id, 0)
    assert view["status"] == "playing"
    assert [p["name"] for p in view["players"]] == ["Ada", "Bo", "Cy"]
    assert view["to_act"] == [0, 1, 2]


def test_joining_a_full_table_is_a_409_and_takes_no_seat(api: Api) -> None:
    game_id = api.started("skull", 3)
    head = api.head(game_id)
    response = api.client.post(f"/games/{game_id}/players", json={"name": "Late"})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "table_full"
    assert api.head(game_id) == head


def test_a_client_seed_longer_than_64_characters_is_refused(api: Api) -> None:
    game_id = api.create("skull", 3)
    response = api.client.post(f"/games/{game_id}/players", json={"name": "A", "client_seed": "x" * 65})
    assert response.status_code == 422


def test_joining_an_unknown_game_is_a_404(api: Api) -> None:
    response = api.client.post("/games/nope/players", json={"name": "A"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "game_not_found"


def test_the_lobby_lists_open_and_running_tables_once_projected(api: Api) -> None:
    open_id = api.create("skull", 3)
    running_id = api.started("skull", 3)
    api.project()
    games = {g["game_id"]: g for g in api.client.get("/games").json()["games"]}
    assert games[open_id]["status"] == "waiting"
    assert games[open_id]["seats_taken"] == 0
    assert games[running_id]["status"] == "playing"
    assert games[running_id]["seats_taken"] == 3


def test_a_practice_table_says_so_in_every_view(api: Api) -> None:
    game_id = api.started("skull", 3, seed="ab" * 32)
    assert api.view(game_id)["practice"] is True
    assert api.view(game_id, 1)["practice"] is True


def test_the_practice_seed_never_appears_in_events_or_views(api: Api) -> None:
    seed = "cd" * 32
    game_id = api.started("skull", 3, seed=seed)
    api.project()
    assert seed not in api.client.get(f"/games/{game_id}/events").text
    assert seed not in api.client.get(f"/games/{game_id}/view").text
    assert seed not in api.client.get(f"/games/{game_id}/scores").text
