"""The operator's console in the browser, its searches and lists: an operator finds players by the
beginning of their name, pages the list with "Show more", opens a player's card and follows a
recent game to its replay - with no serious axe finding, on a desktop and on a phone. A player
without operator rights who opens the console is told how to get in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from tests.browser import axe
from tests.browser.conftest import Server
from tests.browser.http_games import PLAY_SECONDS, create, finished, join, play
from tests.browser.play import player, register
from tests.browser.test_operator import PHONE, grant, no_sideways_scroll, serious
from tests.support.waiting import wait_until

pytestmark = pytest.mark.browser

QUILLS = [f"Quill {n:02d}" for n in range(1, 13)]  # twelve: a page of ten, then two more


def registered(client: httpx.Client, name: str) -> dict[str, Any]:
    answer = client.post("/accounts", json={"name": name})
    assert answer.status_code == 201, answer.text
    account: dict[str, Any] = answer.json()
    return account


def rated_game(client: httpx.Client, tokens: list[str], seed: int) -> str:
    """A one-round 6 nimmt! game of these accounts, played to the end by seeded bots over HTTP."""
    game_id = create(client, "six-nimmt", len(tokens), {"rounds": 1})
    seats = [join(client, game_id, None, account=token) for token in tokens]
    play(client, game_id, seats, seed, finished)
    return game_id


def test_an_operator_finds_players_by_prefix_pages_them_and_opens_a_card_with_recent_games(
    server: Server, browser, screenshots: Path
) -> None:
    olga = player(browser, server.url)
    register(olga, "Olga Console", password="watchful eyes")
    grant(server, "Olga Console")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        accounts = {name: registered(client, name) for name in QUILLS}
        rival = registered(client, "Rita Rival")
        game_id = rated_game(client, [accounts["Quill 03"]["token"], rival["token"]], seed=3)
        history = f"/accounts/{accounts['Quill 03']['account_id']}/history"
        wait_until(
            lambda: client.get(history).json()["total"] == 1, PLAY_SECONDS, "the finished game in the history"
        )

    olga.goto("/operator")
    expect(olga.locator("[data-testid=op-me]")).to_contain_text("Olga Console")

    # the beginning of a name, in any case, by keyboard: "Find player" then the first page of ten
    olga.fill("#op-query", "qUIL")
    olga.locator("[data-testid=op-find-player]").focus()
    olga.keyboard.press("Enter")
    found = olga.locator("[data-testid=op-player-found]")
    expect(found).to_have_count(10)
    expect(found.locator("[data-testid=op-open-player]")).to_have_text(QUILLS[:10])
    expect(found.first.locator("[data-testid=op-match]")).to_have_text("begins with this")
    olga.screenshot(path=screenshots / "operator-console-players.png", full_page=True)

    # "Show more" adds the last two and takes the focus to the first of them; no more button after
    more = olga.locator("[data-testid=op-players-more]")
    more.focus()
    olga.keyboard.press("Enter")
    expect(found).to_have_count(12)
    expect(found.nth(10)).to_be_focused()
    expect(found.locator("[data-testid=op-open-player]")).to_have_text(QUILLS)
    expect(more).to_have_count(0)

    # the card of Quill 03: its finished game, linked to the replay
    found.filter(has_text="Quill 03").locator("[data-testid=op-open-player]").click()
    card = olga.locator("[data-testid=op-player]")
    expect(card).to_contain_text("Quill 03")
    expect(card).to_contain_text("Finished games: 1")
    game = card.locator(f"[data-testid=op-recent-game][data-game-id='{game_id}']")
    expect(game).to_contain_text("6 nimmt!")
    expect(game).to_contain_text("of 2")
    olga.screenshot(path=screenshots / "operator-console-card.png", full_page=True)
    found_now = serious(olga)
    assert found_now == [], axe.describe(found_now)

    olga.set_viewport_size(PHONE)
    expect(card).to_be_visible()
    assert no_sideways_scroll(olga)
    found_now = serious(olga)
    assert found_now == [], axe.describe(found_now)
    olga.screenshot(path=screenshots / "operator-console-card-phone.png", full_page=True)

    # back to the list, then the replay of the game
    olga.set_viewport_size({"width": 1280, "height": 900})
    card.locator("[data-testid=op-back]").click()
    expect(found).to_have_count(12)
    found.filter(has_text="Quill 03").locator("[data-testid=op-open-player]").click()
    card.locator("[data-testid=op-replay-link]").click()
    expect(olga).to_have_url(f"{server.url}/replay/{game_id}")


def test_a_player_without_operator_rights_is_told_how_to_get_into_the_console(
    server: Server, browser, screenshots: Path
) -> None:
    paul = player(browser, server.url)
    register(paul, "Plain Paula")

    answer = paul.goto("/operator")

    assert answer is not None and answer.status == 403
    refused = paul.locator("[data-testid=op-refused]")
    expect(refused).to_contain_text("This page needs operator rights")
    expect(refused).to_contain_text("Log in in the lobby")
    assert "not_an_operator" not in paul.content()
    paul.screenshot(path=screenshots / "operator-refused.png", full_page=True)
    found = serious(paul)
    assert found == [], axe.describe(found)
    refused.locator("[data-testid=op-login-link]").click()
    expect(paul).to_have_url(f"{server.url}/")
