"""Tables set up over HTTP, as a script or another device would, for the pages the browser tests then
open: create, join (as a guest or as an account), and seeded bot moves until a condition holds."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from bots import choose
from tests.support.waiting import Deadline, wait_until

PLAY_SECONDS = 120.0  # a deadline against a stuck game; a loaded 2-core machine plays ~20 moves a second


def create(client: httpx.Client, game: str, players: int, options: dict[str, Any]) -> str:
    created = client.post("/games", json={"game": game, "players": players, "options": options})
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    return game_id


def join(client: httpx.Client, game_id: str, name: str | None, account: str | None = None) -> str:
    """Sit down as ``name`` (a guest) or as the account of the ``account`` token; returns the seat token."""
    headers = {"Authorization": f"Bearer {account}"} if account else {}
    joined = client.post(f"/games/{game_id}/players", json={"name": name} if name else {}, headers=headers)
    assert joined.status_code == 201, joined.text
    token: str = joined.json()["token"]
    return token


Stop = Callable[[int, list[dict[str, Any]]], bool]


def play(client: httpx.Client, game_id: str, tokens: list[str], seed: int, stop: Stop) -> None:
    """Seeded bot moves for the seats of ``tokens``, each chosen from its seat's own view, until
    ``stop(moves made, the seats' views)``."""
    rng = random.Random(seed)
    moves = 0
    deadline = Deadline(PLAY_SECONDS)
    while True:
        views = [
            client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {t}"}).json()
            for t in tokens
        ]
        if stop(moves, views):
            return
        assert views[0]["status"] != "finished", f"{game_id} ended before the state was reached"
        assert not deadline.passed(), f"{game_id} did not reach the state"
        movers = [seat for seat, view in enumerate(views) if view["legal"]]
        if not movers:
            # The projection has not shown a seat the last join or move yet: poll again shortly.
            time.sleep(0.05)
            continue
        seat = rng.choice(movers)
        body = {"command_id": uuid.uuid4().hex, "command": choose(views[seat]["game"], views[seat], rng)}
        client.post(
            f"/games/{game_id}/commands", json=body, headers={"Authorization": f"Bearer {tokens[seat]}"}
        )
        moves += 1


def played_by_server_bots(client: httpx.Client, game: str, players: int, options: dict[str, Any]) -> str:
    """A table whose every seat the service's own bots take (the host's request) and play to the
    end, at full speed (no person sits there, so no pace): the quickest finished game of a real
    server. Returns its id once its spectator view says it is finished."""
    created = client.post("/games", json={"game": game, "players": players, "options": options})
    assert created.status_code == 201, created.text
    game_id: str = created.json()["game_id"]
    host = {"Authorization": f"Bearer {created.json()['host_token']}"}
    seated = client.post(f"/games/{game_id}/bots", json={}, headers=host)
    assert seated.status_code == 200, seated.text
    wait_until(
        lambda: client.get(f"/games/{game_id}/view").json()["status"] == "finished",
        PLAY_SECONDS,
        f"the service's bots to finish {game} {game_id}",
    )
    return game_id


def finished(moves: int, views: list[dict[str, Any]]) -> bool:
    return views[0]["status"] == "finished"


def seat_cookie(game_id: str, token: str) -> tuple[str, str]:
    """The browser's cookie for a seat (HttpOnly, set by the server when a browser joins)."""
    return (f"ts_seat_{game_id}", token)
