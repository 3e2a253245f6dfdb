"""Accounts over HTTP: register, log in, join with an account, histories, leaderboards, secrecy."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from bots import choose
from projections.ratings import display_rating
from services.history.verify import verify_export
from services.store import retention
from services.store.keys import RATINGS
from tests.api.conftest import Api

SHORT = {"rounds": 1}  # a one-round 6 nimmt! game: ten turns


def register(api: Api, name: str, password: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if password is not None:
        body["password"] = password
    response = api.client.post("/accounts", json=body)
    assert response.status_code == 201, response.text
    registered: dict[str, Any] = response.json()
    return registered


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def join_as(api: Api, game_id: str, account_token: str, **body: Any) -> int:
    response = api.client.post(f"/games/{game_id}/players", json=body, headers=bearer(account_token))
    assert response.status_code == 201, response.text
    api.tokens[game_id].append(response.json()["token"])
    seat: int = response.json()["seat"]
    return seat


def play_out(api: Api, game_id: str, seed: int) -> dict[str, Any]:
    """Bots play every seat to the end; the projections run after every command."""
    rng = random.Random(seed)
    while (view := api.view(game_id))["status"] != "finished":
        for seat in view["to_act"]:
            own = api.view(game_id, seat)
            response = api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
            assert response.status_code in (200, 409), response.text
    api.project()
    return view


def rated_game(api: Api, tokens: list[str], seed: int) -> str:
    game_id = api.create("six-nimmt", len(tokens), **SHORT)
    for token in tokens:
        join_as(api, game_id, token, client_seed=f"cs-{seed}")
    play_out(api, game_id, seed)
    return game_id


# -- registering and logging in ---------------------------------------------------------------------


def test_registering_gives_an_account_id_a_token_and_a_public_profile(fake_api: Api) -> None:
    ada = register(fake_api, "  Ada Lovelace ")
    assert ada["name"] == "Ada Lovelace"
    assert len(ada["token"]) > 40 and ada["token"].startswith(ada["account_id"] + ".")
    profile = fake_api.client.get("/accounts/ada lovelace").json()
    assert profile == {
        "account_id": ada["account_id"],
        "name": "Ada Lovelace",
        "ratings": {},
        "history": f"/accounts/{ada['account_id']}/history",
    }
    assert fake_api.client.get(f"/accounts/{ada['account_id']}").json() == profile
    me = fake_api.client.get("/accounts/me", headers=bearer(ada["token"])).json()
    assert me == {**profile, "has_password": False}


@pytest.mark.parametrize(
    ("taken", "attempt", "code", "status"),
    [
        ("Ada", "ADA", "name_taken", 409),
        ("Ada", "ada ", "name_taken", 409),
        ("Ada", "\uff21\uff44\uff41", "name_taken", 409),  # full-width letters
        ("Ada", "Ad\u0430", "name_confusable", 422),  # Cyrillic a
        ("Ada", "\u0410da", "name_confusable", 422),  # Cyrillic capital A
        ("Bill", "Bi11", "name_confusable", 422),  # digits one for letters l
        ("Emma", "Ernrna", "name_confusable", 422),  # "rn" for "m"
    ],
)
def test_a_name_that_differs_only_by_case_width_or_a_lookalike_character_is_refused(
    fake_api: Api, taken: str, attempt: str, code: str, status: int
) -> None:
    register(fake_api, taken)
    response = fake_api.client.post("/accounts", json={"name": attempt})
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code
    assert taken in error["message"] or attempt.strip() in error["message"]


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("A\u200bda", "invalid_name"),  # zero-width space
        ("Ada\u202e", "invalid_name"),  # right-to-left override
        ("Ad\x07a", "invalid_name"),  # a control character
        ("A", "invalid_name"),
        ("x" * 25, "invalid_name"),
        ("Ada  Byron", "invalid_name"),
        ("me", "invalid_name"),
        ("DeadBeef00C0FFEE", "invalid_name"),  # 16 hex digits: an account id's shape
        ("Pa\u03b2lo", "name_mixed_script"),  # Latin with a Greek beta
    ],
)
def test_invisible_control_too_short_reserved_id_shaped_and_mixed_script_names_are_refused(
    fake_api: Api, name: str, code: str
) -> None:
    response = fake_api.client.post("/accounts", json={"name": name})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == code


def test_names_in_one_other_script_are_welcome(fake_api: Api) -> None:
    for name in ("\u041f\u0430\u0432\u0435\u043b", "\u0397\u03c1\u03ce", "\u65e5\u672c\u30ab\u30bf"):
        register(fake_api, name)


@pytest.mark.thorough
def test_login_with_the_right_password_gives_a_fresh_working_token_and_the_wrong_one_a_401(
    fake_api: Api,
) -> None:
    ada = register(fake_api, "Ada", password="correct horse")
    right = fake_api.client.post("/accounts/login", json={"name": "ADA", "password": "correct horse"})
    assert right.status_code == 200
    fresh = right.json()
    assert fresh["account_id"] == ada["account_id"] and fresh["token"] != ada["token"]
    for token in (ada["token"], fresh["token"]):
        me = fake_api.client.get("/accounts/me", headers=bearer(token))
        assert me.status_code == 200 and me.json()["has_password"] is True
    wrong = fake_api.client.post("/accounts/login", json={"name": "Ada", "password": "wrong horse"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_credentials"
    nobody = fake_api.client.post("/accounts/login", json={"name": "Nobody", "password": "whatever1"})
    assert nobody.status_code == 401 and nobody.json()["error"]["code"] == "invalid_credentials"


@pytest.mark.thorough
def test_an_account_without_a_password_can_set_one_and_then_log_in(fake_api: Api) -> None:
    bo = register(fake_api, "Bo")
    no_login = fake_api.client.post("/accounts/login", json={"name": "Bo", "password": "something1"})
    assert no_login.status_code == 401
    short = fake_api.client.post(
        "/accounts/me/password", json={"password": "short"}, headers=bearer(bo["token"])
    )
    assert short.status_code == 422 and short.json()["error"]["code"] == "invalid_password"
    done = fake_api.client.post(
        "/accounts/me/password", json={"password": "something1"}, headers=bearer(bo["token"])
    )
    assert done.status_code == 200
    assert (
        fake_api.client.post("/accounts/login", json={"name": "bo", "password": "something1"}).status_code
        == 200
    )


def test_a_bad_or_missing_account_token_is_a_401(fake_api: Api) -> None:
    ada = register(fake_api, "Ada")
    assert fake_api.client.get("/accounts/me").status_code == 401
    forged = ada["account_id"] + ".not-the-secret"
    for token in (forged, "garbage", "0123456789abcdef.x"):
        response = fake_api.client.get("/accounts/me", headers=bearer(token))
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "invalid_account_token"
    game_id = fake_api.create("six-nimmt", 2)
    refused = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=bearer(forged))
    assert refused.status_code == 401


def test_unknown_accounts_and_games_are_404s(fake_api: Api) -> None:
    assert fake_api.client.get("/accounts/nobody").json()["error"]["code"] == "account_not_found"
    assert fake_api.client.get("/accounts/0123456789abcdef/history").status_code == 404
    assert fake_api.client.get("/leaderboards/chess").json()["error"]["code"] == "unknown_game"


# -- playing with an account ------------------------------------------------------------------------


def test_joining_with_an_account_token_seats_the_account_and_the_view_shows_it(fake_api: Api) -> None:
    ada, bo = register(fake_api, "Ada"), register(fake_api, "Bo")
    game_id = fake_api.create("six-nimmt", 3, **SHORT)
    assert join_as(fake_api, game_id, ada["token"]) == 0
    other_name = fake_api.client.post(
        f"/games/{game_id}/players", json={"name": "Bobby"}, headers=bearer(bo["token"])
    )
    assert other_name.status_code == 422 and other_name.json()["error"]["code"] == "name_not_yours"
    assert join_as(fake_api, game_id, bo["token"], name="BO") == 1  # its own name, up to case
    again = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=bearer(ada["token"]))
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_seated"
    anonymous = fake_api.client.post(f"/games/{game_id}/players", json={})
    assert anonymous.status_code == 422 and anonymous.json()["error"]["code"] == "invalid_name"
    fake_api.join(game_id, "Cy")
    players = fake_api.view(game_id)["players"]
    assert [(p["name"], p.get("account")) for p in players] == [
        ("Ada", {"id": ada["account_id"], "name": "Ada"}),
        ("Bo", {"id": bo["account_id"], "name": "Bo"}),
        ("Cy", None),
    ]


def broken_index_write(*args: Any) -> Iterator[Any]:
    """An index write whose store fails (as a Redis that went away does)."""
    raise redis.ConnectionError("the index is unreachable")
    yield  # a generator, as an operation is


def test_a_join_and_a_create_answer_201_with_their_tokens_when_an_index_write_after_them_fails(
    fake_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    ada = register(fake_api, "Ada")
    monkeypatch.setattr(retention, "account_seen", broken_index_write)
    monkeypatch.setattr(retention, "settle_waiting", broken_index_write)
    game_id = fake_api.create("six-nimmt", 3, **SHORT)  # 201 with its host token (asserted there)
    assert fake_api.hosts[game_id]
    joined = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=bearer(ada["token"]))
    assert joined.status_code == 201 and joined.json()["seat"] == 0 and joined.json()["token"]
    fake_api.tokens[game_id].append(joined.json()["token"])
    assert fake_api.view(game_id, 0)["players"][0]["account"]["id"] == ada["account_id"]  # the token works
    # the account's own writes too: a login and a password change still answer as successes
    assert (
        fake_api.client.post(
            "/accounts/me/password", json={"password": "a password"}, headers=bearer(ada["token"])
        ).status_code
        == 200
    )
    assert (
        fake_api.client.post("/accounts/login", json={"name": "Ada", "password": "a password"}).status_code
        == 200
    )
    assert register(fake_api, "Bo")["token"]


@pytest.mark.thorough
def test_a_finished_game_with_accounts_still_verifies_offline(fake_api: Api) -> None:
    tokens = [register(fake_api, name)["token"] for name in ("Ada", "Bo")]
    game_id = rated_game(fake_api, tokens, seed=3)
    export = fake_api.client.get(f"/games/{game_id}/export").json()
    report = verify_export(export)
    assert report.ok, report.render()


@pytest.mark.thorough
def test_a_rated_game_appears_in_each_players_history_with_result_rating_change_and_links(api: Api) -> None:
    ada, bo, cy = (register(api, name) for name in ("Ada", "Bo", "Cy"))
    game_id = rated_game(api, [ada["token"], bo["token"], cy["token"]], seed=1)
    final = api.view(game_id)
    for seat, account in enumerate((ada, bo, cy)):
        page = api.client.get(f"/accounts/{account['account_id']}/history").json()
        assert page["total"] == 1
        (entry,) = page["games"]
        assert entry["game_id"] == game_id and entry["game"] == "six-nimmt" and entry["rated"] is True
        assert entry["replay"] == f"/replay/{game_id}" and entry["export"] == f"/games/{game_id}/export"
        assert entry["title"] == "6 nimmt!: Ada, Bo, Cy"
        assert entry["finished_at"] > 0
        you = entry["you"]
        assert you["seat"] == seat and you["score"] == final["scores"][seat]
        assert you["winner"] == (seat in final["winners"])
        assert you["rating"]["before"]["games"] == 0 and you["rating"]["after"]["games"] == 1
        profile = api.client.get(f"/accounts/{account['account_id']}").json()
        assert profile["ratings"]["six-nimmt"] == you["rating"]["after"]
    board = api.client.get("/leaderboards/six-nimmt").json()  # one game each: provisional, not listed
    assert (board["total"], board["entries"], board["provisional_hidden"]) == (0, [], 3)


@pytest.mark.thorough
def test_games_with_an_anonymous_seat_or_a_practice_seed_are_in_the_history_but_unrated(
    fake_api: Api,
) -> None:
    ada, bo = register(fake_api, "Ada"), register(fake_api, "Bo")
    mixed = fake_api.create("six-nimmt", 2, **SHORT)
    join_as(fake_api, mixed, ada["token"])
    fake_api.join(mixed, "Guest")
    play_out(fake_api, mixed, seed=2)
    practice = fake_api.create("six-nimmt", 2, seed="ab" * 32, **SHORT)
    join_as(fake_api, practice, ada["token"])
    join_as(fake_api, practice, bo["token"])
    play_out(fake_api, practice, seed=2)
    games = fake_api.client.get(f"/accounts/{ada['account_id']}/history").json()["games"]
    assert [(g["game_id"], g["rated"], g["unrated_reason"]) for g in games] == [
        (practice, False, "practice"),
        (mixed, False, "anonymous_seats"),
    ]
    assert all(g["you"]["rating"] is None for g in games)
    assert fake_api.client.get("/leaderboards/six-nimmt").json()["total"] == 0
    assert fake_api.client.get(f"/accounts/{ada['account_id']}").json()["ratings"] == {}


@pytest.mark.thorough
def test_leaderboards_and_histories_page_with_offset_and_limit(fake_api: Api) -> None:
    accounts = [register(fake_api, f"Player {n}") for n in range(5)]
    games = [rated_game(fake_api, [a["token"] for a in accounts[i : i + 2]], seed=i) for i in range(4)]
    for n in range(7):  # tables of four (all but one): every player established (five games, three opponents)
        rated_game(fake_api, [a["token"] for i, a in enumerate(accounts) if i != n % 5], seed=10 + n)
    board = [
        fake_api.client.get("/leaderboards/six-nimmt", params={"offset": offset, "limit": 2}).json()
        for offset in (0, 2, 4)
    ]
    assert [page["total"] for page in board] == [5, 5, 5]
    assert [len(page["entries"]) for page in board] == [2, 2, 1]
    entries = [e for page in board for e in page["entries"]]
    assert [e["rank"] for e in entries] == [1, 2, 3, 4, 5]
    assert {e["account_id"] for e in entries} == {a["account_id"] for a in accounts}
    ratings = [e["rating"] for e in entries]
    assert ratings == sorted(ratings, reverse=True)
    assert all(page["provisional_hidden"] == 0 for page in board)
    second = accounts[1]["account_id"]  # played games 0 and 1, then 5 of the tables of four
    first_page = fake_api.client.get(f"/accounts/{second}/history", params={"limit": 1, "offset": 5}).json()
    next_page = fake_api.client.get(f"/accounts/{second}/history", params={"offset": 6, "limit": 1}).json()
    assert first_page["total"] == next_page["total"] == 7
    assert [g["game_id"] for g in first_page["games"] + next_page["games"]] == [games[1], games[0]]
    bad = fake_api.client.get("/leaderboards/six-nimmt", params={"limit": 0})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_query"


# -- browsers: the ts_account cookie ------------------------------------------------------------------


def account_cookie(response: Any) -> str:
    """The token of the answer's ``ts_account`` cookie, after checking how it is set."""
    header: str = response.headers["set-cookie"]
    assert header.startswith("ts_account=")
    assert "HttpOnly" in header and "SameSite=strict" in header and "Path=/" in header
    assert "Max-Age=" in header  # stays across browser restarts
    token = header.split(";", 1)[0].split("=", 1)[1]
    return token


