"""'Your tables' (``GET /me/tables``, ``GET /me/live``, ``POST /me/tables/{id}/seat``) and the
turn-based table option over HTTP: awaited tables first, an account's seats seen and played from a
second login (another device), the browser's own anonymous seats, and the bounds of ``turn_seconds``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api
from tests.api.test_lobby_live import Listener

DAY = 86_400
WEEK = 7 * DAY


def register(api: Api, name: str, password: str = "correct horse battery") -> str:
    response = api.client.post("/accounts", json={"name": name, "password": password})
    assert response.status_code == 201, response.text
    token: str = response.json()["token"]
    return token


def login(api: Api, name: str, password: str = "correct horse battery") -> str:
    response = api.client.post("/accounts/login", json={"name": name, "password": password})
    assert response.status_code == 200, response.text
    token: str = response.json()["token"]
    return token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def seated_with(api: Api, account: str, game: str = "six-nimmt", **options: Any) -> tuple[str, int]:
    """A started table of three: the account's seat first, then two anonymous players."""
    game_id = api.create(game, 3, **options)
    response = api.client.post(f"/games/{game_id}/players", json={}, headers=bearer(account))
    assert response.status_code == 201, response.text
    api.tokens[game_id].append(response.json()["token"])
    api.join(game_id, "Bea")
    api.join(game_id, "Cem")
    return game_id, response.json()["seat"]


def mine(api: Api, **headers: str) -> dict[str, Any]:
    response = api.client.get("/me/tables", headers=headers)
    assert response.status_code == 200, response.text
    listing: dict[str, Any] = response.json()
    return listing


def test_your_tables_lists_the_tables_awaiting_you_first(api: Api) -> None:
    ada = register(api, "Ada")
    awaiting, _ = seated_with(api, ada, turn_based=True, turn_seconds=DAY)
    moved, seat = seated_with(api, ada)  # newer: first in the account's index
    own = api.view(moved, seat)
    assert api.send(moved, seat, own["legal"][0]).status_code == 200  # Ada chose; the others have not
    listing = mine(api, **bearer(ada))
    assert [t["game_id"] for t in listing["tables"]] == [awaiting, moved]
    first, second = listing["tables"]
    assert first["awaiting"] and not second["awaiting"] and listing["awaiting"] == 1
    assert first["turn_based"] and first["turn_seconds"] == DAY
    assert 0 < first["deadline_ms"] - listing["now_ms"] <= DAY * 1000
    assert first["name"] == "Ada" and [o["name"] for o in first["opponents"]] == ["Bea", "Cem"]
    assert first["game"] == "six-nimmt" and first["status"] == "playing" and first["account"]


def test_an_account_seat_shows_on_a_second_login_and_is_played_from_there(api: Api) -> None:
    ada = register(api, "Ada")
    game_id, seat = seated_with(api, ada, turn_based=True, turn_seconds=3 * DAY)
    phone = login(api, "Ada")  # another device: another token of the same account
    listing = mine(api, **bearer(phone))
    (table,) = listing["tables"]
    assert table["game_id"] == game_id and table["awaiting"] and table["account"] and not table["here"]
    opened = api.client.post(f"/me/tables/{game_id}/seat", json={}, headers=bearer(phone))
    assert opened.status_code == 200, opened.text
    assert opened.json()["seat"] == seat
    view = api.client.get(f"/games/{game_id}/view", headers=bearer(opened.json()["token"])).json()
    assert view["seat"] == seat and view["legal"]
    sent = api.client.post(
        f"/games/{game_id}/commands",
        json={"command_id": "from-the-phone", "command": view["legal"][0]},
        headers=bearer(opened.json()["token"]),
    )
    assert sent.status_code == 200, sent.text
    assert not mine(api, **bearer(ada))["tables"][0]["awaiting"]  # the first device sees the move


def test_opening_an_account_seat_is_refused_where_the_account_has_none_or_the_game_waits(api: Api) -> None:
    ada = register(api, "Ada")
    elsewhere = api.started("skull", 3)
    refused = api.client.post(f"/me/tables/{elsewhere}/seat", json={}, headers=bearer(ada))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "no_seat_here"
    waiting = api.create("skull", 3)
    assert api.client.post(f"/games/{waiting}/players", json={}, headers=bearer(ada)).status_code == 201
    early = api.client.post(f"/me/tables/{waiting}/seat", json={}, headers=bearer(ada))
    assert early.status_code == 409 and early.json()["error"]["code"] == "not_started"
    anonymous = api.client.post(f"/me/tables/{waiting}/seat", json={})
    assert anonymous.status_code == 401
    bad = api.client.get("/me/tables", headers=bearer("0123456789abcdef.nope"))
    assert bad.status_code == 401 and bad.json()["error"]["code"] == "invalid_account_token"


