"""Salts (stored format 2) over HTTP: no answer shows one while the game runs; the export of a
finished game holds every one, and it verifies offline."""

from __future__ import annotations

import random

import pytest

from bots import choose
from domain.games import game_names
from services.history.records import decode_stored
from services.history.verify import verify_export
from services.store.keys import game_keys
from tests.api.conftest import ADMIN_TOKEN, Api, practice

OPERATOR = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def stored_salts(api: Api, game_id: str) -> list[str]:
    entries = api.sync.xrange(game_keys(game_id).events)
    salts = [decode_stored(fields[b"d"]).salt for _, fields in entries]
    assert all(salt is not None for salt in salts)
    return [salt for salt in salts if salt is not None]


@pytest.mark.thorough
def test_no_answer_during_play_shows_a_salt_and_the_finished_export_shows_them_all(fake_api: Api) -> None:
    for game in game_names():
        game_id = fake_api.started(game, 3, **practice(game, 3))
        rng = random.Random(3)
        answers: list[str] = []
        for _ in range(12):
            view = fake_api.view(game_id)
            if view["status"] != "playing":
                break
            seat = view["to_act"][0]
            own = fake_api.view(game_id, seat)
            response = fake_api.send(game_id, seat, choose(own["game"], own, rng))
            assert response.status_code == 200, response.text
            answers.append(response.text)
        for headers in [fake_api.auth(game_id, s) for s in range(3)] + [OPERATOR, {}]:
            for path in ("events?limit=1000", "audit", "view", "scores", "export"):
                answers.append(fake_api.client.get(f"/games/{game_id}/{path}", headers=headers).text)
        salts = stored_salts(fake_api, game_id)
        leaked = [salt for salt in salts if any(salt in answer for answer in answers)]
        assert leaked == [], game
        fake_api.play_until(game_id, lambda view: view["status"] == "finished", seed=3)
        export = fake_api.client.get(f"/games/{game_id}/export").json()
        assert [decode_stored(e["data"].encode()).salt for e in export["entries"]] == stored_salts(
            fake_api, game_id
        )
        assert verify_export(export).ok
