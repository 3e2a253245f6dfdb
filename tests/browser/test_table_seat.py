"""Your seat at the table, in Chromium: the tab's title says when it is your move, a warning comes
before the timer runs out, a bot that took your seat over says so (and gives it back), and leaving
asks first."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from services.history.verify import verify_export
from tests.browser.conftest import Server
from tests.browser.play import (
    ACTIONS,
    MOVE_SECONDS,
    POLL_MS,
    create_table,
    fill_with_bots,
    finished,
    join_table,
    play,
    status,
    version,
    wait_until,
)
from tests.browser.watch import game_id, read, watcher
from tests.support.waiting import ms

pytestmark = pytest.mark.browser

AWAITED = "() => document.title.startsWith('▶')"


def seat_view(page: Page) -> dict[str, Any]:
    return read(page, f"/games/{game_id(page)}/view")  # type: ignore[no-any-return]


def test_the_tab_title_says_your_move_while_you_are_awaited_and_goes_back_after_it(
    server: Server, browser
) -> None:
    host = watcher(browser, server.url)
    guest = watcher(browser, server.url)
    table = create_table(host, "Skull King", "Ada", 2)
    join_table(guest, table, "Brook")
    host.wait_for_function(AWAITED, polling=POLL_MS)  # both bid at once: both are awaited
    guest.wait_for_function(AWAITED, polling=POLL_MS)
    assert "Your move" in host.title() and "Skull King" in host.title()

    host.locator(f"{ACTIONS}[data-act=bid]").first.click()
    host.wait_for_function("() => document.title === 'Skull King · Tablestream'", polling=POLL_MS)
    assert guest.title().startswith("▶"), guest.title()  # Brook's bid is still awaited
    guest.locator(f"{ACTIONS}[data-act=bid]").first.click()
    wait_until(lambda: seat_view(host)["phase"] == "playing", 15, "the bids to be revealed")
    leader = seat_view(host)["to_act"]
    assert len(leader) == 1
    awaited, idle = (host, guest) if leader == [0] else (guest, host)
    awaited.wait_for_function(AWAITED, polling=POLL_MS)  # the leader of the first trick is awaited again
    idle.wait_for_function("() => document.title === 'Skull King · Tablestream'", polling=POLL_MS)
    for page in (host, guest):
        page.context.close()


def test_a_warning_shows_before_the_turn_timer_runs_out_and_goes_once_the_move_is_played(
    server: Server, browser
) -> None:
    page = watcher(browser, server.url, speed="instant")
    create_table(page, "6 nimmt!", "Ada", 2, rounds=1, turn_seconds=12)  # warned at 6 s left
    fill_with_bots(page)
    page.wait_for_function(AWAITED, polling=POLL_MS)
    before = version(page)
    warning = page.locator("[data-testid=time-warning]")
    expect(warning).to_be_visible(timeout=ms(15))
    awaited = seat_view(page)
    assert 0 in awaited["to_act"] and awaited["phase"] == "selecting"  # warned before the timeout came
    assert "⏰" in page.title()
    assert "almost up" in warning.inner_text()
    left = int(page.inner_text("[data-testid=time-warning] .warn-count").split()[1])
    assert 0 <= left <= 6
    # Nobody moves: the timer plays the seat's card, a new turn begins and the warning goes.
    page.wait_for_function(
        "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v",
        arg=before + 2,
        timeout=ms(20),
        polling=POLL_MS,
    )
    expect(warning).to_be_hidden(timeout=ms(10))
    events = read(page, f"/games/{game_id(page)}/events?after={before}")["events"]
    assert any(event["by"] == "timeout" for event in events), events
    page.context.close()


def test_a_seat_taken_over_after_a_timeout_shows_the_banner_with_controls_off_and_comes_back_verified(
    server: Server, browser, screenshots: Path
) -> None:
    page = watcher(browser, server.url, speed="instant")
    # The bots wait their pace while Ada may take her seat back (services.table.lifecycle.bot_delay_ms): two
    # rounds at 1 s a bot move are 40 s at the least before the game could end without her, however
    # slow the page is meanwhile.
    table = create_table(
        page, "6 nimmt!", "Ada", 2, rounds=2, turn_seconds=5, takeover_after=1, bot_pace_ms=1000
    )
    fill_with_bots(page)
    banner = page.locator("[data-testid=takeover-banner]")
    expect(banner).to_be_visible(timeout=ms(20))  # one missed turn of 5 s: a bot plays the seat
    assert banner.get_attribute("data-reason") == "timeouts"
    assert "A bot is playing for you" in banner.inner_text()
    assert page.locator(ACTIONS).count() == 0
    assert page.locator("[data-testid=table] .board .hand button:disabled").count() > 0  # shown, off
    assert seat_view(page)["players"][0]["takeover"] == "timeouts"
    page.screenshot(path=screenshots / "takeover-banner.png")

    page.click("[data-testid=reclaim]")
    expect(page.locator("#toast.show.ok")).to_have_text("Your seat is yours again.")
    expect(banner).to_have_count(0, timeout=ms(10))
    assert seat_view(page)["players"][0]["takeover"] is None
    page.wait_for_selector(ACTIONS, timeout=ms(20))  # the seat's controls are back on its next turn
    play([page], random.Random(5), finished([page]), seconds=120)

    with httpx.Client(base_url=server.url) as client:
        # The whole game on one page: the default page of 100 ends before the reclaim when the bot
        # played many turns for the seat on a slow machine.
        body = client.get(f"/games/{table}/events", params={"limit": 1000}).json()
        events = body["events"]
        assert len(events) == body["version"]  # every event of the game is on this page
        assert [e["seat"] for e in events if e["type"] == "seat_reclaimed"] == [0]
        report = verify_export(client.get(f"/games/{table}/export").json())
    assert report.ok, report
    page.context.close()


def test_leaving_asks_first_cancelled_leaves_nothing_and_confirmed_hands_the_seat_to_a_bot(
    server: Server, browser, screenshots: Path
) -> None:
    page = watcher(browser, server.url, speed="instant")
    create_table(page, "Skull King", "Ada", 2)
    fill_with_bots(page)
    leave = page.locator("[data-testid=leave]")
    dialog = page.locator("[data-testid=leave-dialog]")

    leave.click()
    expect(dialog).to_be_visible()
    assert page.evaluate("document.activeElement.dataset.testid") == "leave-cancel"
    assert "cannot come back" in dialog.inner_text()
    page.screenshot(path=screenshots / "leave-dialog.png")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.testid") == "leave"
    leave.click()
    page.click("[data-testid=leave-cancel]")
    expect(dialog).to_be_hidden()
    me = seat_view(page)["players"][0]
    assert not me["left"] and me["takeover"] is None
    events = read(page, f"/games/{game_id(page)}/events")["events"]
    assert not any(event["type"] == "seat_left" for event in events)

    leave.click()
    page.click("[data-testid=leave-confirm]")
    banner = page.locator("[data-testid=takeover-banner]")
    expect(banner).to_have_attribute("data-reason", "left", timeout=ms(10))
    assert page.locator("[data-testid=reclaim]").count() == 0  # a seat that was left stays the bot's
    page.wait_for_selector("[data-testid=table][data-seat='']")  # its token is gone: the page watches
    expect(page.locator("[data-testid=watching]")).to_be_visible()
    # A spectator's view is the projection's, which may be a little behind the live stream the page
    # drew from: wait for it to reach the version the page shows before reading it.
    shown = version(page)
    wait_until(lambda: seat_view(page)["version"] >= shown, MOVE_SECONDS, "the spectator view to catch up")
    view = seat_view(page)
    assert view["seat"] is None
    assert view["players"][0]["left"] and view["players"][0]["takeover"] == "left"
    expect(leave).to_be_hidden()
    assert page.locator(ACTIONS).count() == 0
    page.context.close()


def test_the_host_seats_a_strong_bot_then_fills_the_rest_with_easy_ones_and_the_badges_say_so(
    server: Server, browser: Any, screenshots: Path
) -> None:
    page = watcher(browser, server.url, speed="instant")
    create_table(page, "6 nimmt!", "Ada", 4)
    level = page.locator("[data-testid=fill-bots-level]")
    expect(level).to_have_value("normal")
    level.select_option("strong")
    page.set_viewport_size({"width": 390, "height": 844})
    page.locator("section.waiting").screenshot(path=screenshots / "bot-level-choice.png")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.click("[data-testid=add-bot]")
    badges = page.locator("[data-testid=bot-badge]")
    expect(badges).to_have_count(1)
    expect(badges.first).to_have_text("bot · strong")
    assert status(page) == "waiting"
    page.locator("[data-testid=fill-bots-level]").select_option("easy")
    fill_with_bots(page)
    expect(badges).to_have_count(3)
    expect(badges).to_have_text(["bot · strong", "bot · easy", "bot · easy"])
    page.screenshot(path=screenshots / "bot-levels.png")
