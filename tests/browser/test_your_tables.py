"""'Your tables' in a real Chromium: a player seated at several tables sees the one awaiting their
move first, the header counts it, and the tab's title changes when a table comes to await them
(pushed by GET /me/live: no polling). The tables are set up over HTTP as other players' devices
would; the browser holds the player's seats as its own cookies. Screenshots on a desktop and a phone,
and axe-core finds nothing serious on either."""

from __future__ import annotations

import random
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from bots import choose
from tests.browser import axe
from tests.browser.conftest import Server
from tests.browser.http_games import create, join, seat_cookie
from tests.browser.play import MOVE_SECONDS, POLL_MS, lobby, player
from tests.support.waiting import ms, wait_until

pytestmark = pytest.mark.browser

DAY = 86_400
SEED = 23  # the others' moves: replayable
PREFIXED = "() => /^\\(\\d+\\) /.test(document.title)"
PLAIN = "() => !/^\\(\\d+\\) /.test(document.title)"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def view(client: httpx.Client, game_id: str, token: str) -> dict[str, Any]:
    answer: dict[str, Any] = client.get(f"/games/{game_id}/view", headers=bearer(token)).json()
    return answer


def move(client: httpx.Client, game_id: str, token: str, rng: random.Random) -> None:
    """One move of the token's seat, once its view offers one (projections may lag a moment)."""
    wait_until(lambda: bool(view(client, game_id, token)["legal"]), MOVE_SECONDS, "a move to be offered")
    seen = view(client, game_id, token)
    body = {"command_id": uuid.uuid4().hex, "command": choose(seen["game"], seen, rng)}
    sent = client.post(f"/games/{game_id}/commands", json=body, headers=bearer(token))
    assert sent.status_code == 200, sent.text


def others_until_awaited(client: httpx.Client, game_id: str, tokens: list[str], rng: random.Random) -> None:
    """The other seats play until the game awaits seat 0 (``tokens[0]``) again."""
    deadline = time.monotonic() + MOVE_SECONDS * 4
    while 0 not in view(client, game_id, tokens[0])["to_act"]:
        assert time.monotonic() < deadline, "seat 0 was never awaited again"
        for token in tokens[1:]:
            if view(client, game_id, token)["legal"]:
                move(client, game_id, token, rng)


def table(client: httpx.Client, players: int, seated: int, **options: Any) -> tuple[str, list[str]]:
    game_id = create(client, "six-nimmt", players, {"turn_based": True, **options})
    names = ["Ada", "Bea", "Cem", "Dan"][:seated]
    return game_id, [join(client, game_id, name) for name in names]


def ada(browser: Any, server: Server, seats: dict[str, str], width: int, height: int) -> Page:
    page = player(browser, server.url, width=width, height=height)
    page.context.add_cookies(
        [
            {"name": name, "value": value, "url": server.url}
            for name, value in (seat_cookie(game_id, token) for game_id, token in seats.items())
        ]
    )
    return page


def rows(page: Page) -> list[tuple[str, str]]:
    found = page.locator("[data-testid=my-table]")
    return [
        (found.nth(i).get_attribute("data-game-id") or "", found.nth(i).get_attribute("data-awaiting") or "")
        for i in range(found.count())
    ]


