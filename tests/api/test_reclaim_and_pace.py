"""Over HTTP: taking back a seat a bot took over after timeouts (``POST /games/{id}/reclaim``), the
views saying why a bot plays, and the table's bot pace (an option, the server's default, the views)."""

from __future__ import annotations

import asyncio
import random
import uuid
from typing import Any

import fakeredis
import pytest
from starlette.testclient import TestClient

from bots import choose
from services.api.app import create_app
from services.history.verify import verify_export
from services.operating.config import Settings
from services.store.queue import bot_queue, lifecycle_queue
from services.store.rq_workers import run_burst
from services.store.timer_record import timer_fields
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only
from workers import lifecycle

ONE_ROUND = {"rounds": 1}  # 6 nimmt!: ten turns, every seat awaited on each


def _async_client(api: Api) -> Any:
    sync = api.sync
    if isinstance(sync, fakeredis.FakeRedis):
        return fakeredis.FakeAsyncRedis(server=sync.connection_pool.connection_kwargs["server"])
    return lifecycle.default_async_client(sync)


async def _fire(api: Api, game_id: str) -> list[str]:
    """The game's timer fires as if its deadline had passed (a clock past it, no waiting)."""
    aclient = _async_client(api)
    try:
        timer = timer_fields(api.sync.hgetall(f"ts:{{{game_id}}}:timer"))
        later = int(timer["deadline"]) + 1

        def now() -> int:
            return later

        commands = lifecycle.commands_for(aclient, api.sync, now)
        return await lifecycle.fire(commands, game_id, int(timer["version"]), now)
    finally:
        await aclient.aclose()


def run_lifecycle_jobs(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run the queued bot and timer jobs in process, their async client on the test's backend."""
    monkeypatch.setattr(lifecycle, "async_client_for", lambda sync: _async_client(api))
    queues = [lifecycle_queue(api.sync), bot_queue(api.sync)]
    run_burst(api.sync, queues, logging_level="WARNING")


def reclaim(api: Api, game_id: str, headers: dict[str, str]) -> Any:
    return api.client.post(f"/games/{game_id}/reclaim", json={}, headers=headers)


def _taken_over(api: Api) -> str:
    """A 6 nimmt! table of two whose seat 0 a bot took over after one timeout (seat 1 chose)."""
    game_id = api.started("six-nimmt", 2, turn_seconds=30, takeover_after=1, **ONE_ROUND)
    own = api.view(game_id, 1)
    assert api.send(game_id, 1, choose("six-nimmt", own, random.Random(1))).status_code == 200
    assert asyncio.run(_fire(api, game_id)) == ["timeout:0"]
    return game_id


def test_a_player_takes_back_the_seat_a_bot_took_over_after_timeouts_and_plays_it_again(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = _taken_over(api)
    taken = api.view(game_id, 0)
    assert [(p["bot"], p["takeover"]) for p in taken["players"]] == [(True, "timeouts"), (False, None)]
    refused = api.send(game_id, 0, {"type": "select_card", "card": taken["hand"][0]})
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "seat_taken_over"
    head = taken["version"]

    response = reclaim(api, game_id, api.auth(game_id, 0))
    assert response.status_code == 200 and response.json() == {"seat": 0}
    back = api.view(game_id, 0)
    assert [(p["bot"], p["takeover"]) for p in back["players"]] == [(False, None), (False, None)]
    assert back["version"] == head + 1 and 0 in back["to_act"]
    assert back["clock"]["deadline_ms"] - back["clock"]["now_ms"] > 25_000  # a fresh turn for the player
    run_lifecycle_jobs(api, monkeypatch)  # the bot's move queued before the reclaim
    assert api.head(game_id) == head + 1  # found the game moved on: it did nothing
    events = api.client.get(f"/games/{game_id}/events", params={"after": head, "lang": "en"}).json()
    (reclaimed,) = events["events"]
    assert (reclaimed["type"], reclaimed["seat"], reclaimed["by"]) == ("seat_reclaimed", 0, "player")
    assert reclaimed["text"] == "P0 takes the seat back from the bot"

    again = reclaim(api, game_id, api.auth(game_id, 0))
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_taken_over"
    final = api.play_until(game_id, lambda view: view["status"] == "finished", seed=3)
    assert final["status"] == "finished"
    over = reclaim(api, game_id, api.auth(game_id, 0))
    assert over.status_code == 409 and over.json()["error"]["code"] == "game_over"
    report = verify_export(api.client.get(f"/games/{game_id}/export").json())
    assert report.ok, report.render()


def test_only_a_seats_own_token_or_cookie_takes_it_back(api: Api) -> None:
    game_id = _taken_over(api)
    assert reclaim(api, game_id, {}).status_code == 401
    host = reclaim(api, game_id, {"Authorization": f"Bearer {api.hosts[game_id]}"})
    assert host.status_code == 403
    other = reclaim(api, game_id, api.auth(game_id, 1))
    assert other.status_code == 409 and other.json()["error"]["code"] == "not_taken_over"
    bad = api.client.post(f"/games/{game_id}/reclaim", json={"seat": 1}, headers=api.auth(game_id, 0))
    assert bad.status_code == 422
    api.client.cookies.set(f"ts_seat_{game_id}", api.tokens[game_id][0])
    try:
        by_cookie = api.client.post(f"/games/{game_id}/reclaim", json={})
    finally:
        api.client.cookies.clear()
    assert by_cookie.status_code == 200 and by_cookie.json() == {"seat": 0}


def test_a_seat_that_was_left_cannot_be_taken_back(api: Api) -> None:
    game_id = api.started("skull", 3, turn_seconds=20)
    token = api.tokens[game_id][1]
    assert (
        api.client.post(f"/games/{game_id}/leave", json={}, headers=api.auth(game_id, 1)).status_code == 200
    )
    assert api.view(game_id)["players"][1]["takeover"] == "left"
    assert reclaim(api, game_id, {"Authorization": f"Bearer {token}"}).status_code == 401  # token gone
    waiting = api.create("skull", 3)
    api.join(waiting, "Ada")
    early = reclaim(api, waiting, api.auth(waiting, 0))
    assert early.status_code == 409 and early.json()["error"]["code"] == "not_started"


def test_openapi_documents_the_reclaim_route_and_its_refusals(fake_api: Api) -> None:
    document = fake_api.client.get("/openapi.json").json()
    route = document["paths"]["/games/{game_id}/reclaim"]["post"]
    assert set(route["responses"]) >= {"200", "401", "403", "404", "409"}
    assert "not_taken_over" in route["responses"]["409"]["description"]
    assert "bot_pace_ms" in document["components"]["schemas"]["CreateGame"]["description"]


# -- the bot pace ---------------------------------------------------------------------------------------


def _app_paced_by(pace: int) -> tuple[TestClient, fakeredis.FakeServer]:
    server = fakeredis.FakeServer()
    settings = Settings(admin_token=ADMIN_TOKEN, **{**UNLIMITED, "bot_pace_ms": pace})
    app = create_app(
        settings, lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server))
    )
    return TestClient(app, raise_server_exceptions=False), server


