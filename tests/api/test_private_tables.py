"""Private tables: never in the lobby, seen and joined only with the invite link (or a token of the
table); without them every route answers as for a game that does not exist."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.api.conftest import JSON, Api
from tests.api.test_lobby_live import listening, whole


def create_private(api: Api, game: str = "skull", players: int = 3, **options: Any) -> dict[str, Any]:
    response = api.client.post(
        "/games", json={"game": game, "players": players, "options": {"private": True, **options}}
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    api.tokens[created["game_id"]] = []
    api.hosts[created["game_id"]] = created["host_token"]
    return created


def join(api: Api, game_id: str, name: str, invite: str | None) -> Any:
    params = {"invite": invite} if invite is not None else {}
    return api.client.post(f"/games/{game_id}/players", json={"name": name}, params=params)


def unknown_answer(api: Api, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    response = api.client.request(method, path, **kwargs)
    return response.status_code, response.json()


def test_creating_a_private_table_answers_its_invite_link(api: Api) -> None:
    created = create_private(api)
    game_id, code = created["game_id"], created["invite"]
    assert created["private"] is True
    assert len(code) >= 22  # 128 bits, url-safe base64
    assert created["link"] == f"/tables/{game_id}?invite={code}"
    public = api.client.post("/games", json={"game": "skull", "players": 3}).json()
    assert set(public) == {"game_id", "host_token"}


def test_a_private_table_is_not_in_the_lobby_nor_in_the_live_lobby(api: Api) -> None:
    public = api.create("skull", 3)
    created = create_private(api)
    private = created["game_id"]
    assert join(api, private, "Ada", created["invite"]).status_code == 201  # a seat taken: still unlisted
    api.project()
    assert [g["game_id"] for g in api.client.get("/games").json()["games"]] == [public]
    with listening(api.client) as lobby:
        _, first = lobby.next(whole, "the whole lobby")
        assert [g["game_id"] for g in first["games"]] == [public]
        another = create_private(api)["game_id"]
        marker = api.create("six-nimmt", 2)  # announced after the private table's projection
        api.project()
        _, seen = lobby.next(lambda name, data: name == "table", "the next table announced")
        assert seen["game_id"] == marker, f"the private table {another} was announced"
    assert private not in api.client.get("/games?limit=1000").text


def test_the_invite_link_seats_a_friend_and_the_table_starts(api: Api) -> None:
    created = create_private(api, "skull", 3)
    game_id, code = created["game_id"], created["invite"]
    seats = []
    for name in ("Host", "Friend", "Other"):
        response = join(api, game_id, name, code)
        assert response.status_code == 201, response.text
        api.tokens[game_id].append(response.json()["token"])
        seats.append(response.json()["seat"])
    assert seats == [0, 1, 2]
    view = api.view(game_id, 1)  # a seat's own token lets the seat in, with no code
    assert view["status"] == "playing"
    assert [p["name"] for p in view["players"]] == ["Host", "Friend", "Other"]


@pytest.mark.parametrize("invite", [None, "wrong-code", ""])
def test_a_wrong_link_is_a_404_like_an_unknown_game_and_takes_no_seat(api: Api, invite: str | None) -> None:
    created = create_private(api)
    game_id = created["game_id"]
    refused = join(api, game_id, "Mallory", invite)
    assert refused.status_code == 404
    unknown = join(api, "0123456789abcdef", "Mallory", invite)
    assert refused.json() == {
        "error": {**unknown.json()["error"], "message": f"There is no game with id {game_id!r}."}
    }
    assert refused.json()["error"]["code"] == "game_not_found"
    admitted = api.client.get(f"/games/{game_id}/view", params={"invite": created["invite"]})
    assert admitted.json()["players"] == []


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/view", None),
        ("GET", "/events", None),
        ("GET", "/scores", None),
        ("GET", "/live", None),
        ("GET", "/invite", None),
        ("GET", "/audit", None),
        ("GET", "/export", None),
        ("GET", "/replay?at=1", None),
        ("POST", "/commands", {"command_id": "a", "command": {"type": "place_disc", "disc": "flower"}}),
        ("POST", "/bots", {}),
        # the routes of the features merged beside private tables (issue 23)
        ("GET", "/chat", None),
        ("POST", "/chat", {"text": "hello"}),
        ("POST", "/chat/report", {"messages": [1], "reason": "spam"}),
        ("POST", "/chat/settings", {"enabled": False}),
        ("GET", "/live?chat=1", None),
        ("GET", "/export?chat=1", None),
        ("GET", "/rematch", None),
        ("POST", "/rematch", {}),
        ("POST", "/rematch/decline", {}),
    ],
)
def test_viewing_or_spectating_a_private_table_without_its_code_answers_as_an_unknown_game(
    api: Api, method: str, path: str, body: Any
) -> None:
    game_id = create_private(api)["game_id"]
    unknown_id = "0123456789abcdef"
    kwargs: dict[str, Any] = {"json": body} if body is not None else {}
    status, answer = unknown_answer(api, method, f"/games/{game_id}{path}", **kwargs)
    unknown_status, unknown = unknown_answer(api, method, f"/games/{unknown_id}{path}", **kwargs)
    assert status == unknown_status
    assert status in (401, 404)
    assert answer["error"]["code"] == unknown["error"]["code"]
    assert answer["error"]["message"] == unknown["error"]["message"].replace(unknown_id, game_id)


@pytest.mark.parametrize("page", ["/tables/{}", "/replay/{}", "/audit/{}", "/disputes/{}/0123456789abcdef"])
@pytest.mark.parametrize("credential", ["none", "another table's host", "an account"])
def test_every_page_of_a_private_table_reads_as_an_unknown_game_s_to_anyone_without_its_link(
    api: Api, page: str, credential: str
) -> None:
    """Byte for byte, but for the id: the same status, length and body as a game that does not exist."""
    game_id = create_private(api)["game_id"]
    unknown_id = "fedcba9876543210"
    headers = {"Accept": "text/html"}
    if credential == "another table's host":
        headers["Authorization"] = f"Bearer {create_private(api)['host_token']}"
    elif credential == "an account":
        headers["Authorization"] = (
            f"Bearer {api.client.post('/accounts', json={'name': 'Mallory'}).json()['token']}"
        )
    private = api.client.get(page.format(game_id), headers=headers)
    unknown = api.client.get(page.format(unknown_id), headers=headers)
    assert private.status_code == unknown.status_code
    assert len(private.content) == len(unknown.content)
    assert private.text.replace(game_id, "ID") == unknown.text.replace(unknown_id, "ID")
    assert "set-cookie" not in private.headers


def test_a_token_of_the_table_or_its_link_lets_a_reader_in_and_another_tables_token_does_not(
    api: Api,
) -> None:
    created = create_private(api)
    game_id, code = created["game_id"], created["invite"]
    host = {"Authorization": f"Bearer {created['host_token']}"}
    assert api.client.get(f"/games/{game_id}/view", headers=host).status_code == 200
    assert api.client.get(f"/games/{game_id}/invite", headers=host).json()["link"] == created["link"]
    by_cookie = api.client.get(f"/games/{game_id}/events", headers={"Cookie": f"ts_invite_{game_id}={code}"})
    assert by_cookie.status_code == 200
    other = create_private(api)
    foreign = {"Authorization": f"Bearer {other['host_token']}"}
    refused = api.client.get(f"/games/{game_id}/view", headers=foreign)
    unknown = api.client.get("/games/0123456789abcdef/view", headers=foreign)
    assert (refused.status_code, refused.json()) == (unknown.status_code, unknown.json())  # as for no game


def test_the_page_opened_with_the_right_code_keeps_it_in_an_http_only_cookie(api: Api) -> None:
    created = create_private(api)
    game_id, code = created["game_id"], created["invite"]
    page = api.client.get(f"/tables/{game_id}", params={"invite": code}, headers={"Accept": "text/html"})
    assert page.status_code == 200
    cookie = page.headers["set-cookie"]
    assert cookie.startswith(f"ts_invite_{game_id}={code};") and "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    wrong = api.client.get(f"/tables/{game_id}", params={"invite": "nope"}, headers={"Accept": "text/html"})
    unknown = api.client.get("/tables/0123456789abcdef", headers={"Accept": "text/html"})
    assert wrong.status_code == unknown.status_code == 200
    assert "set-cookie" not in wrong.headers
    assert wrong.text.replace(game_id, "") == unknown.text.replace("0123456789abcdef", "")


def test_a_public_tables_stream_keeps_its_bytes_and_a_private_one_records_the_option(api: Api) -> None:
    public = api.create("skull", 3)
    private = create_private(api)["game_id"]
    token = {"Authorization": f"Bearer {api.hosts[private]}"}
    events = api.client.get(f"/games/{public}/events").json()["events"]
    timers = next(e for e in events if e["type"] == "table_timers_set")
    assert "private" not in timers
    events = api.client.get(f"/games/{private}/events", headers=token).json()["events"]
    timers = next(e for e in events if e["type"] == "table_timers_set")
    assert timers["private"] is True


def test_the_private_option_must_be_a_boolean(api: Api) -> None:
    response = api.client.post(
        "/games", json={"game": "skull", "players": 3, "options": {"private": "yes"}}, headers=JSON
    )
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_options"


def test_opening_an_account_seat_at_a_private_table_the_account_is_not_at_answers_as_an_unknown_game(
    api: Api,
) -> None:
    game_id = create_private(api)["game_id"]
    stranger = api.client.post("/accounts", json={"name": "Mallory"}).json()["token"]
    unknown_id = "0123456789abcdef"

    def opened(at: str) -> Any:
        return api.client.post(
            f"/me/tables/{at}/seat", json={}, headers={"Authorization": f"Bearer {stranger}"}
        )

    refused, unknown = opened(game_id), opened(unknown_id)
    assert refused.status_code == unknown.status_code == 404
    assert refused.json() == {
        "error": {
            **unknown.json()["error"],
            "message": unknown.json()["error"]["message"].replace(unknown_id, game_id),
        }
    }


CREDENTIALS = [
    "none",
    "another table's host token",
    "another table's seat token",
    "another table's seat cookie",
    "an account token",
    "a rail cookie",
]
COMPARED_HEADERS = ("content-type", "content-length", "cache-control", "retry-after", "link", "location")


def routes_of_a_game(api: Api) -> list[tuple[str, str]]:
    """(method, path) of every route the app serves under a game's id: the API's and the pages'."""
    found = []
    for route in api.client.app.routes:  # type: ignore[attr-defined]
        path = getattr(route, "path", "")
        if "{game_id}" not in path:
            continue
        for method in sorted((getattr(route, "methods", None) or {"GET"}) - {"HEAD"}):
            found.append((method, path))
    return found


