"""Backups taken while games are played: ``export-all`` of a live ``tablestream serve`` whose bots
play tables of every registered game at full speed, three times in the middle of play, and each
backup checked whole by ``import-all --check`` on an empty Redis. The check verifies every game the
way a restore does (a running game's unrevealed rounds drawn with its own secret): none may be
refused, whatever point of whichever game the snapshot caught (an operator's drill found one running
game in 85 refused, by a check that decided from stand-in seeds)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from domain.games import game_names, spec
from services.store.embedded import EmbeddedRedis
from tests.support.serving import serving, tablestream_here
from tests.support.waiting import wait_until

TABLES_PER_SIZE = 1
"""Tables of each game at each of its fewest and most seats (no person sits there: the bots play at
full speed, so the snapshots catch them at many points)."""


@pytest.mark.soak(
    reason="plays tables of every game on a real serve and backs it up three times (half a minute)"
)
def test_backups_taken_in_the_middle_of_play_verify_whole_with_none_refused(tmp_path: Path) -> None:
    backups = tmp_path / "backups"
    with serving(tmp_path / "data") as (client, redis_url, _process):
        tables = []
        for game in game_names():
            for players in sorted({spec(game).min_players, spec(game).max_players}):
                for _ in range(TABLES_PER_SIZE):
                    created = client.post("/games", json={"game": game, "players": players})
                    assert created.status_code == 201, created.text
                    host = {"Authorization": f"Bearer {created.json()['host_token']}"}
                    seated = client.post(  # easy bots: the states are the point, not the play's strength
                        f"/games/{created.json()['game_id']}/bots", json={"level": "easy"}, headers=host
                    )
                    assert seated.status_code == 200, seated.text
                    tables.append(created.json()["game_id"])

        def statuses() -> list[str]:
            return [client.get(f"/games/{game_id}/view").json()["status"] for game_id in tables]

        exported = []
        for share in (0, 0.125, 0.25):  # at once, then as one table in eight and a quarter have finished
            wait_until(
                lambda share=share: statuses().count("finished") >= share * len(tables),
                120,
                f"{share:.0%} of the tables to finish",
            )
            made = tablestream_here("export-all", f"{backups}/", "--redis-url", redis_url)
            assert made.returncode == 0, made.stderr
            exported.append(made.stdout)
        running = [
            int(m.group(1)) - int(m.group(2))
            for out in exported
            if (m := re.search(r"exported (\d+) games \((\d+) finished\)", out))
        ]
        assert len(running) == 3 and all(n > 0 for n in running[:1]), exported

    files = sorted(backups.iterdir())
    assert len(files) == 3
    with EmbeddedRedis(tmp_path / "empty") as empty:
        for backup in files:
            checked = tablestream_here("import-all", "--check", str(backup), "--redis-url", empty.url)
            assert checked.returncode == 0, f"{backup.name} refused:\n{checked.stdout}{checked.stderr}"
            assert f"{len(tables)} games" in checked.stdout, checked.stdout