def with_cookie(token: str) -> dict[str, str]:
    return {"Cookie": f"ts_account={token}"}


@pytest.mark.thorough
def test_a_browser_that_registers_or_logs_in_for_a_cookie_gets_the_token_only_in_an_httponly_cookie(
    fake_api: Api,
) -> None:
    registered = fake_api.client.post(
        "/accounts", json={"name": "Ada", "password": "correct horse", "cookie": True}
    )
    assert registered.status_code == 201
    ada = registered.json()
    assert set(ada) == {"account_id", "name"}  # no token in a body the page's scripts could read
    token = account_cookie(registered)
    assert token.startswith(ada["account_id"] + ".")
    me = fake_api.client.get("/accounts/me", headers=with_cookie(token))
    assert me.status_code == 200 and me.json()["name"] == "Ada" and me.json()["has_password"] is True
    login = fake_api.client.post(
        "/accounts/login", json={"name": "ada", "password": "correct horse", "cookie": True}
    )
    assert login.status_code == 200 and set(login.json()) == {"account_id", "name"}
    fresh = account_cookie(login)
    assert fresh != token
    assert fake_api.client.get("/accounts/me", headers=with_cookie(fresh)).status_code == 200
    plain = fake_api.client.post("/accounts/login", json={"name": "Ada", "password": "correct horse"})
    assert "token" in plain.json() and "set-cookie" not in plain.headers


