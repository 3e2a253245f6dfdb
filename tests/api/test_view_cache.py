"""Views served from an API process's memory (``services.api.view_cache``) are never older than a
read from Redis at the same moment: every change a view shows announces itself on the game's
channel, a kept view is served only after a fence on that channel, and what is kept for a token was
shown to it by a verified read."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from starlette.testclient import TestClient

from bots import choose
from domain.games import game_names, spec
from services.api.app import create_app
from services.api.view_cache import ViewCache
from services.operating.config import Settings
from services.store.connection import connect_to
from services.store.embedded import EmbeddedRedis
from services.telemetry import metrics
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only

pytestmark = pytest.mark.redis

SEED = 20261130


def views_of(api: Api) -> ViewCache:
    views: ViewCache = api.client.app.state.context.views  # type: ignore[attr-defined]
    return views


def without_clock(view: dict[str, Any]) -> dict[str, Any]:
    """A view without its ``clock`` (the server's time of the read, different in every answer)."""
    return {key: value for key, value in view.items() if key != "clock"}


def kept(api: Api, game_id: str, seat: int | None) -> dict[str, Any]:
    """Read the view until one read is served from memory (the game's channel is subscribed from the
    background after its first read); that read's view."""
    views = views_of(api)
    deadline = time.monotonic() + 10
    while True:
        hits = views.hits
        view = api.view(game_id, seat)
        if views.hits > hits:
            return view
        assert time.monotonic() < deadline, "the view was never served from memory"


@pytest.fixture
def processes(redis_server: EmbeddedRedis) -> Iterator[tuple[Api, Api, Api]]:
    """Three API apps (three processes) on one real Redis: two that keep views, one that keeps none
    (the reference: every view read from Redis)."""
    sync = redis.Redis.from_url(redis_server.url)
    sync.flushall()

    def app(games: int) -> TestClient:
        settings = Settings(admin_token=ADMIN_TOKEN, view_cache_games=games, **UNLIMITED)
        return TestClient(create_app(settings, connect_to(redis_server.url)), raise_server_exceptions=False)

    with app(64) as a, app(64) as b, app(0) as reference:
        yield Api(bearer_only(a), sync), Api(bearer_only(b), sync), Api(bearer_only(reference), sync)
    sync.close()


def test_a_kept_view_is_served_from_memory_until_its_game_changes(
    processes: tuple[Api, Api, Api],
) -> None:
    api, _, _ = processes
    game_id = api.started("skull-king", 3)
    seat = api.view(game_id)["to_act"][0]
    first = kept(api, game_id, seat)
    views = views_of(api)
    hits = views.hits
    assert without_clock(api.view(game_id, seat)) == without_clock(first) and views.hits == hits + 1

    sent = api.send(game_id, seat, first["legal"][0])
    assert sent.status_code == 200, sent.text
    after = api.view(game_id, seat)
    assert after["version"] == sent.json()["version"] > first["version"]
    assert views.hits == hits + 1  # the change dropped the kept view: read from Redis
    assert without_clock(kept(api, game_id, seat)) == without_clock(after)


def test_a_seat_reads_its_own_move_at_once_through_a_process_that_kept_its_view(
    processes: tuple[Api, Api, Api],
) -> None:
    first, second, _ = processes
    rng = random.Random(SEED)
    game_id = first.started("skull-king", 4)
    second.tokens[game_id] = first.tokens[game_id]
    for seat in range(4):
        kept(second, game_id, seat)
    hits = views_of(second).hits
    for _ in range(40):
        seat = rng.choice(first.view(game_id)["to_act"])
        view = second.view(game_id, seat)  # from memory when nothing changed since it was kept
        sent = first.send(game_id, seat, choose("skull-king", view, rng))
        assert sent.status_code == 200, sent.text
        assert second.view(game_id, seat)["version"] >= sent.json()["version"]
    assert views_of(second).hits > hits  # the loop did read kept views


def test_a_token_revoked_by_another_process_is_refused_at_once_where_its_view_is_kept(
    processes: tuple[Api, Api, Api],
) -> None:
    first, second, _ = processes
    game_id = first.started("skull", 3, turn_seconds=20)
    second.tokens[game_id] = first.tokens[game_id]
    kept(second, game_id, 1)

    left = first.client.post(f"/games/{game_id}/leave", json={}, headers=first.auth(game_id, 1))
    assert left.status_code == 200, left.text

    view = second.client.get(f"/games/{game_id}/view", headers=second.auth(game_id, 1))
    assert view.status_code == 401 and view.json()["error"]["code"] == "unauthorized"


def same_everywhere(first: Api, second: Api, reference: Api, game_id: str, viewers: list[int | None]) -> None:
    for viewer in viewers:
        expected = without_clock(reference.view(game_id, viewer))
        for api in (first, second):
            assert without_clock(api.view(game_id, viewer)) == expected, viewer


@pytest.mark.parametrize("seed", range(4))
def test_kept_views_equal_views_read_from_redis_throughout_random_games(
    processes: tuple[Api, Api, Api], seed: int
) -> None:
    """The spectator's view and a random seat's, read through two processes that keep views, equal
    the same views read from Redis by a process that keeps none, after every move of random games
    played through both, before and after the move is projected. (Every seat's own view is read
    through one of the two at every move, so each process keeps every seat's view.)"""
    first, second, reference = processes
    rng = random.Random(SEED + seed)
    game = rng.choice(game_names())
    game_id = first.started(game, min(max(rng.randint(3, 4), spec(game).min_players), spec(game).max_players))
    second.tokens[game_id] = reference.tokens[game_id] = first.tokens[game_id]
    seats = range(len(first.tokens[game_id]))
    for _ in range(60):
        viewers = [None, rng.choice(seats)]
        same_everywhere(first, second, reference, game_id, viewers)  # the last move not projected yet
        first.project()
        same_everywhere(first, second, reference, game_id, viewers)
        by = rng.choice((first, second))
        own = {seat: by.view(game_id, seat) for seat in seats}
        acting = [seat for seat in seats if own[seat]["legal"]]
        if not acting:
            assert own[0]["status"] == "finished"
            break
        seat = rng.choice(acting)
        command = choose(game, own[seat], rng)
        body = {"command_id": uuid.uuid4().hex, "command": command, "expected_version": own[seat]["version"]}
        sent = by.client.post(f"/games/{game_id}/commands", json=body, headers=by.auth(game_id, seat))
        assert sent.status_code == 200, sent.text
    assert views_of(first).hits + views_of(second).hits > 0


def test_a_kept_view_answered_ahead_of_the_app_echoes_the_request_id_as_any_answer(
    processes: tuple[Api, Api, Api],
) -> None:
    api, _, _ = processes
    game_id = api.started("six-nimmt", 3)
    kept(api, game_id, 2)
    hits = views_of(api).hits
    response = api.client.get(
        f"/games/{game_id}/view", headers={**api.auth(game_id, 2), "X-Request-ID": "kept-view-1"}
    )
    assert views_of(api).hits == hits + 1
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    assert response.headers["x-request-id"] == "kept-view-1" and response.json()["seat"] == 2
    malformed = api.client.get(f"/games/{game_id}/view", headers={"Authorization": "Basic abc"})
    assert malformed.status_code == 401  # the route answers what the lane does not


def test_a_browser_reads_its_seats_kept_view_by_its_cookie(processes: tuple[Api, Api, Api]) -> None:
    api, _, _ = processes
    game_id = api.started("skull", 3)
    browser = api.client
    browser.cookies.set(f"ts_seat_{game_id}", api.tokens[game_id][1])
    views = views_of(api)
    deadline = time.monotonic() + 10
    while True:  # the cookie's token is remembered and the game watched after the first reads
        hits = views.hits
        response = browser.get(f"/games/{game_id}/view")
        browser.cookies.set(f"ts_seat_{game_id}", api.tokens[game_id][1])  # bearer_only clears them
        assert response.status_code == 200 and response.json()["seat"] == 1
        if views.hits > hits:
            break
        assert time.monotonic() < deadline, "the browser's view was never served from memory"
    browser.cookies.clear()
    assert api.view(game_id)["seat"] is None  # without the cookie: the spectator's view


def guarded_headers(response: Any) -> dict[str, str]:
    """An answer's headers but those that differ between two answers of the same view."""
    return {k: v for k, v in response.headers.items() if k not in ("date", "content-length", "x-request-id")}


def test_a_kept_view_given_ahead_of_the_app_carries_the_routes_headers_and_is_counted_as_its_route(
    processes: tuple[Api, Api, Api],
) -> None:
    api, _, _ = processes
    game_id = api.started("skull", 3)
    by_route = api.client.get(f"/games/{game_id}/view", params={"at": 1})  # a query: the route answers
    kept(api, game_id, 0)
    requests = metrics.metrics().requests.labels("/games/{game_id}/view", "GET", "2xx")
    counted = requests._value.get()
    hits = views_of(api).hits
    response = api.client.get(f"/games/{game_id}/view", headers=api.auth(game_id, 0))
    assert views_of(api).hits == hits + 1 and response.status_code == 200
    assert guarded_headers(response) == guarded_headers(by_route)
    assert requests._value.get() == counted + 1
    secure = api.client.get(f"https://testserver/games/{game_id}/view", headers=api.auth(game_id, 0))
    assert secure.status_code == 200 and secure.headers["strict-transport-security"].startswith("max-age=")
    odd = api.client.get(
        f"/games/{game_id}/view", headers={**api.auth(game_id, 0), "X-Request-ID": "a b\x7f"}
    )
    assert odd.headers["x-request-id"] != "a b\x7f"  # not a plain id: a new one, as the request log gives


def test_a_private_tables_views_are_never_given_ahead_of_its_gate(processes: tuple[Api, Api, Api]) -> None:
    api, _, _ = processes
    created = api.client.post("/games", json={"game": "skull", "players": 3, "options": {"private": True}})
    assert created.status_code == 201, created.text
    game_id, invite = created.json()["game_id"], created.json()["invite"]
    tokens = []
    for seat in range(3):
        joined = api.client.post(
            f"/games/{game_id}/players", json={"name": f"P{seat}"}, params={"invite": invite}
        )
        assert joined.status_code == 201, joined.text
        tokens.append(joined.json()["token"])
    api.tokens[game_id] = tokens
    kept(api, game_id, 1)  # the seat's token lets it in: its view is kept
    assert api.client.get(f"/games/{game_id}/view").status_code == 404  # a spectator without the link
    with_link = api.client.get(f"/games/{game_id}/view", params={"invite": invite})
    assert with_link.status_code == 200 and with_link.json()["seat"] is None
