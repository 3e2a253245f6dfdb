"""``tablestream serve`` archives finished games under its data directory: its worker pool moves a
finished game out of the embedded Redis into ``<data dir>/archive``, and its API process reads it
from there, with real processes throughout (``services.store.archive``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import redis

from services.cli.demo import play_game
from services.history.verify import verify_export
from services.store.keys import game_keys
from tests.api.conftest import practice
from tests.support.serving import DEADLINE, ENV, serving
from tests.support.waiting import wait_until

pytestmark = pytest.mark.redis


def test_serve_moves_a_finished_game_into_its_data_directory_s_archive_and_still_serves_it(
    tmp_path: Path,
) -> None:
    env = {
        **ENV,
        "TABLESTREAM_ARCHIVE_AFTER_HOURS": "0",  # archived at the first pass after its finish
        "TABLESTREAM_ARCHIVE_INTERVAL_SECONDS": "0.2",
    }
    env.pop("TABLESTREAM_ARCHIVE_DIR", None)
    with serving(tmp_path, env) as (client, redis_url, _process):
        options = practice("high-card", 1)
        final, _ = play_game(client, "high-card", 3, random.Random(1), lambda _: None, options)
        game_id = final["game_id"]
        export = client.get(f"/games/{game_id}/export")
        assert export.status_code == 200
        archive = tmp_path / "archive"
        wait_until(lambda: any(archive.glob("*/*.tsa")), DEADLINE, "the game's archive file")
        store = redis.Redis.from_url(redis_url)
        try:
            wait_until(lambda: not store.exists(game_keys(game_id).events), DEADLINE, "the game out of Redis")
        finally:
            store.close()
        again = client.get(f"/games/{game_id}/export")
        assert again.status_code == 200  # the public log may have signed its heads meanwhile:
        assert again.json()["entries"] == export.json()["entries"]  # the game is the same
        assert verify_export(again.json()).ok
        assert client.get(f"/games/{game_id}/replay").status_code == 200
