"""The post-game review: an RQ job after the game, cached, rebuilt when missing, refused while it runs."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from bots import choose
from bots.levels import advise
from bots.search import Budget
from services.store.event_store import SyncEventStore
from services.store.queue import review_key, review_queue
from services.store.rq_workers import run_burst
from tests.api.conftest import Api, practice
from workers import review as review_job
from workers.review import review_rng

LIGHT = Budget(simulations=4, cpu_seconds=5.0)  # fewer simulations: the same job, a fast test


@pytest.fixture(autouse=True)
def light_reviews(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(review_job, "REVIEW_BUDGET", LIGHT)


def run_reviews(api: Api) -> None:
    run_burst(api.sync, [review_queue(api.sync)], logging_level="WARNING")


def play_out(api: Api, game_id: str, seed: int) -> list[int]:
    """Every seat by a seeded bot to the end; the versions at which seat 0 sent its commands."""
    rng = random.Random(seed)
    sent = []
    while (view := api.view(game_id))["status"] == "playing":
        for seat in view["to_act"]:
            own = api.view(game_id, seat)
            reply = api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
            assert reply.status_code == 200, reply.text
            if seat == 0:
                sent.append(own["version"] + 1)
    return sent


def review(api: Api, game_id: str, seat: int = 0) -> Any:
    return api.client.get(f"/games/{game_id}/review", params={"seat": seat})


def test_the_review_waits_for_the_end_of_the_game(api: Api) -> None:
    game_id = api.started("skull-king", 3, **practice("skull-king", 2))
    response = review(api, game_id)
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "game_not_finished"


@pytest.mark.thorough
def test_after_the_game_the_review_is_built_off_the_request_then_served_from_the_cache(api: Api) -> None:
    game_id = api.started("six-nimmt", 3, rounds=1, **practice("six-nimmt", 6))
    sent = play_out(api, game_id, seed=6)
    first = review(api, game_id)
    assert first.status_code == 202
    assert first.headers["Retry-After"] == "2"
    assert review(api, game_id).status_code == 202  # still queued: one job, not two
    assert len(review_queue(api.sync)) == 1
    run_reviews(api)
    ready = review(api, game_id)
    assert ready.status_code == 200, ready.text
    body = ready.json()
    assert [move["version"] for move in body["moves"]] == sent
    assert body["differs"] == sum(move["differs"] for move in body["moves"])
    entries = SyncEventStore(api.sync).read(game_id)
    head_hash = entries[-1].hash
    for move in body["moves"]:
        # what the player saw just before the move, through the API's own time travel
        seen = api.view(game_id, 0, at=move["version"] - 1)
        advice = advise("six-nimmt", seen, "strong", review_rng(head_hash, move["version"] - 1, 0), LIGHT)
        assert move["strong"] == advice.command
        assert move["strong"] in seen["legal"] and move["played"] in seen["legal"]
        assert move["differs"] == (move["played"] != move["strong"])
        assert abs(sum(share["share"] for share in move["shares"]) - 1) < 0.01
        # what the review shows leads with what the bot chose, best share first
        assert move["shares"][0]["command"] == move["strong"]
        assert [share["share"] for share in move["shares"]] == sorted(
            (share["share"] for share in move["shares"]), reverse=True
        )
    cached = api.sync.get(review_key(game_id, 0))
    assert cached is not None and msgspec.json.decode(cached) == unworded(body)


def unworded(review: dict[str, Any]) -> dict[str, Any]:
    """The review as cached: the answer without the words of its commands (added per request)."""
    moves = []
    for move in review["moves"]:
        assert move["played_text"] and move["strong_text"]
        shares = [{k: v for k, v in share.items() if k != "text"} for share in move["shares"]]
        moves.append({k: v for k, v in move.items() if not k.endswith("_text")} | {"shares": shares})
    return review | {"moves": moves}


@pytest.mark.thorough
def test_the_review_says_each_move_in_the_language_asked_for(api: Api) -> None:
    game_id = api.started("skull-king", 2, **practice("skull-king", 8))
    play_out(api, game_id, seed=8)
    review(api, game_id)
    run_reviews(api)
    english = api.client.get(f"/games/{game_id}/review", params={"seat": 0, "lang": "en"}).json()
    french = api.client.get(f"/games/{game_id}/review", params={"seat": 0, "lang": "fr"}).json()
    assert unworded(english) == unworded(french)
    first_bid = english["moves"][0]
    assert first_bid["played"]["type"] == "bid"
    assert first_bid["played_text"].startswith("bids") and french["moves"][0]["played_text"].startswith(
        "prédit"
    )
    refused = api.client.get(f"/games/{game_id}/review", params={"seat": 0, "lang": "xx"})
    assert refused.status_code == 422


@pytest.mark.thorough
def test_a_review_missing_from_the_cache_is_built_again_the_same(api: Api) -> None:
    game_id = api.started("six-nimmt", 3, rounds=1, **practice("six-nimmt", 4))
    play_out(api, game_id, seed=4)
    assert review(api, game_id, 1).status_code == 202
    run_reviews(api)
    before = review(api, game_id, 1).json()
    api.sync.delete(review_key(game_id, 1))
    assert review(api, game_id, 1).status_code == 202
    run_reviews(api)
    assert review(api, game_id, 1).json() == before


@pytest.mark.thorough
def test_a_seat_the_host_gave_a_bot_has_no_review(api: Api, run_jobs: Any) -> None:
    game_id = api.create("skull", 3, **practice("skull", 3))
    api.join(game_id, "Ada")
    host = {"Authorization": f"Bearer {api.hosts[game_id]}"}
    assert api.client.post(f"/games/{game_id}/bots", json={}, headers=host).status_code == 200
    rng = random.Random(3)
    while (view := api.view(game_id))["status"] == "playing":
        run_jobs()
        view = api.view(game_id)
        if 0 in view["to_act"]:
            own = api.view(game_id, 0)
            api.send(game_id, 0, choose("skull", own, rng), expected_version=own["version"])
    refused = review(api, game_id, 2)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "not_a_person"
    assert review(api, game_id, 0).status_code == 202