def test_a_tables_bot_pace_is_the_servers_unless_it_asks_for_its_own_and_views_show_it() -> None:
    client, server = _app_paced_by(750)
    with client:
        api = Api(bearer_only(client), fakeredis.FakeRedis(server=server))
        default = api.started("skull", 3)
        assert api.view(default)["bot_pace_ms"] == 750
        own = api.started("skull", 3, bot_pace_ms=0)
        assert api.view(own, 0)["bot_pace_ms"] == 0
        for bad in (-1, 5001, "slow"):
            response = api.client.post(
                "/games", json={"game": "skull", "players": 3, "options": {"bot_pace_ms": bad}}
            )
            assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_options"
        options = api.client.get("/games/options").json()["games"][0]["options"]
        pace = next(o for o in options if o["name"] == "bot_pace_ms")
        assert (pace["type"], pace["minimum"], pace["maximum"], pace["nullable"]) == (
            "integer",
            0,
            5000,
            True,
        )
        assert pace["description"]


def test_a_paced_bot_at_a_table_with_a_person_is_not_queued_at_once_but_a_bot_only_table_is() -> None:
    client, server = _app_paced_by(1000)
    with client:
        api = Api(bearer_only(client), fakeredis.FakeRedis(server=server))
        mixed = api.create("skull-king", 2)  # both bid at once: the bot is awaited from the start
        api.join(mixed, "Ada")
        client.post(f"/games/{mixed}/bots", json={}, headers={"Authorization": f"Bearer {api.hosts[mixed]}"})
        head = api.head(mixed)
        assert bot_queue(api.sync).job_ids == []
        assert api.sync.zrange("ts:paced", 0, -1) == [f"{mixed}:{head}:1".encode()]
        bots = api.create("skull-king", 2)
        client.post(f"/games/{bots}/bots", json={}, headers={"Authorization": f"Bearer {api.hosts[bots]}"})
        assert bot_queue(api.sync).job_ids == [f"bot-{bots}-{api.head(bots)}-0"]  # one bot a batch
        assert api.sync.zcard("ts:paced") == 1  # only the table with a person waits


def test_a_seat_taken_over_again_after_it_was_taken_back_can_be_taken_back_again(
    api: Api,
) -> None:
    game_id = _taken_over(api)
    assert reclaim(api, game_id, api.auth(game_id, 0)).status_code == 200
    own = api.view(game_id, 1)
    if 1 in own["to_act"]:
        api.send(game_id, 1, choose("six-nimmt", own, random.Random(2)), command_id=uuid.uuid4().hex)
    assert asyncio.run(_fire(api, game_id))[0] == "timeout:0"
    assert api.view(game_id)["players"][0]["takeover"] == "timeouts"
    assert reclaim(api, game_id, api.auth(game_id, 0)).status_code == 200
    records = api.client.get(f"/games/{game_id}/events", params={"limit": 1000}).json()["events"]
    assert [e["seat"] for e in records if e["type"] == "seat_reclaimed"] == [0, 0]
