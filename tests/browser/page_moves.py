"""Seeded moves a browser page sends itself, beside seats moved over HTTP: the page's own moves go
through its web client's ``games.send`` (services/api/static/js/api.js), the path a click takes, so
the page keeps each move's signed receipt as a player's browser does (receipts.js), without the
clicks of a whole game. For tests about what comes after the moves (receipts, disputes), not about
the clicks."""

from __future__ import annotations

import random
import time
import uuid
from typing import Any

import httpx
from playwright.sync_api import Page

from bots import choose
from tests.browser.http_games import PLAY_SECONDS, Stop
from tests.support.waiting import Deadline

# The page's own web client, as loaded by the page (one module instance with the page's own code).
SEND = """async ([id, command, commandId]) => {
  const { games } = await import(new URL("api.js", document.querySelector("script[type=module]").src).href);
  const answer = await games.send(id, command, commandId);
  return answer.version;
}"""


def play_from_page(
    page: Page,
    client: httpx.Client,
    game_id: str,
    tokens: list[str],
    page_seat: int,
    seed: int,
    stop: Stop,
) -> int:
    """Seeded bot moves for the seats of ``tokens`` (each chosen from its seat's own view), until
    ``stop(moves made, the seats' views)``: seat ``page_seat``'s are sent by ``page`` (a page of the
    Tablestream web client sitting at that seat), the others' over HTTP. Returns the page's moves."""
    rng = random.Random(seed)
    moves = sent = 0
    seen = 0  # the version the last move ended at: no move is chosen on a view from before it
    deadline = Deadline(PLAY_SECONDS)
    while True:
        views = [
            client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {t}"}).json()
            for t in tokens
        ]
        movers = [seat for seat, view in enumerate(views) if view["legal"]]
        behind = min(view["version"] for view in views) < seen
        if behind or (not movers and views[0]["status"] != "finished"):
            # The projection has not shown every seat the last move yet, or nobody may move before
            # the service has (a server bot): poll again shortly.
            assert not deadline.passed(), f"{game_id} did not move on after {moves} moves"
            time.sleep(0.05)
            continue
        if stop(moves, views):
            return sent
        assert views[0]["status"] != "finished", f"{game_id} ended before the state was reached"
        assert not deadline.passed(), f"{game_id} did not reach the state after {moves} moves"
        seat = rng.choice(movers)
        command: dict[str, Any] = choose(views[seat]["game"], views[seat], rng)
        if seat == page_seat:
            seen = page.evaluate(SEND, [game_id, command, uuid.uuid4().hex])
            sent += 1
        else:
            body = {"command_id": uuid.uuid4().hex, "command": command}
            answer = client.post(
                f"/games/{game_id}/commands", json=body, headers={"Authorization": f"Bearer {tokens[seat]}"}
            )
            assert answer.status_code == 200, answer.text
            seen = answer.json()["version"]
        moves += 1