def test_a_player_at_two_tables_sees_the_awaiting_one_first_and_the_title_says_when_one_awaits(
    server: Server, browser: Any, screenshots: Path
) -> None:
    rng = random.Random(SEED)
    with httpx.Client(base_url=server.url, timeout=30) as client:
        moved, moved_tokens = table(client, 3, 3, turn_seconds=DAY, rounds=1)
        awaiting, awaiting_tokens = table(client, 3, 3, turn_seconds=3 * DAY, rounds=1)
        filling, filling_tokens = table(client, 4, 1)
        move(client, moved, moved_tokens[0], rng)  # Ada chose her card here: the others are awaited
        seats = {moved: moved_tokens[0], awaiting: awaiting_tokens[0], filling: filling_tokens[0]}

        page = ada(browser, server, seats, 1280, 900)
        page.goto("/your-tables")
        wait_until(lambda: [r[0] for r in rows(page)] == [awaiting, moved, filling], MOVE_SECONDS, "the list")
        assert rows(page)[0] == (awaiting, "true") and rows(page)[1] == (moved, "false")
        first = page.locator("[data-testid=my-table]").first
        expect(first).to_contain_text("Your move")
        expect(first).to_contain_text("with Bea, Cem")
        expect(first.locator("[data-testid=time-left]")).to_contain_text(" d ")
        expect(page.locator("[data-testid=your-tables-count]")).to_have_text("1")
        page.wait_for_function(PREFIXED, polling=POLL_MS)
        assert page.title().startswith("(1) Your move"), page.title()
        page.screenshot(path=screenshots / "your-tables.png", full_page=True)
        assert axe.blocking(axe.violations(page)) == []

        phone = ada(browser, server, seats, 390, 844)
        phone.goto("/your-tables")
        wait_until(lambda: len(rows(phone)) == 3, MOVE_SECONDS, "the list on the phone")
        phone.screenshot(path=screenshots / "your-tables-phone.png", full_page=True)
        assert axe.blocking(axe.violations(phone)) == []
        phone.context.close()

        move(client, awaiting, awaiting_tokens[0], rng)  # no table awaits Ada now
        page.wait_for_function(PLAIN, polling=POLL_MS)
        expect(page.locator("[data-testid=your-tables-count]")).to_be_hidden()
        assert all(awaited == "false" for _, awaited in rows(page))

        page.goto("/")  # any page of the site: the lobby
        others_until_awaited(client, moved, moved_tokens, rng)
        page.wait_for_function(PREFIXED, timeout=ms(MOVE_SECONDS), polling=POLL_MS)
        assert page.title().startswith("(1) "), page.title()
        expect(page.locator("[data-testid=your-tables-count]")).to_have_text("1")
        page.click("[data-testid=your-tables-link]")
        wait_until(lambda: rows(page)[:1] == [(moved, "true")], MOVE_SECONDS, "the awaited table first")
        page.context.close()


def test_the_lobby_creates_a_turn_based_table_with_a_time_per_move_in_words_and_lists_it_as_such(
    server: Server, browser: Any
) -> None:
    page = player(browser, server.url)
    page.goto("/")
    page.locator("[data-testid=create-form]").get_by_text("Skull", exact=True).first.click()
    page.fill("#name", "Ada")
    page.check("#opt-turn_based")  # in sight, beside the player count
    page.click("details.options summary")
    durations = page.locator("#opt-turn_seconds option")
    assert durations.all_inner_texts() == ["1 hour", "12 hours", "1 day", "3 days", "7 days"]
    page.select_option("#opt-turn_seconds", label="3 days")
    page.click("[data-testid=create]")
    page.wait_for_url("**/tables/*")
    game_id = page.url.rsplit("/", 1)[1]
    events = page.request.get(f"/games/{game_id}/events").json()["events"]
    timers = next(e for e in events if e["type"] == "table_timers_set")
    assert timers["turn_based"] and timers["turn_seconds"] == 3 * DAY and timers["expire_minutes"] == 24 * 60
    watcher = player(browser, server.url)
    watcher.goto("/")
    row = watcher.locator(f"[data-testid=tables] li[data-game-id='{game_id}']")
    expect(row.locator("[data-testid=turn-based]")).to_have_text("turn-based")
    for opened in (page, watcher):
        opened.context.close()


def test_an_account_seat_taken_elsewhere_is_played_on_the_phone_after_logging_in(
    server: Server, browser: Any
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        registered = client.post("/accounts", json={"name": "Nia Vale", "password": "turn based pace"})
        assert registered.status_code == 201, registered.text
        game_id = create(client, "six-nimmt", 3, {"turn_based": True, "turn_seconds": DAY})
        join(client, game_id, None, account=registered.json()["token"])  # on another device
        join(client, game_id, "Bea")
        join(client, game_id, "Cem")
    phone = player(browser, server.url, width=390, height=844)
    lobby(phone)
    phone.click("[data-testid=account-login]")
    expect(phone.locator("[data-testid=login-form]")).to_be_visible()
    phone.fill("#account-name", "Nia Vale")
    phone.fill("#account-password", "turn based pace")
    phone.click("[data-testid=login-submit]")
    expect(phone.locator("[data-testid=signed-in]")).to_contain_text("Nia Vale")
    expect(phone.locator("[data-testid=your-tables-count]")).to_have_text("1")
    phone.click("[data-testid=your-tables-link]")
    row = phone.locator(f"[data-testid=my-table][data-game-id='{game_id}']")
    expect(row).to_have_attribute("data-awaiting", "true")
    row.locator("[data-testid=play-here]").click()
    phone.wait_for_url(f"**/tables/{game_id}")
    phone.wait_for_selector("[data-testid=table][data-seat='0']")
    seen = phone.request.get(f"/games/{game_id}/view").json()
    assert seen["seat"] == 0 and seen["legal"], seen
    # the day-long clock reads in hours and minutes, not in tens of thousands of seconds
    expect(phone.locator("text=/23 h \\d+ min left/").first).to_be_visible()
    phone.context.close()
