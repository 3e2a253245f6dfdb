"""Tables set up over HTTP, as a script or another device would, for the pages the browser tests then
open: create, join (as a guest or as an account), and seeded bot moves until a condition holds."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from tests.support.waiting import Deadline
from workers.bots import choose

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


def finished(moves: int, views: list[dict[str, Any]]) -> bool:
    return views[0]["status"] == "finished"


def seat_cookie(game_id: str, token: str) -> tuple[str, str]:
    """The browser's cookie for a seat (HttpOnly, set by the server when a browser joins)."""
    return (f"ts_seat_{game_id}", token)
