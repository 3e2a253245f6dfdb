"""Audit and export over HTTP: who sees what when, and an export that verifies offline."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from bots import choose
from domain.games import specs, table_for
from projections.views import seat_view
from services.cli.demo import play_game
from services.disputes.receipt_check import verify_with_receipts
from services.history.records import decode_stored
from services.history.verify import verify_export
from tests.api.conftest import ADMIN_TOKEN, Api, practice

OPERATOR = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def finished(api: Api, game: str = "skull", players: int = 3, seed: int = 1) -> dict[str, Any]:
    final, tokens = play_game(
        api.client, game, players, random.Random(seed), out=lambda line: None, options=practice(game, seed)
    )
    api.tokens[final["game_id"]] = tokens
    return final


def test_a_running_game_cannot_be_exported(api: Api) -> None:
    game_id = api.started()
    response = api.client.get(f"/games/{game_id}/export")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "game_not_finished"


@pytest.mark.thorough
@pytest.mark.parametrize(("game", "players"), [(game.name, game.default_players) for game in specs()])
def test_the_export_of_a_finished_game_verifies_clean(api: Api, game: str, players: int) -> None:
    final = finished(api, game, players)
    doc = api.client.get(f"/games/{final['game_id']}/export").json()
    report = verify_export(doc)
    assert report.ok, report.render()
    assert doc["winners"] == final["winners"]


@pytest.mark.thorough
def test_time_travel_at_every_version_equals_the_fold_of_the_exported_log(api: Api) -> None:
    final = finished(api, "skull-king", 2)
    doc = api.client.get(f"/games/{final['game_id']}/export").json()
    table = table_for("skull-king")
    state = None
    for entry in doc["entries"]:
        stored = decode_stored(entry["data"].encode())
        state = table.evolve(state, msgspec.json.decode(stored.event, type=table.event_type))
        expected = msgspec.json.decode(msgspec.json.encode(seat_view(state, entry["version"], 0)))
        expected["clock"] = None  # a view of the past has no running clock
        assert api.view(final["game_id"], 0, at=entry["version"]) == expected


def test_during_play_finished_rounds_are_in_full_for_the_operator_only(api: Api) -> None:
    game_id = api.started("six-nimmt", 2)
    api.play_until(game_id, lambda view: bool(view["fairness"]["revealed_seeds"]))
    audits = {
        who: api.client.get(f"/games/{game_id}/audit", headers=headers).json()
        for who, headers in {
            "spectator": {},
            "player": api.auth(game_id, 0),
            "host": {"Authorization": f"Bearer {api.hosts[game_id]}"},  # a host may also play: no privilege
            "operator": OPERATOR,
        }.items()
    }
    assert audits["host"] == audits["spectator"]

    def first_deal(audit: dict[str, Any]) -> dict[str, Any]:
        events = [e["event"] for r in audit["rounds"] for e in r["events"]]
        return next(e for e in events if e and e["type"] == "cards_dealt")

    assert all(hand is not None for hand in first_deal(audits["operator"])["hands"])
    assert all(hand is None for hand in first_deal(audits["spectator"])["hands"])
    assert [hand is None for hand in first_deal(audits["player"])["hands"]] == [False, True]


@pytest.mark.thorough
def test_the_audit_shows_only_revealed_seeds(api: Api) -> None:
    final = finished(api, "six-nimmt", 3)
    audit = api.client.get(f"/games/{final['game_id']}/audit").json()
    doc = api.client.get(f"/games/{final['game_id']}/export").json()
    text = json.dumps(audit)
    for seed in doc["revealed_seeds"].values():
        assert seed in text


@pytest.mark.thorough
def test_tablestream_verify_checks_an_exported_file_and_names_a_tampered_round(
    api: Api, tmp_path: Path
) -> None:
    final = finished(api, "skull", 3, seed=4)
    doc = api.client.get(f"/games/{final['game_id']}/export").json()
    good = tmp_path / "game.json"
    good.write_text(json.dumps(doc))
    run = subprocess.run(
        [sys.executable, "-m", "services.cli", "verify", str(good)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout + run.stderr
    entry = doc["entries"][len(doc["entries"]) // 2]
    entry["data"] = (
        entry["data"].replace('"seat":1', '"seat":2', 1)
        if '"seat":1' in entry["data"]
        else (entry["data"][:-2] + " }")
    )
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(doc))
    run = subprocess.run(
        [sys.executable, "-m", "services.cli", "verify", str(bad)], capture_output=True, text=True
    )
    assert run.returncode == 1
    assert "round" in run.stdout and "hash chain" in run.stdout


@pytest.mark.thorough
def test_every_receipt_a_player_kept_through_a_game_verifies_against_its_export(api: Api) -> None:
    game_id = api.started("skull", 3)
    rng, kept = random.Random(6), []
    while (view := api.view(game_id))["status"] == "playing":
        for seat in view["to_act"]:
            own = api.view(game_id, seat)
            answer = api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
            if answer.status_code == 200:
                kept.append(answer.json()["receipt"])
    doc = api.client.get(f"/games/{game_id}/export").json()
    assert doc["keys"] == api.client.get("/.well-known/tablestream-keys").json()
    report = verify_with_receipts(doc, kept)
    assert report.ok, report.render()
    assert sum(r.checked.get("receipts", 0) for r in report.rounds.values()) == len(kept) > 5