def credential_headers(api: Api, credential: str) -> dict[str, str]:
    other = api.started("skull", 3)
    if credential == "another table's host token":
        return {"Authorization": f"Bearer {api.hosts[other]}"}
    if credential == "another table's seat token":
        return api.auth(other, 0)
    if credential == "another table's seat cookie":
        return {"Cookie": f"ts_seat_{other}={api.tokens[other][0]}"}
    if credential == "an account token":
        token = api.client.post("/accounts", json={"name": "Mallory"}).json()["token"]
        return {"Authorization": f"Bearer {token}"}
    if credential == "a rail cookie":
        return {"Cookie": "ts_rail=" + "ab" * 16}
    return {}


CLOCKED = re.compile(rb'"next_checkpoint":\d+')
"""A field of an answer computed from the time of asking (the public log's next checkpoint, in
seconds): two answers a moment apart may straddle a second (CI36), so it is compared as a field."""


def unclocked(content: bytes, game_id: str) -> bytes:
    """An answer's body with the game's id and the fields read from the clock put aside."""
    return CLOCKED.sub(b'"next_checkpoint":T', content.replace(game_id.encode(), b"ID"))


@pytest.mark.parametrize("credential", CREDENTIALS)
def test_every_route_under_a_game_answers_a_private_table_as_an_unknown_game_to_every_other_credential(
    fake_api: Api, credential: str
) -> None:
    """The property over the whole router (no list kept by hand): for every route with a game's id,
    every method, and each credential that is not the table's, a running private table and an id no
    game has get the same status, the same body but for the id, and the same headers that could tell
    them apart (type, length, caching, links); neither sets a cookie."""
    api = fake_api
    created = create_private(api)
    game_id = created["game_id"]
    for seat in range(3):
        assert join(api, game_id, f"P{seat}", created["invite"]).status_code == 201  # it runs: a real game
    unknown_id = "0123456789abcdef"
    assert len(unknown_id) == len(game_id)
    headers = {**credential_headers(api, credential), "Accept": "application/json"}
    routes = routes_of_a_game(api)
    assert len(routes) >= 30, routes  # the router's, not a hand-kept few
    for method, path in routes:
        concrete = path.replace("{dispute_id}", "0123456789abcdef").replace("{seat}", "0")
        answers = []
        for gid in (game_id, unknown_id):
            body = {"json": {}} if method == "POST" else {}
            response = api.client.request(method, concrete.replace("{game_id}", gid), headers=headers, **body)
            answers.append(response)
        private, unknown = answers
        where = f"{method} {path} with {credential}"
        assert private.status_code == unknown.status_code, where
        assert unclocked(private.content, game_id) == unclocked(unknown.content, unknown_id), where
        for name in COMPARED_HEADERS:
            assert private.headers.get(name) == unknown.headers.get(name), f"{where}: {name}"
        assert ("etag" in private.headers) == ("etag" in unknown.headers), where
        assert "set-cookie" not in private.headers, where
