"""Creating and joining in Chromium when the answer is lost on its way back: the page sends the
request again with the same Idempotency-Key and gets the first try's table or seat, never a second."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Route

from tests.browser.conftest import Server
from tests.browser.play import create_table, join_table
from tests.browser.watch import read, watcher

pytestmark = pytest.mark.browser


class LoseFirstAnswer:
    """Forwards every POST to the server and throws away the answer of the first: the server did the
    work (created the table, took the seat), the page sees a dropped connection."""

    def __init__(self) -> None:
        self.keys: list[str | None] = []
        self.lost: dict[str, Any] = {}  # the answer the page never got

    def __call__(self, route: Route) -> None:
        if route.request.method != "POST":
            route.continue_()
            return
        self.keys.append(route.request.headers.get("idempotency-key"))
        if len(self.keys) == 1:
            answer = route.fetch()
            assert answer.status == 201, answer.text()
            self.lost = answer.json()
            route.abort("connectionreset")
        else:
            route.continue_()

    def sent_twice_with_one_key(self) -> bool:
        return len(self.keys) == 2 and bool(self.keys[0]) and self.keys[0] == self.keys[1]


def test_a_join_whose_answer_was_lost_is_sent_again_and_gets_the_same_seat(server: Server, browser) -> None:
    host = watcher(browser, server.url)
    guest = watcher(browser, server.url)
    table = create_table(host, "Skull", "Ada", 3)
    lose = LoseFirstAnswer()
    guest.route(f"**/games/{table}/players", lose)
    join_table(guest, table, "Brook")

    assert lose.sent_twice_with_one_key(), lose.keys
    assert guest.get_attribute("[data-testid=table]", "data-seat") == str(lose.lost["seat"]) == "1"
    joined = [
        e for e in read(host, f"/games/{table}/events?after=0")["events"] if e["type"] == "player_joined"
    ]
    assert [e["seat"] for e in joined] == [0, 1], joined  # Ada and Brook: the retry seated nobody again


def test_a_create_whose_answer_was_lost_is_sent_again_and_gets_the_same_table(
    server: Server, browser
) -> None:
    page = watcher(browser, server.url)
    lose = LoseFirstAnswer()
    page.route("**/games", lose)
    table = create_table(page, "Skull King", "Ada", 2)

    assert lose.sent_twice_with_one_key(), lose.keys
    assert table == lose.lost["game_id"]  # the table the lost answer named, and the page is its host
    assert page.get_attribute("[data-testid=table]", "data-seat") == "0"