def test_the_account_cookie_seats_the_account_at_a_join_and_the_bearer_header_wins_over_it(
    fake_api: Api,
) -> None:
    ada = account_cookie(fake_api.client.post("/accounts", json={"name": "Ada", "cookie": True}))
    bo = register(fake_api, "Bo")
    game_id = fake_api.create("six-nimmt", 3, **SHORT)
    joined = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=with_cookie(ada))
    assert joined.status_code == 201 and joined.json()["seat"] == 0
    both = {**with_cookie(ada), **bearer(bo["token"])}
    second = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=both)
    assert second.status_code == 201 and second.json()["seat"] == 1
    again = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=with_cookie(ada))
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_seated"
    players = fake_api.view(game_id)["players"]
    assert [(p["name"], p["account"]["name"]) for p in players] == [("Ada", "Ada"), ("Bo", "Bo")]


def test_logging_out_revokes_that_token_only_and_clears_the_cookie(fake_api: Api) -> None:
    ada = fake_api.client.post("/accounts", json={"name": "Ada", "password": "correct horse", "cookie": True})
    browser = account_cookie(ada)
    phone = fake_api.client.post("/accounts/login", json={"name": "Ada", "password": "correct horse"})
    other_device = phone.json()["token"]
    out = fake_api.client.post("/accounts/logout", json={}, headers=with_cookie(browser))
    assert out.status_code == 200 and out.json() == {**ada.json(), "logged_out": True}
    cleared = out.headers["set-cookie"]
    assert cleared.startswith('ts_account="";') or cleared.startswith("ts_account=;")
    assert "Max-Age=0" in cleared
    for headers in (with_cookie(browser), bearer(browser)):
        refused = fake_api.client.get("/accounts/me", headers=headers)
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_account_token"
    assert fake_api.client.get("/accounts/me", headers=bearer(other_device)).status_code == 200
    # a browser whose cookie no longer works is logged out all the same
    stale = fake_api.client.post("/accounts/logout", json={}, headers=with_cookie(browser))
    assert stale.status_code == 200 and stale.json() == {"logged_out": True}
    assert "Max-Age=0" in stale.headers["set-cookie"]
    # a bearer client learns that its token was bad; nobody at all is a 401
    assert fake_api.client.post("/accounts/logout", json={}, headers=bearer(browser)).status_code == 401
    assert fake_api.client.post("/accounts/logout", json={}).status_code == 401
    by_header = fake_api.client.post("/accounts/logout", json={}, headers=bearer(other_device))
    assert by_header.status_code == 200 and "set-cookie" not in by_header.headers
    assert fake_api.client.get("/accounts/me", headers=bearer(other_device)).status_code == 401


