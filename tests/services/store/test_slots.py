"""No script or pipeline of the store touches two Redis Cluster slots.

The stores refuse one before sending it (``CrossSlot``), on every backend, so that every test of the
suite checks the rule; here the refusal itself is shown, and every request of whole games (HTTP
commands, projections, views, lobby, export) is recorded and checked slot by slot."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from typing import Any

import fakeredis
import pytest
from redis.crc import key_slot

from domain.games import specs
from services.cli.demo import play_game
from services.store.event_store import CrossSlot, EventStore, SyncEventStore
from services.store.keys import game_keys
from services.store.requests import Call, Operation, Pipelined, Request, ScriptCall
from tests.api.conftest import Api, fake_api, practice

__all__ = ["fake_api"]  # the fixture, shared with the API tests

GAMES = [(game.name, game.min_players) for game in specs()]


def slot(key: str | bytes) -> int:
    return key_slot(key.encode() if isinstance(key, str) else key)


def two_games_in_one_pipeline() -> Operation[Any]:
    return (
        yield Pipelined(
            (Call(("HGET", game_keys("a").views, "x")), Call(("HGET", game_keys("b").views, "x")))
        )
    )


def test_a_pipeline_spanning_two_slots_is_refused_before_anything_is_sent() -> None:
    assert slot(game_keys("a").views) != slot(game_keys("b").views)
    server = fakeredis.FakeServer()
    store = SyncEventStore(fakeredis.FakeRedis(server=server))
    with pytest.raises(CrossSlot, match="2 slots"):
        store.run(two_games_in_one_pipeline())


def test_a_script_spanning_two_slots_is_refused_before_it_runs() -> None:
    store = SyncEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))

    def crossing() -> Operation[Any]:
        return (yield ScriptCall("write_views", [game_keys("a").views, game_keys("b").views], [0, 1, "c"]))

    with pytest.raises(CrossSlot, match="script write_views"):
        store.run(crossing())


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Request]]:
    """Every request either store sends, in order (a lockstep round's in the order of its
    operations; a request that the round then runs alone is recorded again)."""
    requests: list[Request] = []
    sync_execute, async_execute = SyncEventStore._execute, EventStore._execute
    sync_round = SyncEventStore._execute_round

    def sync_recording(self: SyncEventStore, request: Request) -> Any:
        requests.append(request)
        return sync_execute(self, request)

    def round_recording(self: SyncEventStore, asked: Mapping[int, Request]) -> dict[int, Any]:
        requests.extend(asked.values())
        return sync_round(self, asked)

    async def async_recording(self: EventStore, request: Request) -> Any:
        requests.append(request)
        return await async_execute(self, request)

    monkeypatch.setattr(SyncEventStore, "_execute", sync_recording)
    monkeypatch.setattr(SyncEventStore, "_execute_round", round_recording)
    monkeypatch.setattr(EventStore, "_execute", async_recording)
    yield requests


@pytest.mark.thorough
@pytest.mark.parametrize(("game", "players"), GAMES)
def test_every_script_and_pipeline_of_a_whole_game_stays_in_one_slot(
    fake_api: Api, recorded: list[Request], game: str, players: int
) -> None:
    final, _ = play_game(
        fake_api.client, game, players, random.Random(3), out=lambda _: None, options=practice(game, 3)
    )
    fake_api.project()
    fake_api.client.get(f"/games/{final['game_id']}/export")
    scripts = [r for r in recorded if isinstance(r, ScriptCall)]
    pipelines = [r for r in recorded if isinstance(r, Pipelined)]
    assert {s.script for s in scripts} >= {"create", "append", "project_views"}
    assert pipelines
    for script in scripts:
        if script.index:  # on the indexes' server, one standalone Redis (the store checks no slot there)
            continue
        assert len({slot(key) for key in script.keys}) == 1, script
    for pipeline in pipelines:
        if pipeline.across_games:  # a batch of many games (the consumer's claims), never a game's path
            assert all(call.args[0] == "DEL" for call in pipeline.calls)
            continue
        store_keys = [call.key for call in pipeline.calls if not call.index and call.key is not None]
        assert len({slot(key) for key in store_keys}) <= 1, pipeline
    game_slot = slot(game_keys(final["game_id"]).events)
    game_calls = [r for r in recorded if isinstance(r, Call) and not r.index and r.key is not None]
    for call in game_calls:
        key = call.key.decode() if isinstance(call.key, bytes) else str(call.key)
        if key.startswith("ts:{") and final["game_id"] in key:
            assert slot(key) == game_slot, call
