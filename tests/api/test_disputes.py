"""Disputes over HTTP: who may open, add to, read and resolve one, and when its bundle is ready."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from services.cli.demo import play_game
from services.disputes.bundle import verify_bundle
from tests.api.conftest import ADMIN_TOKEN, Api, practice

OPERATOR = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def finished(api: Api, game: str = "six-nimmt", players: int = 3, seed: int = 1) -> str:
    final, tokens = play_game(
        api.client, game, players, random.Random(seed), out=lambda line: None, options=practice(game, seed)
    )
    api.tokens[final["game_id"]] = tokens
    game_id: str = final["game_id"]
    return game_id


def open_dispute(api: Api, game_id: str, headers: dict[str, str], **body: Any) -> Any:
    return api.client.post(f"/games/{game_id}/disputes", json=body, headers=headers)


def error_code(response: Any) -> str:
    code: str = response.json()["error"]["code"]
    return code


@pytest.mark.thorough
def test_a_seated_player_opens_a_dispute_and_reads_it_back(api: Api) -> None:
    game_id = finished(api)
    opened = open_dispute(api, game_id, api.auth(game_id, 1), round=2, text="Round 2's deal looks wrong.")
    assert opened.status_code == 201, opened.text
    record = opened.json()
    assert record["round"] == 2 and record["seat"] == 1 and record["status"] == "open"
    assert record["opened_by"] == {"role": "seat", "seat": 1, "operator": None, "name": None}
    assert record["bundle"] == {"ready": True}
    read = api.client.get(f"/games/{game_id}/disputes/{record['dispute_id']}", headers=api.auth(game_id, 0))
    assert read.status_code == 200 and read.json()["events"][0]["type"] == "dispute_opened"
    listed = api.client.get(f"/games/{game_id}/disputes", headers=OPERATOR).json()["disputes"]
    assert [d["dispute_id"] for d in listed] == [record["dispute_id"]]
    queue = api.client.get("/operator/disputes", headers=OPERATOR).json()["disputes"]
    assert [d["dispute_id"] for d in queue] == [record["dispute_id"]]


@pytest.mark.thorough
def test_a_stranger_can_neither_open_nor_read_a_dispute(api: Api) -> None:
    game_id = finished(api)
    stranger = {"Authorization": "Bearer not-a-token-of-this-game"}
    refused = open_dispute(api, game_id, stranger, round=1, text="I was not even there")
    assert refused.status_code in (401, 403) and error_code(refused) in ("not_a_player", "unauthorized")
    anonymous = open_dispute(api, game_id, {}, round=1, text="no token at all")
    assert anonymous.status_code == 403 and error_code(anonymous) == "not_a_player"
    record = open_dispute(api, game_id, api.auth(game_id, 0), round=1, text="mine").json()
    read = api.client.get(f"/games/{game_id}/disputes/{record['dispute_id']}")
    assert read.status_code == 403 and error_code(read) == "not_a_player"
    bundle = api.client.get(f"/games/{game_id}/disputes/{record['dispute_id']}/bundle")
    assert bundle.status_code == 403


@pytest.mark.thorough
def test_only_an_operator_resolves_and_the_dispute_leaves_the_open_queue(api: Api) -> None:
    game_id = finished(api)
    record = open_dispute(api, game_id, api.auth(game_id, 2), round=1, text="Too many bulls.").json()
    path = f"/games/{game_id}/disputes/{record['dispute_id']}"
    body = {"verdict": "rejected", "reason": "Every check of the bundle passes."}
    by_player = api.client.post(f"{path}/resolve", json=body, headers=api.auth(game_id, 2))
    assert by_player.status_code == 403 and error_code(by_player) == "not_an_operator"
    resolved = api.client.post(f"{path}/resolve", json=body, headers=OPERATOR)
    assert resolved.status_code == 200, resolved.text
    assert resolved.json()["status"] == "resolved" and resolved.json()["verdict"] == "rejected"
    assert resolved.json()["resolved_by"]["operator"] == "admin"
    again = api.client.post(f"{path}/resolve", json=body, headers=OPERATOR)
    assert again.status_code == 409 and error_code(again) == "dispute_resolved"
    late = api.client.post(
        f"{path}/evidence", json={"kind": "note", "content": "late"}, headers=api.auth(game_id, 2)
    )
    assert late.status_code == 409 and error_code(late) == "dispute_resolved"
    assert api.client.get("/operator/disputes", headers=OPERATOR).json()["disputes"] == []


@pytest.mark.thorough
def test_bad_requests_are_named(api: Api) -> None:
    game_id = finished(api)
    auth = api.auth(game_id, 0)
    too_late = open_dispute(api, game_id, auth, round=99, text="round 99")
    assert too_late.status_code == 422 and error_code(too_late) == "invalid_round"
    blank = open_dispute(api, game_id, auth, round=1, text="   ")
    assert blank.status_code == 422
    other_seat = open_dispute(api, game_id, auth, round=1, text="his play", seat=2)
    assert other_seat.status_code == 422 and error_code(other_seat) == "invalid_party"
    missing = api.client.get(f"/games/{game_id}/disputes/0123456789abcdef", headers=auth)
    assert missing.status_code == 404 and error_code(missing) == "dispute_not_found"
    record = open_dispute(api, game_id, auth, round=1, text="mine").json()
    bad = api.client.post(
        f"/games/{game_id}/disputes/{record['dispute_id']}/evidence",
        json={"kind": "receipts", "content": "not json"},
        headers=auth,
    )
    assert bad.status_code == 422 and error_code(bad) == "invalid_evidence"
    assert (
        api.client.get(f"/games/{game_id}/disputes/{record['dispute_id']}", headers=auth).json()["evidence"]
        == 0
    )


@pytest.mark.thorough
def test_disputes_are_bounded_per_player_per_table_in_size_and_never_on_a_waiting_table(api: Api) -> None:
    """A player keeps two disputes open at a table (a third is 409 until an operator's verdict), a
    table holds twenty, a dispute's evidence is bounded in all, and a table that has not begun has
    nothing to dispute; each refusal writes nothing."""
    waiting = api.create("skull", 3)
    api.join(waiting, "Lonely")
    early = open_dispute(api, waiting, api.auth(waiting, 0), text="I created it to flood it")
    assert early.status_code == 409 and error_code(early) == "not_started"

    game_id = finished(api)
    auth = api.auth(game_id, 0)
    first = open_dispute(api, game_id, auth, round=1, text="one").json()
    open_dispute(api, game_id, auth, round=1, text="two")
    third = open_dispute(api, game_id, auth, round=1, text="three")
    assert third.status_code == 409 and error_code(third) == "too_many_disputes"
    path = f"/games/{game_id}/disputes/{first['dispute_id']}"
    resolved = api.client.post(
        f"{path}/resolve", json={"verdict": "rejected", "reason": "ok"}, headers=OPERATOR
    )
    assert resolved.status_code == 200, resolved.text
    assert open_dispute(api, game_id, auth, round=1, text="three again").status_code == 201

    for n in range(17):  # the operator fills the table up to twenty
        assert open_dispute(api, game_id, OPERATOR, round=1, text=f"checked {n}").status_code == 201
    full = open_dispute(api, game_id, api.auth(game_id, 1), round=1, text="one more")
    assert full.status_code == 409 and error_code(full) == "too_many_disputes"
    listed = api.client.get(f"/games/{game_id}/disputes", headers=OPERATOR).json()["disputes"]
    assert len(listed) == 20

    second = listed[1]["dispute_id"]
    note = {"kind": "note", "content": "x" * 60_000}
    added = [
        api.client.post(
            f"/games/{game_id}/disputes/{second}/evidence", json=note, headers=OPERATOR
        ).status_code
        for _ in range(4)
    ]
    assert added == [200, 200, 200, 409]  # 200,000 characters in all


def test_the_bundle_of_a_running_game_waits_and_says_why(api: Api) -> None:
    game_id = api.started("six-nimmt", 3)
    api.play_until(game_id, lambda view: len(view.get("rounds", [])) >= 1 or view["version"] > 40)
    record = open_dispute(api, game_id, api.auth(game_id, 0), round=1, text="Bad deal").json()
    assert record["bundle"]["ready"] is False and record["bundle"]["code"] == "dispute_sealed"
    assert "waits for the end" in record["bundle"]["message"]
    sealed = api.client.get(
        f"/games/{game_id}/disputes/{record['dispute_id']}/bundle", headers=api.auth(game_id, 0)
    )
    assert sealed.status_code == 409 and error_code(sealed) == "dispute_sealed"
    assert "waits for the end" in sealed.json()["error"]["message"]


@pytest.mark.thorough
@pytest.mark.parametrize(("game", "players"), [("six-nimmt", 3), ("skull-king", 2)])
def test_the_bundle_of_a_finished_game_verifies_with_the_players_receipts(
    api: Api, game: str, players: int
) -> None:
    game_id = finished(api, game, players)
    auth = api.auth(game_id, 0)
    record = open_dispute(api, game_id, auth, round=2, text="Check round 2 for me.").json()
    path = f"/games/{game_id}/disputes/{record['dispute_id']}"
    export = api.client.get(f"/games/{game_id}/export").json()
    kept = [{"version": e["version"], "hash": e["hash"]} for e in export["entries"][::7]]
    added = api.client.post(
        f"{path}/evidence", json={"kind": "receipts", "content": json.dumps({"receipts": kept})}, headers=auth
    )
    assert added.status_code == 200, added.text
    response = api.client.get(f"{path}/bundle", headers=auth)
    assert response.status_code == 200, response.text
    assert "attachment" in response.headers["content-disposition"]
    bundle = response.json()
    assert bundle["round"] == 2 and bundle["seat"] == 0 and bundle["receipts"]
    assert bundle["keys"] and bundle["log"]["format"] == "tablestream-log-proofs/1"
    report = verify_bundle(bundle)
    assert report.ok, report.render()
    assert {c.name: c.outcome for c in report.checks}["receipts"] == "passed"
    verdict = api.client.get(f"{path}/verdict", headers=auth).json()
    assert verdict["ok"] is True and [c["name"] for c in verdict["checks"]] == [c.name for c in report.checks]


@pytest.mark.thorough
def test_a_verdict_asked_again_is_given_from_memory_until_the_dispute_or_its_time_moves_on(api: Api) -> None:
    game_id = finished(api)
    auth = api.auth(game_id, 0)
    record = open_dispute(api, game_id, auth, round=1, text="Round 1 again, please.").json()
    path = f"/games/{game_id}/disputes/{record['dispute_id']}"
    verdicts = api.client.app.state.context.verdicts  # type: ignore[attr-defined]
    now = [1000.0]
    verdicts.clock = lambda: now[0]
    before = verdicts.worked_out
    first = api.client.get(f"{path}/verdict", headers=auth).json()
    again = api.client.get(f"{path}/verdict", headers=OPERATOR).json()
    assert again == first and verdicts.worked_out == before + 1
    note = {"kind": "note", "content": "I kept my own notes of round 1."}
    assert api.client.post(f"{path}/evidence", json=note, headers=auth).status_code == 200
    api.client.get(f"{path}/verdict", headers=auth)
    assert verdicts.worked_out == before + 2  # the dispute moved on: worked out anew
    now[0] += verdicts.seconds
    api.client.get(f"{path}/verdict", headers=auth)
    assert verdicts.worked_out == before + 3  # and once its time is up
