"""The web client's server side: pages and assets, browser cookies, the options schema, narrated
events, and the replay of a finished game."""

from __future__ import annotations

import re

import msgspec
import pytest

from domain.games import game_names, table_for
from domain.table import TABLE_OPTIONS
from projections.narration import LANGUAGES, narrate
from services.api.web import options_schema
from tests.api.conftest import Api, practice


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/tables/abc123",
        "/replay/abc123",
        "/audit/abc123",
        "/rankings",
        "/rankings/skull",
        "/players/Ada%20B",
        "/players/a%2Fb",
    ],
)
def test_every_page_path_serves_the_client_shell(fake_api: Api, path: str) -> None:
    response = fake_api.client.get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert re.search(r'<script type="module" src="/static/[0-9a-f]{16}/js/app.js">', response.text)


def test_static_modules_at_their_unversioned_paths_are_javascript_and_revalidated(fake_api: Api) -> None:
    response = fake_api.client.get("/static/js/app.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert response.headers["cache-control"] == "no-cache"
    assert fake_api.client.get("/static/js/missing.js").status_code == 404


def test_the_docs_page_and_its_swagger_assets_are_served_locally(fake_api: Api) -> None:
    page = fake_api.client.get("/docs")
    assert page.status_code == 200 and "/docs/assets/swagger-ui-bundle.js" in page.text
    bundle = fake_api.client.get("/docs/assets/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and bundle.headers["content-type"].startswith("text/javascript")


def test_creating_and_joining_set_httponly_strict_token_cookies(fake_api: Api) -> None:
    created = fake_api.client.post("/games", json={"game": "skull", "players": 3})
    game_id, host = created.json()["game_id"], created.json()["host_token"]
    cookie = created.headers["set-cookie"]
    assert cookie.startswith(f"ts_host_{game_id}={host};")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    joined = fake_api.client.post(f"/games/{game_id}/players", json={"name": "Ada"})
    assert joined.headers["set-cookie"].startswith(f"ts_seat_{game_id}={joined.json()['token']};")


def test_a_seat_cookie_identifies_the_seat_without_a_header(fake_api: Api) -> None:
    game_id = fake_api.started("skull-king", 2)
    cookie = {"Cookie": f"ts_seat_{game_id}={fake_api.tokens[game_id][1]}"}
    view = fake_api.client.get(f"/games/{game_id}/view", headers=cookie).json()
    assert view["seat"] == 1 and view["hand"] is not None
    command = {"type": "bid", "tricks": 0}
    body = {"command_id": "c1", "command": command}
    sent = fake_api.client.post(f"/games/{game_id}/commands", json=body, headers=cookie)
    assert sent.status_code == 200


def test_the_bearer_header_wins_over_a_cookie_and_a_stale_cookie_is_a_spectator(fake_api: Api) -> None:
    game_id = fake_api.started("skull-king", 2)
    seat_cookie = f"ts_seat_{game_id}={fake_api.tokens[game_id][1]}"
    both = {**fake_api.auth(game_id, 0), "Cookie": seat_cookie}
    assert fake_api.client.get(f"/games/{game_id}/view", headers=both).json()["seat"] == 0
    stale = {"Cookie": f"ts_seat_{game_id}=not-a-token"}
    assert fake_api.client.get(f"/games/{game_id}/view", headers=stale).json()["seat"] is None


def test_a_host_cookie_counts_as_the_host_when_no_seat_cookie_is_there(fake_api: Api) -> None:
    game_id = fake_api.create("skull", 3)
    cookie = {"Cookie": f"ts_host_{game_id}={fake_api.hosts[game_id]}"}
    body = {"command_id": "c", "command": {"type": "pass"}}
    response = fake_api.client.post(f"/games/{game_id}/commands", json=body, headers=cookie)
    assert response.json()["error"]["code"] == "not_a_player"


def test_a_seat_cookie_leaves_the_table_and_the_answer_forgets_it(fake_api: Api) -> None:
    game_id = fake_api.create("skull", 3)
    fake_api.join(game_id, "Ada", "s")
    token = fake_api.tokens[game_id][0]
    cookie = {"Cookie": f"ts_seat_{game_id}={token}"}
    left = fake_api.client.post(f"/games/{game_id}/leave", json={}, headers=cookie)
    assert left.status_code == 200 and left.json() == {"seat": 0}
    assert left.headers["set-cookie"].startswith(f'ts_seat_{game_id}="";')
    assert fake_api.client.get(f"/games/{game_id}/view", headers=cookie).json()["seat"] is None


def test_the_options_schema_lists_every_option_of_every_game_with_a_meaning() -> None:
    schema = options_schema()
    assert [g["game"] for g in schema["games"]] == game_names()
    for game in schema["games"]:
        fields = msgspec.structs.fields(table_for(game["game"]).rules.options_type)
        assert [o["name"] for o in game["options"]] == [f.name for f in fields] + list(TABLE_OPTIONS)
        for option in game["options"]:
            assert option["description"], (game["game"], option["name"])
        assert 1 <= game["players"]["min"] <= game["players"]["max"]
    nimmt = next(g for g in schema["games"] if g["game"] == "six-nimmt")
    compare = next(o for o in nimmt["options"] if o["name"] == "end_compare")
    assert compare["type"] == "choice" and compare["values"] == ["ge", "gt"] and compare["default"] == "gt"
    assert schema["practice_seed"]["pattern"] == "^[0-9a-f]{64}$"
    turn = next(o for o in nimmt["options"] if o["name"] == "turn_seconds")
    assert turn["type"] == "integer" and turn["nullable"] and turn["default"] is None
    assert turn["minimum"] == 0 and turn["maximum"] == 86_400


def test_a_table_created_with_the_lobby_forms_online_options_keeps_them(fake_api: Api) -> None:
    options = {"turn_seconds": 15, "expire_minutes": 5, "takeover_after": 2}
    game_id = fake_api.started("skull", 3, **options)
    assert fake_api.view(game_id)["clock"]["turn_seconds"] == 15


def test_the_options_route_answers_the_schema(fake_api: Api) -> None:
    assert fake_api.client.get("/games/options").json() == msgspec.json.decode(
        msgspec.json.encode(options_schema())
    )


def test_events_with_lang_carry_a_sentence_and_without_it_are_unchanged(fake_api: Api) -> None:
    game_id = fake_api.started("six-nimmt", 2)
    plain = fake_api.client.get(f"/games/{game_id}/events").json()["events"]
    assert all("text" not in e for e in plain)
    for lang in LANGUAGES:
        told = fake_api.client.get(f"/games/{game_id}/events", params={"lang": lang}).json()["events"]
        assert [{k: v for k, v in e.items() if k != "text"} for e in told] == plain
        assert all(isinstance(e["text"], str) and e["text"] for e in told)
    bad = fake_api.client.get(f"/games/{game_id}/events", params={"lang": "xx"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_query"


def test_event_sentences_name_the_seats_and_change_with_the_language(fake_api: Api) -> None:
    game_id = fake_api.started("skull", 3)
    said = {
        lang: [
            e["text"]
            for e in fake_api.client.get(f"/games/{game_id}/events", params={"lang": lang}).json()["events"]
        ]
        for lang in LANGUAGES
    }
    names = [p["name"] for p in fake_api.view(game_id)["players"]]
    joined = [text for text in said["en"] if "takes seat" in text]
    assert [text.split(" takes seat")[0] for text in joined] == names
    assert len({tuple(texts) for texts in said.values()}) == len(LANGUAGES)


def test_each_caller_reads_the_sentences_of_the_events_as_it_sees_them(fake_api: Api) -> None:
    game_id = fake_api.started("skull-king", 2)
    assert fake_api.send(game_id, 0, {"type": "bid", "tricks": 0}).status_code == 200
    names = [p["name"] for p in fake_api.view(game_id)["players"]]
    for headers in ({}, fake_api.auth(game_id, 0), fake_api.auth(game_id, 1)):
        params = {"lang": "fr"}
        events = fake_api.client.get(f"/games/{game_id}/events", params=params, headers=headers).json()
        for event in events["events"]:
            shown = {k: v for k, v in event.items() if k != "text"}
            assert event["text"] == narrate("skull-king", shown, names, "fr")
    spectator = fake_api.client.get(f"/games/{game_id}/events", params={"lang": "en"}).json()["events"]
    seat = fake_api.client.get(
        f"/games/{game_id}/events", params={"lang": "en"}, headers=fake_api.auth(game_id, 0)
    ).json()["events"]
    assert spectator[-1]["text"] == "P0 places a bid" and seat[-1]["text"] == "P0 bids 0 tricks"


def test_a_running_game_has_no_replay(fake_api: Api) -> None:
    game_id = fake_api.started("skull", 3)
    response = fake_api.client.get(f"/games/{game_id}/replay", params={"at": 1})
    assert response.status_code == 409 and response.json()["error"]["code"] == "game_not_finished"


def test_the_replay_of_a_finished_game_gives_every_view_and_the_full_event_at_each_version(
    fake_api: Api,
) -> None:
    game_id = fake_api.started("six-nimmt", 2, rounds=1, **practice("six-nimmt", 1))
    fake_api.play_until(game_id, lambda view: view["status"] == "finished", seed=1)
    head = fake_api.head(game_id)
    for at in (1, head // 2, head):
        replay = fake_api.client.get(f"/games/{game_id}/replay", params={"at": at, "lang": "en"}).json()
        assert replay["version"] == at and replay["head"] == head
        assert replay["spectator"] == fake_api.view(game_id, at=at)
        assert [v["seat"] for v in replay["seats"]] == [0, 1]
        assert replay["seats"][1] == fake_api.view(game_id, 1, at=at)
        assert [e["version"] for e in replay["events"]] == [at]
        assert replay["events"][0]["text"]
    dealt = fake_api.client.get(f"/games/{game_id}/events", params={"after": 0, "limit": 1000}).json()[
        "events"
    ]
    deal = next(e for e in dealt if e["type"] == "cards_dealt")
    at_deal = fake_api.client.get(f"/games/{game_id}/replay", params={"at": deal["version"]}).json()
    assert all(hand is not None for hand in at_deal["events"][0]["hands"])  # everything revealed
    too_far = fake_api.client.get(f"/games/{game_id}/replay", params={"at": head + 1})
    assert too_far.status_code == 422
