"""The export of a finished game, and practice tables (the same seed deals the same games)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from domain.fairness import SecretSeeds
from domain.games import game_names, table_for
from domain.kernel import Event
from domain.table import GameFinished, PlayerJoined, SeedRevealed, TableCreated
from services.history.export import FORMAT, CorruptStream, GameNotFinished, build_export
from services.history.records import Entry
from services.history.replay import decode_stream
from services.history.verify import verify_export
from tests.support.play import play_random
from tests.support.recorded import new_recorded_game, recorded_random_game

GAMES = game_names()
PRACTICE_SEED = "5eed" * 16


def events_of(entries: list[Entry]) -> list[Event]:
    _, _, items, _ = decode_stream(entries)
    return [item.event for item in items if item.event is not None]


@pytest.mark.parametrize("game", GAMES)
def test_an_export_holds_every_entry_byte_for_byte_and_a_header_restating_the_stream(game: str) -> None:
    g = recorded_random_game(game, 4, seed=3)
    doc = json.loads(json.dumps(build_export(g.entries)))
    events = events_of(g.entries)
    created = events[0]
    finished = events[-1]
    assert isinstance(created, TableCreated) and isinstance(finished, GameFinished)
    assert doc["format"] == FORMAT
    assert [(e["version"], e["hash"], e["data"].encode()) for e in doc["entries"]] == [
        (e.version, e.hash, e.data) for e in g.entries
    ]
    assert doc["head"] == {"version": g.entries[-1].version, "hash": g.entries[-1].hash}
    assert (doc["game_id"], doc["game"], doc["players"]) == (created.game_id, game, 4)
    assert doc["options"] == created.options and doc["practice"] is False
    assert doc["seats"] == [
        {"seat": e.seat, "name": e.name, "client_seed": e.client_seed}
        for e in events
        if isinstance(e, PlayerJoined)
    ]
    assert doc["commitments"] == [created.commitment]
    assert doc["revealed_seeds"] == {str(e.round): e.seed for e in events if isinstance(e, SeedRevealed)}
    assert (doc["scores"], doc["winners"]) == (finished.scores, finished.winners)
    assert verify_export(doc).ok


@pytest.mark.parametrize("game", GAMES)
def test_a_game_that_is_not_over_cannot_be_exported(game: str) -> None:
    g = recorded_random_game(game, 3, seed=5)
    for version, _ in g.receipts[:-1:7]:
        with pytest.raises(GameNotFinished) as caught:
            build_export(g.entries[:version])
        assert caught.value.code == "game_not_finished"
    with pytest.raises(GameNotFinished):
        build_export([])


def test_a_stream_without_a_readable_table_created_is_refused_as_corrupt() -> None:
    g = recorded_random_game("skull-king", 3, seed=5)
    with pytest.raises(CorruptStream):
        build_export([Entry(1, b"garbage", g.entries[0].hash), *g.entries[1:]])


# -- practice tables ---------------------------------------------------------------------------


def chance_outcomes(game: str, seed_hex: str, client_seeds: list[str], game_id: str) -> list[Any]:
    """A practice game driven by fixed commands; the events the seeds decided (its whole stream)."""
    g = new_recorded_game(game, 3, {"seed": seed_hex}, client_seeds=client_seeds, game_id=game_id)
    for _ in range(40):
        if g.state.status == "finished":
            break
        seat = min(g.table.to_act(g.state))
        g.act(seat, g.legal(seat)[0])
    return events_of(g.entries)


@pytest.mark.parametrize("game", GAMES)
def test_a_practice_table_with_the_same_seed_and_client_seeds_deals_the_same(game: str) -> None:
    first = chance_outcomes(game, PRACTICE_SEED, ["a", "b", "c"], "practice-1")
    assert chance_outcomes(game, PRACTICE_SEED, ["a", "b", "c"], "practice-1") == first
    other_seed = chance_outcomes(game, "0" * 63 + "1", ["a", "b", "c"], "practice-1")
    other_client = chance_outcomes(game, PRACTICE_SEED, ["a", "b", "x"], "practice-1")
    assert other_seed != first and other_client != first


def test_a_practice_seed_is_s_k_of_chain_0_so_the_table_commits_to_its_hash_chain() -> None:
    seed = bytes.fromhex(PRACTICE_SEED)
    secret = SecretSeeds(seed, seed)
    assert secret.round_seed(64) == seed
    created = table_for("skull-king").create("p", 3, {}, secret.chain_commitment(0), practice=True)
    g = new_recorded_game("skull-king", 3, {"seed": PRACTICE_SEED}, game_id="p")
    assert events_of(g.entries)[0] == created[0]


@pytest.mark.parametrize("game", GAMES)
def test_a_practice_export_says_practice_and_never_stores_the_seed_option(game: str) -> None:
    g = new_recorded_game(game, 3, {"seed": PRACTICE_SEED}, game_id="practice")
    play_random(g, random.Random(1))
    doc = build_export(g.entries)
    assert doc["practice"] is True
    assert "seed" not in json.loads(doc["entries"][0]["data"])["command"]["body"]["options"]
    assert "seed" not in doc["options"]
    assert PRACTICE_SEED not in json.dumps(doc)
    assert verify_export(json.loads(json.dumps(doc))).ok
