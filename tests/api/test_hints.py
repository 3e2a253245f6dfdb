"""Hints at practice tables: refused elsewhere, recorded in the stream, hidden from the other seats,
and a game with hints is unrated."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots import choose
from domain.games import specs, table_for
from domain.table import HintGiven
from services.history.folding import advance
from services.history.verify import verify_export
from services.store.event_store import SyncEventStore
from tests.api.conftest import Api, practice

GAMES = [(game.name, game.default_players) for game in specs()]


def hint(api: Api, game_id: str, seat: int, **params: Any) -> Any:
    return api.client.post(f"/games/{game_id}/hint", json={}, headers=api.auth(game_id, seat), params=params)


def awaited_seat(api: Api, game_id: str) -> int:
    seat: int = api.view(game_id)["to_act"][0]
    return seat


def stored_events(api: Api, game_id: str) -> list[tuple[int, Any]]:
    from services.history.folding import decode_events

    entries = SyncEventStore(api.sync).read(game_id)
    folded = advance(game_id, None, entries)
    return decode_events(folded.table, entries)


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_a_hint_at_a_practice_table_is_a_legal_move_of_the_awaited_seat_with_its_reason(
    api: Api, game: str, players: int
) -> None:
    game_id = api.started(game, players, **practice(game, 3))
    seat = awaited_seat(api, game_id)
    own = api.view(game_id, seat)
    response = hint(api, game_id, seat, lang="fr")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["command"] in own["legal"]
    assert body["command_text"]  # the move in words (French here)
    assert body["version"] == own["version"] + 1
    if body["reason"] is not None:
        assert body["reason"]["key"].startswith("bot.reason.")
    # the suggestion is playable as it stands
    sent = api.send(game_id, seat, body["command"], expected_version=body["version"])
    assert sent.status_code == 200, sent.text


def test_a_hint_is_refused_at_a_table_that_is_not_a_practice_table_with_403(api: Api) -> None:
    game_id = api.started("skull-king", 3)
    seat = awaited_seat(api, game_id)
    head = api.head(game_id)
    response = hint(api, game_id, seat)
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "hints_not_allowed"
    assert api.head(game_id) == head  # nothing written


def test_a_hint_needs_the_seat_token_and_the_seats_turn(api: Api) -> None:
    game_id = api.started("skull-king", 3, **practice("skull-king", 5))
    no_token = api.client.post(f"/games/{game_id}/hint", json={})
    assert no_token.status_code == 401
    own = api.view(game_id, 0)  # every seat bids at once; once seat 0 has bid, it is not awaited
    api.send(game_id, 0, choose("skull-king", own, random.Random(1)), expected_version=own["version"])
    assert 0 not in api.view(game_id)["to_act"]
    refused = hint(api, game_id, 0)
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "not_your_turn"


@pytest.mark.thorough
def test_asking_again_before_the_game_moves_answers_the_same_hint_and_records_one(api: Api) -> None:
    game_id = api.started("six-nimmt", 3, **practice("six-nimmt", 2))
    seat = awaited_seat(api, game_id)
    first = hint(api, game_id, seat).json()
    again = hint(api, game_id, seat)
    assert again.status_code == 200
    assert again.json() == first
    hints = [e for _, e in stored_events(api, game_id) if isinstance(e, HintGiven)]
    assert [h.seat for h in hints] == [seat]
    own = api.view(game_id, seat)
    other = next(s for s in own["to_act"] if s != seat)  # 6 nimmt!: every seat selects at once
    other_view = api.view(game_id, other)
    api.send(game_id, other, other_view["legal"][0], expected_version=other_view["version"])
    third = hint(api, game_id, seat).json()  # the game moved on: a new hint is recorded
    assert third["version"] == first["version"] + 2
    assert len([e for _, e in stored_events(api, game_id) if isinstance(e, HintGiven)]) == 2


def test_hints_are_rate_limited_per_seat(fake_api: Api) -> None:
    api = fake_api
    context_limits = api.client.app.state.context.rate_limits  # type: ignore[attr-defined]
    game_id = api.started("skull", 3, **practice("skull", 1))
    seat = awaited_seat(api, game_id)
    limit = context_limits.item("hint").amount
    codes = [hint(api, game_id, seat).status_code for _ in range(limit + 1)]
    assert codes[:limit] == [200] * limit
    assert codes[-1] == 429


@pytest.mark.thorough
def test_a_hint_is_in_the_stream_verified_narrated_and_the_game_is_unrated(api: Api) -> None:
    game_id = api.started("skull-king", 3, **practice("skull-king", 9))
    seat = awaited_seat(api, game_id)
    suggested = hint(api, game_id, seat).json()["command"]
    rng = random.Random(4)
    while (view := api.view(game_id))["status"] == "playing":
        for acting in view["to_act"]:
            own = api.view(game_id, acting)
            api.send(game_id, acting, choose(own["game"], own, rng), expected_version=own["version"])
    events = stored_events(api, game_id)
    given_ = [e for _, e in events if isinstance(e, HintGiven)]
    assert [(h.seat, h.command) for h in given_] == [(seat, suggested)]
    report = verify_export(api.client.get(f"/games/{game_id}/export").json())
    assert report.ok, report.render()
    hint_version = next(v for v, e in events if isinstance(e, HintGiven))
    replay = api.client.get(f"/games/{game_id}/replay", params={"lang": "en", "at": hint_version}).json()
    sentences = [e.get("text", "") for e in replay["events"]]
    assert any("asks for a hint; in their place the strong bot" in s for s in sentences), sentences
    final = table_for("skull-king").fold(None, [e for _, e in events])
    from projections.ratings import unrated_reason

    assert final is not None and final.hinted == frozenset({seat})
    assert unrated_reason(final, [type(e).__struct_config__.tag for _, e in events]) == "hints"


def shown_hints(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "hint_given"]


@pytest.mark.thorough
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5, 8])  # replayable seeds: tables, moves, hint timing
@pytest.mark.parametrize(("game", "players"), GAMES)
def test_no_other_seat_nor_a_spectator_sees_the_hinted_move_while_the_game_runs(
    fake_api: Api, seed: int, game: str, players: int
) -> None:
    api = fake_api
    game_id = api.started(game, players, **practice(game, seed))
    rng = random.Random(seed)
    asked: set[int] = set()
    for _ in range(1 + seed % 4):  # a few moves, then a hint
        view = api.view(game_id)
        if view["status"] != "playing":
            break
        seat = view["to_act"][0]
        if seat not in asked:
            assert hint(api, game_id, seat).status_code == 200
            asked.add(seat)
        own = api.view(game_id, seat)
        api.send(game_id, seat, choose(game, own, rng), expected_version=own["version"])
    running = api.view(game_id)["status"] == "playing"
    for viewer in (None, *range(players)):
        headers = api.auth(game_id, viewer) if viewer is not None else {}
        page = api.client.get(f"/games/{game_id}/events", headers=headers, params={"limit": 1000}).json()
        for event in shown_hints(page["events"]):
            mine = viewer == event["seat"]
            if running and not mine:
                assert event.get("command") is None and event.get("reason") is None, (viewer, event)
            else:
                assert event["command"] is not None
    # live updates carry views: at every version since the first hint, no other seat's view (nor the
    # spectator's) holds anything of a hint but which seats asked for one
    head = api.head(game_id)
    for viewer in (None, *range(players)):
        for version in range(head - 3, head + 1):
            view = api.view(game_id, viewer, at=version)
            assert set(view["hints_used"]) <= asked
            assert not any("hint" in key for key in view if key != "hints_used"), sorted(view)


def test_a_hint_leaves_the_turns_deadline_where_it_was(api: Api) -> None:
    game_id = api.started("skull-king", 2, turn_seconds=60, **practice("skull-king", 7))
    seat = awaited_seat(api, game_id)
    before = api.view(game_id, seat)
    assert before["clock"]["deadline_ms"] is not None
    answered = hint(api, game_id, seat).json()
    after = api.view(game_id, seat)
    assert after["version"] == answered["version"] == before["version"] + 1
    assert after["clock"]["deadline_ms"] == before["clock"]["deadline_ms"]
