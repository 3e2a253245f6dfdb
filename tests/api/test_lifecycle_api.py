"""The online lifecycle over HTTP: the host's bots, leaving, ``by`` and narrated events, the clock in
views, expired tables leaving the lobby, and bots' and timeouts' events redacted for other seats."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.history.verify import verify_export
from services.store.timer_record import timer_fields
from tests.api.conftest import Api
from workers import lifecycle


def host(api: Api, game_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.hosts[game_id]}"}


def test_only_the_host_fills_the_empty_seats_with_bots_and_only_while_waiting(api: Api) -> None:
    game_id = api.create("skull", 4)
    api.join(game_id, "Ada")
    seat_token = {"Authorization": f"Bearer {api.tokens[game_id][0]}"}
    assert api.client.post(f"/games/{game_id}/bots", json={}, headers=seat_token).status_code == 403
    assert api.client.post(f"/games/{game_id}/bots", json={}).status_code == 401
    response = api.client.post(f"/games/{game_id}/bots", json={}, headers=host(api, game_id))
    assert response.status_code == 200 and response.json() == {"seats": [1, 2, 3]}
    again = api.client.post(f"/games/{game_id}/bots", json={}, headers=host(api, game_id))
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_waiting"
    players = api.view(game_id)["players"]
    assert [p["bot"] for p in players] == [False, True, True, True]


def test_the_host_picks_the_level_of_the_bots_and_the_seat_shows_it(api: Api) -> None:
    game_id = api.create("six-nimmt", 3)
    api.join(game_id, "Ada")
    refused = api.client.post(f"/games/{game_id}/bots", json={"level": "genius"}, headers=host(api, game_id))
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_bot_level"
    response = api.client.post(f"/games/{game_id}/bots", json={"level": "strong"}, headers=host(api, game_id))
    assert response.status_code == 200 and response.json() == {"seats": [1, 2]}
    players = api.view(game_id)["players"]
    assert [p.get("bot_level") for p in players] == [None, "strong", "strong"]


@pytest.mark.thorough
def test_a_strong_bot_plays_its_seat_through_the_worker(api: Api, run_jobs: Any) -> None:
    game_id = api.create("skull", 3)
    api.client.post(f"/games/{game_id}/bots", json={"level": "strong"}, headers=host(api, game_id))
    run_jobs()
    view = api.view(game_id)
    assert [p["bot_level"] for p in view["players"]] == ["strong"] * 3
    events = api.client.get(f"/games/{game_id}/events", params={"limit": 1000, "lang": "en"}).json()["events"]
    assert any(e["type"] == "disc_placed" and e["by"] == "bot" for e in events)
    assert any("strong" in e["text"] for e in events if e["type"] == "bot_seated")


def test_the_host_cookie_also_fills_the_seats(api: Api) -> None:
    game_id = api.create("skull", 3)
    api.client.cookies.set(f"ts_host_{game_id}", api.hosts[game_id])
    try:
        assert api.client.post(f"/games/{game_id}/bots", json={}).status_code == 200
    finally:
        api.client.cookies.clear()


@pytest.mark.thorough
def test_bots_play_to_the_end_and_their_commands_show_by_bot(api: Api, run_jobs: Any) -> None:
    game_id = api.create("skull-king", 2)
    api.client.post(f"/games/{game_id}/bots", json={}, headers=host(api, game_id))
    for _ in range(500):
        run_jobs()
        if api.view(game_id)["status"] == "finished":
            break
    assert api.view(game_id)["status"] == "finished"
    events = api.client.get(f"/games/{game_id}/events", params={"limit": 1000, "lang": "fr"}).json()["events"]
    assert {e["by"] for e in events if e["type"] == "bid_placed"} == {"bot"}
    assert all(isinstance(e["text"], str) and e["text"] for e in events)


def test_an_unknown_language_is_refused_with_a_sentence(api: Api) -> None:
    game_id = api.create("skull", 3)
    response = api.client.get(f"/games/{game_id}/events", params={"lang": "xx"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_query"


def test_a_player_who_leaves_during_play_is_replaced_by_a_bot_and_their_token_stops_working(
    api: Api,
) -> None:
    game_id = api.started("skull", 3, turn_seconds=20)
    auth = api.auth(game_id, 1)
    response = api.client.post(f"/games/{game_id}/leave", json={}, headers=auth)
    assert response.status_code == 200 and response.json() == {"seat": 1}
    player = api.view(game_id)["players"][1]
    assert player["bot"] and player["left"]
    assert api.client.post(f"/games/{game_id}/leave", json={}, headers=auth).status_code == 401


def test_leaving_a_waiting_table_frees_the_seat_in_the_lobby(api: Api) -> None:
    game_id = api.create("skull", 3)
    api.join(game_id, "Ada")
    api.join(game_id, "Bart")
    api.client.post(f"/games/{game_id}/leave", json={}, headers=api.auth(game_id, 0))
    api.project()
    entry = next(g for g in api.client.get("/games").json()["games"] if g["game_id"] == game_id)
    assert entry["seats_taken"] == 1
    assert api.join(game_id, "Cleo") == 0


def test_views_carry_the_clock_of_a_timed_table_and_none_for_an_untimed_one(api: Api) -> None:
    timed = api.started("skull", 3, turn_seconds=45)
    clock = api.view(timed)["clock"]
    assert clock["turn_seconds"] == 45 and clock["deadline_ms"] - clock["now_ms"] <= 45_000
    assert clock["deadline_ms"] > clock["now_ms"]
    practice = api.started("skull", 3, seed="ab" * 32)
    assert api.view(practice)["clock"] is None


def test_a_waiting_table_expires_is_recorded_and_leaves_the_lobby(api: Api, run_jobs: Any) -> None:
    game_id = api.create("six-nimmt", 4, expire_minutes=1)
    api.join(game_id, "Ada")
    api.project()
    assert any(g["game_id"] == game_id for g in api.client.get("/games").json()["games"])
    timer = timer_fields(api.sync.hgetall(f"ts:{{{game_id}}}:timer"))
    version = int(timer["version"])
    lifecycle_clock = int(timer["deadline"])
    queued = asyncio.run(_expire(api, game_id, version, lifecycle_clock))
    assert queued == ["expired"]
    api.project()
    assert api.view(game_id)["status"] == "expired"
    assert all(g["game_id"] != game_id for g in api.client.get("/games").json()["games"])
    events = api.client.get(f"/games/{game_id}/events").json()["events"]
    assert events[-1]["type"] == "table_expired" and events[-1]["by"] == "timeout"
    late = api.client.post(f"/games/{game_id}/players", json={"name": "Late"})
    assert late.status_code == 409 and late.json()["error"]["code"] == "table_expired"


async def _expire(api: Api, game_id: str, version: int, now_ms: int) -> list[str]:
    import fakeredis

    sync = api.sync
    aclient = (
        fakeredis.FakeAsyncRedis(server=sync.connection_pool.connection_kwargs["server"])
        if isinstance(sync, fakeredis.FakeRedis)
        else lifecycle.default_async_client(sync)
    )
    try:
        commands = lifecycle.commands_for(aclient, sync, lambda: now_ms)
        return await lifecycle.fire(commands, game_id, version, lambda: now_ms)
    finally:
        await aclient.aclose()


HIDDEN = {"disc_placed": "disc", "disc_lost": "disc", "card_selected": "card", "bid_placed": "tricks"}


@pytest.mark.thorough
@settings(max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(game=st.sampled_from([("skull", 3), ("six-nimmt", 3), ("skull-king", 2)]), seed=st.integers(0, 999))
def test_bots_and_timeouts_events_stay_redacted_for_the_other_seats(
    fake_api: Api, game: tuple[str, int], seed: int
) -> None:
    name, players = game
    game_id = fake_api.create(name, players, turn_seconds=10)
    fake_api.join(game_id, "Ada")
    fake_api.client.post(f"/games/{game_id}/bots", json={}, headers=host(fake_api, game_id))
    rng = random.Random(seed)
    for _ in range(rng.randrange(3, 12)):
        view = fake_api.view(game_id, 0)
        if view["status"] != "playing":
            break
        if 0 in view["to_act"]:
            fake_api.send(game_id, 0, rng.choice(view["legal"]))
        for seat in view["to_act"]:
            if seat != 0:
                asyncio.run(_bot(fake_api, game_id, seat, timeout=rng.random() < 0.5))
    if fake_api.view(game_id, 0)["status"] == "finished":
        return  # a quick finish (bots win two challenges): the rules reveal everything at the end
    events = fake_api.client.get(
        f"/games/{game_id}/events", params={"limit": 1000}, headers=fake_api.auth(game_id, 0)
    )
    for event in events.json()["events"]:
        field = HIDDEN.get(event["type"])
        others = field and event.get("seat") not in (0, None) and event["by"] in ("bot", "timeout")
        if others and not (event["type"] == "disc_placed" and event[field] == "last_chance"):
            assert event[field] is None, event


async def _bot(api: Api, game_id: str, seat: int, timeout: bool) -> None:
    import fakeredis

    sync = api.sync
    assert isinstance(sync, fakeredis.FakeRedis)
    aclient = fakeredis.FakeAsyncRedis(server=sync.connection_pool.connection_kwargs["server"])
    try:
        commands = lifecycle.commands_for(aclient, sync, lambda: 0)
        head = await commands.load(game_id)
        if seat not in head.table.to_act(head.state):
            return
        if timeout:
            await commands.timeout(game_id, head.version, seat, lifecycle.bot_move)
        else:
            await lifecycle.act(commands, game_id, head.version, seat)
    finally:
        await aclient.aclose()


@pytest.mark.thorough
def test_the_host_seats_one_bot_at_a_time_each_at_its_own_level_and_the_export_verifies(
    api: Api, run_jobs: Any
) -> None:
    game_id = api.create("skull-king", 3)
    headers = host(api, game_id)
    for level in ("strong", "easy"):
        one = api.client.post(f"/games/{game_id}/bots", json={"level": level, "count": 1}, headers=headers)
        assert one.status_code == 200 and len(one.json()["seats"]) == 1
    assert api.view(game_id)["status"] == "waiting"
    too_many = api.client.post(f"/games/{game_id}/bots", json={"count": 2}, headers=headers)
    assert too_many.status_code == 422 and too_many.json()["error"]["code"] == "invalid_bot_count"
    assert api.client.post(f"/games/{game_id}/bots", json={"count": 0}, headers=headers).status_code == 422
    last = api.client.post(f"/games/{game_id}/bots", json={"count": 1}, headers=headers)
    assert last.status_code == 200 and last.json() == {"seats": [2]}
    assert [p.get("bot_level") for p in api.view(game_id)["players"]] == ["strong", "easy", "normal"]
    for _ in range(500):
        run_jobs()
        if api.view(game_id)["status"] == "finished":
            break
    report = verify_export(api.client.get(f"/games/{game_id}/export").json())
    assert report.ok, report.render()  # the verifier re-runs each request with its count