def test_a_join_with_an_account_cookie_that_no_longer_works_is_a_401_not_an_anonymous_seat(
    fake_api: Api,
) -> None:
    token = account_cookie(fake_api.client.post("/accounts", json={"name": "Ada", "cookie": True}))
    fake_api.client.post("/accounts/logout", json={}, headers=with_cookie(token))
    game_id = fake_api.create("six-nimmt", 2, **SHORT)
    joined = fake_api.client.post(
        f"/games/{game_id}/players", json={"name": "Ada"}, headers=with_cookie(token)
    )
    assert joined.status_code == 401 and joined.json()["error"]["code"] == "invalid_account_token"
    assert fake_api.view(game_id)["players"] == []


def test_a_confusable_name_error_names_the_registered_name_it_looks_like(fake_api: Api) -> None:
    register(fake_api, "Ada")
    error = fake_api.client.post("/accounts", json={"name": "Ad\u0430"}).json()["error"]
    assert error["code"] == "name_confusable" and error["like"] == "Ada"


# -- secrecy --------------------------------------------------------------------------------------------


@pytest.mark.thorough
def test_no_response_of_a_full_flow_shows_an_account_token_a_password_or_its_hash(fake_api: Api) -> None:
    bodies: list[str] = []
    client = fake_api.client
    original = client.request

    def recording(*args: Any, **kwargs: Any) -> Any:
        response = original(*args, **kwargs)
        bodies.append(response.text)
        return response

    client.request = recording  # type: ignore[method-assign]
    password = "very secret words"
    ada = register(fake_api, "Ada", password=password)
    bo = register(fake_api, "Bo", password=password + "!")
    login = client.post("/accounts/login", json={"name": "Ada", "password": password}).json()
    game_id = rated_game(fake_api, [ada["token"], bo["token"]], seed=5)
    for account in (ada, bo):
        client.get(f"/accounts/{account['account_id']}")
        client.get(f"/accounts/{account['name']}")
        client.get(f"/accounts/{account['account_id']}/history")
    client.get("/accounts/me", headers=bearer(ada["token"]))
    client.get("/leaderboards/six-nimmt")
    client.get(f"/games/{game_id}/export")
    client.get(f"/games/{game_id}/events", params={"limit": 1000})
    client.get(f"/games/{game_id}/audit")
    client.get("/games")
    client.request = original  # type: ignore[method-assign]

    account_tokens = [ada["token"], bo["token"], login["token"]]
    seat_tokens = [token for tokens in fake_api.tokens.values() for token in tokens]
    host_tokens = list(fake_api.hosts.values())
    everything = "\n".join(bodies)
    for token in [*account_tokens, *seat_tokens, *host_tokens]:
        secret = token.split(".", 1)[-1]
        # once: in the answer that issued it, never again (not in views, histories, exports, audits)
        assert everything.count(secret) == 1, f"a token ({secret[:6]}...) shows up again"
    assert password not in everything and "argon2" not in everything
    assert "token_hash" not in everything and "password_hash" not in everything


