"""Quick play in Chromium: two people press "Play now" for a 2-player game and land at the same
table; the waiting screen says what it waits for and for how long, cancels, offers bots after the
wait, and passes axe-core's checks on a phone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser import axe
from tests.browser.conftest import Server
from tests.browser.play import player
from tests.browser.watch import game_id, read
from tests.support.waiting import ms

pytestmark = pytest.mark.browser
SEATED_SECONDS = 25  # the matcher runs every 0.5 s; a loaded machine may take a while


def press_play_now(
    page: Page,
    name: str,
    game: str,
    players: int,
    bots: bool = False,
    check_axe: bool = False,
    waits: bool = True,
) -> None:
    """Press "Play now" from the lobby; ``waits``: the waiting screen shows (the first of a match
    waits for the matcher; the last may be seated at its next pass, before that screen is seen)."""
    page.goto("/")
    expect(page.locator(f"[data-testid=qp-play-{game}]")).to_be_visible()
    if check_axe:  # the lobby with its "Play now" panel
        found = axe.blocking(axe.violations(page))
        assert not found, axe.describe(found)
    page.fill("#qp-name", name)
    page.select_option(f"[data-testid=qp-players-{game}]", str(players))
    if bots:
        page.check("[data-testid=qp-bots]")
    page.click(f"[data-testid=qp-play-{game}]")
    if waits:
        expect(page.locator("[data-testid=qp-waiting]")).to_be_visible()


def test_two_players_pressing_play_now_land_at_the_same_table(
    server: Server, browser, screenshots: Path
) -> None:
    desk = player(browser, server.url)
    phone = player(browser, server.url, width=390, height=844)
    desk.goto("/")
    desk.locator("[data-testid=quickplay]").screenshot(path=str(screenshots / "quick-play-lobby.png"))
    press_play_now(desk, "Ada", "six-nimmt", 2, check_axe=True)
    expect(desk.locator("[data-testid=qp-what]")).to_have_text("6 nimmt! · 2 players")
    press_play_now(phone, "Brook", "six-nimmt", 2, check_axe=True, waits=False)  # seated at once, or soon
    for page in (desk, phone):
        page.wait_for_url("**/tables/*", timeout=ms(SEATED_SECONDS))
    assert game_id(desk) == game_id(phone)
    view = read(desk, f"/games/{game_id(desk)}/view")
    assert sorted(p["name"] for p in view["players"]) == ["Ada", "Brook"]
    assert view["status"] == "playing" and not any(p.get("bot") for p in view["players"])
    seats = {read(page, f"/games/{game_id(page)}/view")["seat"] for page in (desk, phone)}
    assert seats == {0, 1}  # each sits in a seat of their own (the seat cookie came with the ticket)
    for page in (desk, phone):
        page.context.close()


def test_the_waiting_screen_counts_the_wait_cancels_and_offers_bots_after_the_bound(
    server: Server, browser, screenshots: Path
) -> None:
    page = player(browser, server.url, width=390, height=844)
    press_play_now(page, "Cleo", "skull", 5)
    expect(page.locator("[data-testid=qp-what]")).to_have_text("Skull · 5 players")
    expect(page.locator("[data-testid=qp-status]")).to_have_text("Number 1 in the queue")
    # the clock counts on: two seconds or more shown (a loaded page may draw 0:01, then 0:03: CI36)
    expect(page.locator("[data-testid=qp-waited]")).to_contain_text(
        re.compile(r"0:(0[2-9]|[1-5]\d)"), timeout=ms(10)
    )
    assert "usually under 30 s" in page.inner_text("[data-testid=qp-waited]")
    found = axe.blocking(axe.violations(page))
    assert not found, axe.describe(found)
    page.screenshot(path=str(screenshots / "quick-play-waiting.png"))

    page.keyboard.press("Escape")  # Escape cancels, as the Cancel button does
    expect(page.locator("[data-testid=qp-waiting]")).to_have_count(0)
    assert page.evaluate("() => localStorage.getItem('tablestream.quickplay')") in (None, "null")

    press_play_now(page, "Cleo", "skull", 5)  # no one else: after the bound, bots are offered
    accept = page.locator("[data-testid=qp-accept-bots]")
    expect(accept).to_be_visible(timeout=ms(45))
    accept.click()
    page.wait_for_url("**/tables/*", timeout=ms(SEATED_SECONDS))
    view = read(page, f"/games/{game_id(page)}/view")
    assert [p["name"] for p in view["players"] if not p.get("bot")] == ["Cleo"]
    assert len(view["players"]) == 5 and view["status"] == "playing"
    page.context.close()
