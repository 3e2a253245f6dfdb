"""Whole games by bots over HTTP, checked through views, events, time travel, scores and live updates."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from domain.games import specs, table_for
from projections.views import seat_view
from services.cli.demo import play_game
from tests.api.conftest import Api, practice

GAMES = [(game.name, game.default_players) for game in specs()]


def finished_game(api: Api, game: str, players: int, seed: int) -> dict[str, Any]:
    final, tokens = play_game(
        api.client, game, players, random.Random(seed), out=lambda line: None, options=practice(game, seed)
    )
    api.tokens[final["game_id"]] = tokens
    api.project()
    return final


def all_events(api: Api, game_id: str) -> list[dict[str, Any]]:
    return api.client.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]


@pytest.mark.thorough
@pytest.mark.parametrize(("game", "players"), GAMES)
def test_bots_finish_a_game_with_winners_and_every_read_agrees(api: Api, game: str, players: int) -> None:
    final = finished_game(api, game, players, seed=7)
    game_id = final["game_id"]
    assert final["status"] == "finished"
    assert final["winners"]
    assert final["to_act"] == [] and final["legal"] == []
    assert api.view(game_id) == final  # the projection caught up with the same bytes
    board = api.client.get(f"/games/{game_id}/scores").json()
    assert board["winners"] == final["winners"]
    assert board["totals"] == final["scores"]
    lobby_ids = {g["game_id"] for g in api.client.get("/games").json()["games"]}
    assert game_id not in lobby_ids  # the lobby lists open and running tables only


@pytest.mark.thorough
@pytest.mark.parametrize(("game", "players"), GAMES)
def test_time_travel_views_equal_the_fold_of_the_events_up_to_that_version(
    api: Api, game: str, players: int
) -> None:
    final = finished_game(api, game, players, seed=11)
    game_id = final["game_id"]
    table = table_for(game)
    events = all_events(api, game_id)  # the game is over: nothing is redacted any more
    assert [e["version"] for e in events] == list(range(1, final["version"] + 1))
    decoded = [
        msgspec.convert({k: v for k, v in e.items() if k not in ("version", "by")}, table.event_type)
        for e in events
    ]
    rng = random.Random(3)
    for version in [*sorted(rng.sample(range(1, final["version"] + 1), 8)), final["version"]]:
        state = table.fold(None, decoded[:version])
        assert state is not None
        for seat in (None, 0, players - 1):
            expected = msgspec.json.decode(msgspec.json.encode(seat_view(state, version, seat)))
            expected["clock"] = None  # a view of the past has no running clock
            assert api.view(game_id, seat, at=version) == expected


@pytest.mark.thorough
def test_after_the_game_every_hidden_disc_is_shown_to_everyone(api: Api) -> None:
    final = finished_game(api, "skull", 3, seed=5)
    placed = [e for e in all_events(api, final["game_id"]) if e["type"] == "disc_placed"]
    assert placed and all(e["disc"] is not None for e in placed)


@pytest.mark.thorough
def test_live_resumes_after_last_event_id_without_gaps_or_duplicates(api: Api) -> None:
    final = finished_game(api, "skull", 3, seed=9)
    game_id, head = final["game_id"], final["version"]
    with api.client.stream("GET", f"/games/{game_id}/live", headers={"Last-Event-ID": "5"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        messages = parse_sse(response.iter_lines())
    assert [m["id"] for m in messages] == list(range(6, head + 1))
    assert all(msgspec.json.decode(m["data"])["version"] == m["id"] for m in messages)


def test_live_without_last_event_id_starts_with_the_current_view(api: Api) -> None:
    final = finished_game(api, "skull", 3, seed=13)
    with api.client.stream("GET", f"/games/{final['game_id']}/live") as response:
        messages = parse_sse(response.iter_lines())
    assert [m["id"] for m in messages] == [final["version"]]
    assert msgspec.json.decode(messages[0]["data"]) == final


def parse_sse(lines: Any) -> list[dict[str, Any]]:
    messages, current = [], {}
    for line in lines:
        if not line:
            if current:
                messages.append(current)
            current = {}
        elif line.startswith("id: "):
            current["id"] = int(line[4:])
        elif line.startswith("data: "):
            current["data"] = line[6:]
    return messages
