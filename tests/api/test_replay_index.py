"""``GET /games/{id}/replay/index``: a finished game's rounds, steps and moves over HTTP, the caller's seat
by token or browser cookie, and one cut per game however often it is asked for."""

from __future__ import annotations

from typing import Any

import pytest

import services.table.queries
from tests.api.conftest import Api, practice


def finished_game(api: Api, game: str, players: int, seed: int, **options: Any) -> str:
    game_id = api.started(game, players, **options, **practice(game, seed))
    api.play_until(game_id, lambda view: view["status"] == "finished", seed=seed)
    return game_id


def test_a_running_or_unknown_game_has_no_replay_index(fake_api: Api) -> None:
    game_id = fake_api.started("skull", 3)
    running = fake_api.client.get(f"/games/{game_id}/replay/index")
    assert running.status_code == 409 and running.json()["error"]["code"] == "game_not_finished"
    unknown = fake_api.client.get("/games/nosuchgame/replay/index")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "game_not_found"


def test_the_replay_index_of_a_finished_game_names_its_seats_and_cuts_it_into_turns(fake_api: Api) -> None:
    game_id = finished_game(fake_api, "six-nimmt", 2, 1, rounds=1)
    head = fake_api.head(game_id)
    index = fake_api.client.get(f"/games/{game_id}/replay/index").json()
    assert index["game"] == "six-nimmt" and index["head"] == head and index["you"] is None
    assert index["players"] == [{"seat": 0, "name": "P0"}, {"seat": 1, "name": "P1"}]
    assert [r["round"] for r in index["rounds"]] == [0, 1]
    assert index["rounds"][-1]["end"] == head
    turns = [s for s in index["steps"] if s["kind"] == "turn"]
    assert [s["n"] for s in turns] == list(range(1, 11))
    # The replay at a turn's last version shows that turn's cards revealed, in words.
    last = turns[3]["end"]
    events = fake_api.client.get(f"/games/{game_id}/events", params={"after": 0, "limit": 1000}).json()
    revealed = [e for e in events["events"] if turns[3]["start"] <= e["version"] <= last]
    assert [e["turn"] for e in revealed if e["type"] == "cards_revealed"] == [4]


@pytest.mark.thorough
def test_every_move_in_the_index_is_a_replay_version_whose_event_came_from_that_seat(fake_api: Api) -> None:
    game_id = finished_game(fake_api, "skull-king", 2, 2)
    index = fake_api.client.get(f"/games/{game_id}/replay/index").json()
    assert {m["seat"] for m in index["moves"]} == {0, 1}
    for move in index["moves"][:12]:
        replay = fake_api.client.get(f"/games/{game_id}/replay", params={"at": move["version"]}).json()
        (event,) = replay["events"]
        assert event["by"] == move["by"] == "player"
        assert event["seat"] == move["seat"]  # a bid or a card, by the seat that sent it


def test_you_is_the_seat_of_the_bearer_token_or_of_the_browser_seat_cookie(fake_api: Api) -> None:
    game_id = finished_game(fake_api, "skull", 3, 3)
    path = f"/games/{game_id}/replay/index"
    by_token = fake_api.client.get(path, headers=fake_api.auth(game_id, 2)).json()
    assert by_token["you"] == 2
    fake_api.client.cookies.set(f"ts_seat_{game_id}", fake_api.tokens[game_id][1])  # cleared after use
    by_cookie = fake_api.client.get(path).json()
    assert by_cookie["you"] == 1
    host = fake_api.client.get(path, headers={"Authorization": f"Bearer {fake_api.hosts[game_id]}"}).json()
    assert host["you"] is None
    assert {**by_token, "you": None} == {**by_cookie, "you": None} == host
    bad = fake_api.client.get(path, headers={"Authorization": "Bearer not-a-token"})
    assert bad.status_code == 401


def test_a_game_is_cut_once_however_often_its_index_is_asked_for(
    fake_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = finished_game(fake_api, "six-nimmt", 2, 4, rounds=1)
    cuts: list[str] = []
    real = services.table.queries.build_index

    def counted(game: str, entries: Any) -> dict[str, Any]:
        cuts.append(game)
        return real(game, entries)

    monkeypatch.setattr(services.table.queries, "build_index", counted)
    first = fake_api.client.get(f"/games/{game_id}/replay/index").json()
    again = fake_api.client.get(f"/games/{game_id}/replay/index", headers=fake_api.auth(game_id, 0)).json()
    assert cuts == ["six-nimmt"]
    assert again == {**first, "you": 0}


def test_the_openapi_document_describes_the_replay_index(fake_api: Api) -> None:
    spec = fake_api.client.get("/openapi.json").json()
    route = spec["paths"]["/games/{game_id}/replay/index"]["get"]
    schema = route["responses"]["200"]["content"]["application/json"]["schema"]
    assert set(schema["required"]) == {"game", "head", "players", "rounds", "steps", "moves", "you"}
    assert "409" in route["responses"]