def test_the_browsers_own_anonymous_seats_are_listed_and_a_stale_cookie_is_ignored(api: Api) -> None:
    game_id = api.started("skull", 3, turn_seconds=120)
    waiting = api.create("skull", 4)
    api.join(waiting, "Dee")
    cookies = {
        f"ts_seat_{game_id}": api.tokens[game_id][1],
        f"ts_seat_{waiting}": api.tokens[waiting][0],
        f"ts_seat_{api.create('skull', 3)}": "not-a-token",
    }
    header = "; ".join(f"{name}={value}" for name, value in cookies.items())
    listing = mine(api, Cookie=header)
    assert {t["game_id"]: t["seat"] for t in listing["tables"]} == {game_id: 1, waiting: 0}
    assert listing["tables"][-1]["status"] == "waiting"  # a table still filling comes after the games
    assert all(t["here"] and not t["account"] for t in listing["tables"]) and not listing["account"]
    assert mine(api)["tables"] == []  # no account, no cookie: nothing


@pytest.mark.thorough
def test_a_table_that_ended_leaves_your_tables(api: Api) -> None:
    ada = register(api, "Ada")
    game_id, _ = seated_with(api, ada, rounds=1)
    api.play_until(game_id, lambda view: view["status"] == "finished")
    assert mine(api, **bearer(ada))["tables"] == []


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"turn_seconds": WEEK}, "turn_too_long"),
        ({"turn_seconds": DAY + 1}, "turn_too_long"),
        ({"turn_seconds": WEEK + 1, "turn_based": True}, "invalid_options"),
        ({"turn_based": True, "expire_minutes": 24 * 60 + 1}, "invalid_options"),
        ({"expire_minutes": 61}, "invalid_options"),
        ({"turn_based": "yes"}, "invalid_options"),
    ],
)
def test_turn_seconds_beyond_a_day_need_a_turn_based_table_and_a_week_is_the_most(
    fake_api: Api, options: dict[str, Any], code: str
) -> None:
    response = fake_api.client.post("/games", json={"game": "skull", "players": 3, "options": options})
    assert response.status_code == 422 and response.json()["error"]["code"] == code, response.text


def test_a_turn_based_table_takes_a_week_per_turn_waits_a_day_and_says_so(fake_api: Api) -> None:
    game_id = fake_api.create("skull", 3, turn_based=True, turn_seconds=WEEK)
    fake_api.project()
    entry = next(g for g in fake_api.client.get("/games").json()["games"] if g["game_id"] == game_id)
    assert entry["turn_based"]
    assert fake_api.view(game_id)["turn_based"]
    events = fake_api.client.get(f"/games/{game_id}/events").json()["events"]
    timers = next(e for e in events if e["type"] == "table_timers_set")
    assert timers["turn_based"] and timers["turn_seconds"] == WEEK and timers["expire_minutes"] == 24 * 60
    real_time = fake_api.create("skull", 3, turn_seconds=DAY)  # a real-time table keeps today's bound
    events = fake_api.client.get(f"/games/{real_time}/events").json()["events"]
    assert "turn_based" not in next(e for e in events if e["type"] == "table_timers_set")
    assert not fake_api.view(real_time)["turn_based"]


def test_the_live_list_is_sent_at_once_and_again_when_a_table_comes_to_await_you(api: Api) -> None:
    ada = register(api, "Ada")
    game_id, seat = seated_with(api, ada, turn_based=True, turn_seconds=DAY)
    own = api.view(game_id, seat)
    assert api.send(game_id, seat, own["legal"][0]).status_code == 200
    listener = Listener(lambda: api.client.stream("GET", "/me/live", headers=bearer(ada)))
    try:
        _, first = listener.next(lambda name, data: name == "tables", "the first list")
        assert first["awaiting"] == 0 and [t["game_id"] for t in first["tables"]] == [game_id]
        api.play_until(game_id, lambda view: seat in view["to_act"])  # the others choose; a new turn
        _, later = listener.next(lambda name, data: name == "tables" and data["awaiting"] == 1, "awaited")
        assert later["tables"][0]["awaiting"]
    finally:
        api.client.app.state.begin_shutdown()  # type: ignore[attr-defined]  # ends every stream at once
        assert listener.ended.wait(20)


def test_the_openapi_create_body_allows_a_week_only_at_a_turn_based_table() -> None:
    from tests.api.test_openapi_bodies import valid

    def body(**options: Any) -> dict[str, Any]:
        return {"game": "skull", "players": 3, "options": options}

    assert valid("CreateGame", body(turn_based=True, turn_seconds=WEEK, expire_minutes=24 * 60))
    assert valid("CreateGame", body(turn_seconds=DAY, expire_minutes=60))
    assert not valid("CreateGame", body(turn_seconds=DAY + 1))
    assert not valid("CreateGame", body(turn_based=False, turn_seconds=WEEK))
    assert not valid("CreateGame", body(turn_based=True, turn_seconds=WEEK + 1))
    assert not valid("CreateGame", body(expire_minutes=61))
