"""Rematch: every human seat accepts and exactly one new table is made with the same game, options and
seats (new commitment and seeds, bots where the host had them); one decline and none is made."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest

from bots import choose
from services.history.verify import verify_export
from tests.api.conftest import Api
from tests.api.test_accounts import register
from tests.api.test_lifecycle_api import host

OPTIONS = {"rounds": 1, "turn_seconds": 120, "takeover_after": 5}


def auth(api: Api, game_id: str, seat: int) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.tokens[game_id][seat]}"}


def finished_game(api: Api, run_jobs: Any, humans: int, bots: int, seed: int, **options: Any) -> str:
    """A one-round 6 nimmt! game of ``humans`` people (seats 0..) and ``bots`` bots, played out."""
    game_id = api.create("six-nimmt", humans + bots, **{**OPTIONS, **options})
    link = api.client.get(f"/games/{game_id}/invite", headers=host(api, game_id)).json()
    for seat in range(humans):
        joined = api.client.post(
            f"/games/{game_id}/players",
            json={"name": f"Player {seat + 1}"},
            params={"invite": link["invite"] or ""},
        )
        assert joined.status_code == 201, joined.text
        api.tokens[game_id].append(joined.json()["token"])
    if bots:
        filled = api.client.post(f"/games/{game_id}/bots", json={}, headers=host(api, game_id))
        assert filled.status_code == 200, filled.text
    rng = random.Random(seed)
    for _ in range(2000):
        run_jobs()
        view = api.view(game_id, 0)  # a seat sees even a private table
        if view["status"] == "finished":
            return game_id
        for seat in view["to_act"]:
            if seat < humans:
                own = api.view(game_id, seat)
                api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
    raise AssertionError("the game did not finish")


def accept(api: Api, game_id: str, seat: int) -> Any:
    return api.client.post(f"/games/{game_id}/rematch", json={}, headers=auth(api, game_id, seat))


def state(api: Api, game_id: str, seat: int | None = None) -> dict[str, Any]:
    headers = auth(api, game_id, seat) if seat is not None else {}
    response = api.client.get(f"/games/{game_id}/rematch", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def created_tables(api: Api) -> int:
    return sum(1 for _ in api.sync.scan_iter("ts:{*}:secret"))


def test_when_every_player_accepts_one_new_table_is_made_with_the_same_options_and_seats(
    api: Api, run_jobs: Any
) -> None:
    game_id = finished_game(api, run_jobs, humans=2, bots=0, seed=3)
    old = api.view(game_id)
    before = created_tables(api)
    first = accept(api, game_id, 0)
    assert first.status_code == 200, first.text
    assert first.json()["status"] == "pending" and first.json()["new_game_id"] is None
    assert [s["answer"] for s in state(api, game_id)["seats"]] == ["accepted", "pending"]
    last = accept(api, game_id, 1)
    assert last.status_code == 200, last.text
    made = last.json()
    assert made["status"] == "made" and made["your_seat"] == 1 and made["token"]
    new_id = made["new_game_id"]
    assert created_tables(api) == before + 1
    new = api.client.get(f"/games/{new_id}/view", headers={"Authorization": f"Bearer {made['token']}"}).json()
    assert new["seat"] == 1 and new["status"] == "playing"
    assert new["options"] == old["options"] and new["seats"] == old["seats"]
    assert [p["name"] for p in new["players"]] == [p["name"] for p in old["players"]]
    assert new["fairness"]["commitments"][0] != old["fairness"]["commitments"][0]  # new seeds
    events = api.client.get(f"/games/{new_id}/events").json()["events"]
    timers = next(e for e in events if e["type"] == "table_timers_set")
    assert (timers["turn_seconds"], timers["takeover_after"]) == (120, 5)
    # each seat's token goes to that seat only: seat 0 gets its own, a spectator none
    mine = state(api, game_id, 0)
    assert mine["your_seat"] == 0 and mine["token"] != made["token"]
    assert "token" not in state(api, game_id) and state(api, game_id)["your_seat"] is None
    again = accept(api, game_id, 0)  # nothing more is made
    assert again.json()["new_game_id"] == new_id and created_tables(api) == before + 1


@pytest.mark.thorough
def test_concurrent_accepts_make_exactly_one_table(api: Api, run_jobs: Any) -> None:
    game_id = finished_game(api, run_jobs, humans=3, bots=0, seed=5)
    before = created_tables(api)
    app = api.client.app

    async def all_accept() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await asyncio.gather(
                *(
                    client.post(f"/games/{game_id}/rematch", json={}, headers=auth(api, game_id, seat))
                    for seat in range(3)
                )
            )

    assert api.client.portal is not None
    answers = api.client.portal.call(all_accept)  # in the app's event loop
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    assert created_tables(api) == before + 1
    new_ids = {state(api, game_id, seat)["new_game_id"] for seat in range(3)}
    assert len(new_ids) == 1 and None not in new_ids
    tokens = {state(api, game_id, seat)["token"] for seat in range(3)}
    assert len(tokens) == 3


def test_one_decline_makes_no_table_and_everyone_sees_who_declined(api: Api, run_jobs: Any) -> None:
    game_id = finished_game(api, run_jobs, humans=2, bots=0, seed=7)
    before = created_tables(api)
    assert accept(api, game_id, 0).status_code == 200
    declined = api.client.post(f"/games/{game_id}/rematch/decline", json={}, headers=auth(api, game_id, 1))
    assert declined.status_code == 200, declined.text
    seen = state(api, game_id)
    assert seen["status"] == "declined" and seen["declined_by"] == 1
    assert seen["seats"][1] == {"seat": 1, "name": "Player 2", "bot": False, "answer": "declined"}
    late = accept(api, game_id, 0)
    assert late.status_code == 409 and late.json()["error"]["code"] == "rematch_declined"
    assert created_tables(api) == before


@pytest.mark.thorough
def test_bots_follow_the_host_and_only_the_humans_answer(api: Api, run_jobs: Any) -> None:
    game_id = finished_game(api, run_jobs, humans=1, bots=2, seed=11)
    seats = state(api, game_id)["seats"]
    assert [(s["bot"], s["answer"]) for s in seats] == [(False, "pending"), (True, None), (True, None)]
    made = accept(api, game_id, 0).json()
    assert made["status"] == "made", made
    new = api.client.get(f"/games/{made['new_game_id']}/view").json()
    assert [p["bot"] for p in new["players"]] == [False, True, True]
    assert new["status"] == "playing"


@pytest.mark.thorough
def test_a_private_tables_rematch_is_private_too(api: Api, run_jobs: Any) -> None:
    game_id = finished_game(api, run_jobs, humans=1, bots=1, seed=13, private=True)
    made = accept(api, game_id, 0).json()
    new_id = made["new_game_id"]
    assert api.client.get(f"/games/{new_id}/view").status_code == 404  # no code, no token: unknown
    mine = {"Authorization": f"Bearer {made['token']}"}
    assert api.client.get(f"/games/{new_id}/invite", headers=mine).json()["private"] is True


@pytest.mark.parametrize("when", ["playing", "spectator"])
def test_only_the_players_of_a_finished_game_answer_a_rematch(api: Api, when: str) -> None:
    if when == "playing":
        game_id = api.started("skull", 3)
        refused = accept(api, game_id, 0)
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "game_not_finished"
    else:
        game_id = api.started("skull", 3)
        refused = api.client.post(f"/games/{game_id}/rematch", json={})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"


@pytest.mark.thorough
def test_a_finished_private_game_is_exported_to_its_players_and_verifies(api: Api, run_jobs: Any) -> None:
    game_id = finished_game(api, run_jobs, humans=2, bots=1, seed=17, private=True)
    assert api.client.get(f"/games/{game_id}/export").status_code == 404  # a stranger: no such game
    export = api.client.get(f"/games/{game_id}/export", headers=auth(api, game_id, 1))
    assert export.status_code == 200, export.text
    report = verify_export(export.json())
    assert report.ok, report.render()
    replay = api.client.get(f"/games/{game_id}/replay", headers=auth(api, game_id, 0))
    assert replay.status_code == 200


def test_a_rematch_of_accounts_seats_the_same_accounts_and_a_private_game_stays_out_of_histories(
    api: Api, run_jobs: Any
) -> None:
    accounts = [register(api, name) for name in ("Ada", "Bo")]
    created = api.client.post(
        "/games", json={"game": "six-nimmt", "players": 2, "options": {**OPTIONS, "private": True}}
    ).json()
    game_id = created["game_id"]
    api.tokens[game_id] = []
    for account in accounts:
        joined = api.client.post(
            f"/games/{game_id}/players",
            json={},
            params={"invite": created["invite"]},
            headers={"Authorization": f"Bearer {account['token']}"},
        )
        assert joined.status_code == 201, joined.text
        api.tokens[game_id].append(joined.json()["token"])
    rng = random.Random(19)
    while (view := api.view(game_id, 0))["status"] != "finished":
        for seat in view["to_act"]:
            own = api.view(game_id, seat)
            api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
    api.project()
    for account in accounts:  # seen only through its link: in no public history, in no rating
        page = api.client.get(f"/accounts/{account['account_id']}/history").json()
        assert (page["total"], page["games"]) == (0, [])
        assert api.client.get(f"/accounts/{account['account_id']}").json()["ratings"] == {}
    accept(api, game_id, 0)
    made = accept(api, game_id, 1).json()
    new = api.client.get(
        f"/games/{made['new_game_id']}/view", headers={"Authorization": f"Bearer {made['token']}"}
    ).json()
    assert [p["account"]["id"] for p in new["players"]] == [a["account_id"] for a in accounts]
    # the rematch's table is each account's, on every device: "Your tables" lists it without cookies
    api.client.cookies.clear()
    for account in accounts:
        listed = api.client.get("/me/tables", headers={"Authorization": f"Bearer {account['token']}"})
        assert [t["game_id"] for t in listed.json()["tables"]] == [made["new_game_id"]], account["account_id"]


def test_a_turn_based_tables_rematch_is_turn_based_with_the_same_long_turns_and_an_empty_chat(
    api: Api, run_jobs: Any
) -> None:
    day = 24 * 3600
    game_id = finished_game(api, run_jobs, humans=2, bots=0, seed=23, turn_based=True, turn_seconds=day)
    said = api.client.post(
        f"/games/{game_id}/chat", json={"text": "well played"}, headers=auth(api, game_id, 0)
    )
    assert said.status_code in (200, 201), said.text
    accept(api, game_id, 0)
    made = accept(api, game_id, 1).json()
    new_id = made["new_game_id"]
    events = api.client.get(f"/games/{new_id}/events").json()["events"]
    timers = next(e for e in events if e["type"] == "table_timers_set")
    assert timers["turn_based"] is True and timers["turn_seconds"] == day
    listed = api.client.get(f"/games/{new_id}/chat", headers={"Authorization": f"Bearer {made['token']}"})
    assert listed.status_code == 200 and listed.json()["messages"] == []  # the new table's chat is its own
    assert api.client.get(f"/games/{game_id}/chat").json()["messages"]  # the old one keeps its chat