def test_openapi_describes_the_account_routes_and_their_bodies(fake_api: Api) -> None:
    doc = fake_api.client.get("/openapi.json").json()
    for path, method in [
        ("/accounts", "post"),
        ("/accounts/login", "post"),
        ("/accounts/logout", "post"),
        ("/accounts/me", "get"),
        ("/accounts/me/password", "post"),
        ("/accounts/{name_or_id}", "get"),
        ("/accounts/{account_id}/history", "get"),
        ("/leaderboards/{game}", "get"),
    ]:
        assert method in doc["paths"][path], path
    schemas = doc["components"]["schemas"]
    assert {"Register", "Login", "SetPassword"} <= set(schemas)
    assert "password" in schemas["Register"]["properties"]
    assert "cookie" in schemas["Register"]["properties"] and "cookie" in schemas["Login"]["properties"]
    assert "account" in schemas["JoinGame"]["properties"]["name"]["description"]  # may be left out then


# -- ratings a person can read ---------------------------------------------------------------------


@pytest.mark.thorough
def test_every_answer_with_a_rating_gives_a_readable_display_and_says_provisional_until_five_games(
    fake_api: Api,
) -> None:
    ada, bo = register(fake_api, "Ada"), register(fake_api, "Bo")
    rated_game(fake_api, [ada["token"], bo["token"]], seed=1)
    assert fake_api.client.get("/leaderboards/six-nimmt").json()["provisional_hidden"] == 2
    board = sorted(
        (
            fake_api.client.get(f"/accounts/{a['account_id']}").json()["ratings"]["six-nimmt"]
            for a in (ada, bo)
        ),
        key=lambda r: r["rating"],
        reverse=True,
    )
    loser = board[-1]
    seats = fake_api.client.get(f"/accounts/{ada['account_id']}/history").json()["games"][0]["seats"]
    if seats[0]["rank"] != seats[1]["rank"]:  # not a draw (the deal is the server's secret chance)
        assert loser["rating"] < 0 < loser["display"]  # the ordinal goes negative after one loss; display not
        assert board[0]["display"] > 1000 > loser["display"]
    assert all(e["provisional"] and e["games"] == 1 for e in board)
    assert [e["display"] for e in board] == sorted((e["display"] for e in board), reverse=True)
    profile = fake_api.client.get(f"/accounts/{ada['account_id']}").json()["ratings"]["six-nimmt"]
    history = fake_api.client.get(f"/accounts/{ada['account_id']}/history").json()["games"]
    change = history[0]["you"]["rating"]
    assert change["before"] == {**change["before"], "display": 1000, "provisional": True, "games": 0}
    assert change["after"] == profile and isinstance(profile["display"], int)
    me = fake_api.client.get("/accounts/me", headers=bearer(ada["token"])).json()
    assert me["ratings"]["six-nimmt"] == profile
    for seed in range(2, 6):
        rated_game(fake_api, [ada["token"], bo["token"]], seed=seed)
    pair = fake_api.client.get("/leaderboards/six-nimmt").json()  # five games, but only each other
    assert (pair["total"], pair["provisional_hidden"]) == (0, 2)
    cy, di = register(fake_api, "Cy"), register(fake_api, "Di")
    for seed in range(6, 11):
        rated_game(fake_api, [a["token"] for a in (ada, bo, cy, di)], seed=seed)
    settled = fake_api.client.get("/leaderboards/six-nimmt").json()["entries"]
    assert len(settled) == 4
    assert all(e["games"] >= 5 and not e["provisional"] and e["display"] > 0 for e in settled)
    paths = fake_api.client.get("/openapi.json").json()["paths"]
    for path in ("/leaderboards/{game}", "/accounts/{name_or_id}", "/accounts/{account_id}/history"):
        assert "'display'" in paths[path]["get"]["description"]


def test_a_history_recorded_before_readable_ratings_gets_them_when_read(fake_api: Api) -> None:
    ada, bo = register(fake_api, "Ada"), register(fake_api, "Bo")
    game_id = rated_game(fake_api, [ada["token"], bo["token"]], seed=4)
    stored = json.loads(fake_api.sync.hget(RATINGS.records, game_id))
    for seat in stored["seats"]:
        for side in seat["rating"].values():
            del side["display"], side["provisional"]  # as the projection wrote records before
    fake_api.sync.hset(RATINGS.records, game_id, json.dumps(stored))
    (entry,) = fake_api.client.get(f"/accounts/{bo['account_id']}/history").json()["games"]
    after = entry["you"]["rating"]["after"]
    assert after["display"] == display_rating(after["mu"], after["sigma"]) and after["provisional"] is True
