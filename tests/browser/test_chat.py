"""Table chat in the browser: two seats talk while they play, a spectator's rail stays off the seats'
screens until the end, mute is for the muter only, reactions travel, and a message is only ever text."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.browser.axe import blocking, describe, violations
from tests.browser.conftest import Server
from tests.browser.http_games import PLAY_SECONDS, join, play, seat_cookie
from tests.browser.play import CALM, PAGE_ERRORS, join_table
from tests.support.waiting import Deadline, ms, wait_until

NAMES = ["Ada", "Brook", "Cyd"]
XSS = '<img src=x onerror="window.__xss = 1"><script>window.__xss = 2</script>'


@dataclass
class Table:
    game_id: str
    tokens: list[str]
    host: str


def practice(seed: int) -> dict[str, str]:
    return {"seed": hashlib.sha256(f"chat-{seed}".encode()).hexdigest()}


def new_table(server: Server, seed: int) -> Table:
    """A Skull table of three people, playing (every seat taken over HTTP)."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        created = client.post("/games", json={"game": "skull", "players": 3, "options": practice(seed)})
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        tokens = [join(client, game_id, name) for name in NAMES]
    return Table(game_id, tokens, created.json()["host_token"])


def ending_soon(command: dict[str, Any]) -> tuple[int, int]:
    """How soon a Skull command ends the game (lower: sooner)."""
    kind = command["type"]
    if kind == "place_disc":
        return (3 if command["disc"] == "flower" else 4, 0)
    return ({"flip": 0, "pass": 1, "bid": 2}.get(kind, 5), command.get("count", 0))


def play_to_a_quick_end(client: httpx.Client, game_id: str, tokens: list[str]) -> None:
    """The seats of ``tokens`` play the Skull table to its end over HTTP, the shortest way: each
    places a flower, the round's first bidder bids one and the others pass, so the challenger turns
    his own flower and wins; the second such round wins the game (about fifteen moves, where bots
    that bluff play sixty or more). Each move waits for every seat's view of the one before."""
    deadline = Deadline(PLAY_SECONDS)
    seen = 0

    def views() -> list[dict[str, Any]] | None:
        answers = [
            client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {t}"}).json()
            for t in tokens
        ]
        versions = {view["version"] for view in answers}
        return answers if len(versions) == 1 and min(versions) >= seen else None

    while True:
        current = wait_until(views, PLAY_SECONDS, f"every seat's view of version {seen} of {game_id}")
        if current[0]["status"] == "finished":
            return
        assert not deadline.passed(), f"{game_id} did not end"
        movers = [seat for seat, view in enumerate(current) if view["legal"]]
        if not movers:  # no seat to move yet: the views of the last join
            seen = current[0]["version"] + 1
            continue
        seat = movers[0]
        body = {"command_id": uuid.uuid4().hex, "command": min(current[seat]["legal"], key=ending_soon)}
        answer = client.post(
            f"/games/{game_id}/commands", json=body, headers={"Authorization": f"Bearer {tokens[seat]}"}
        )
        assert answer.status_code < 300, answer.text
        seen = current[0]["version"] + 1


def open_page(
    browser: Browser, server: Server, table: Table, seat: int | None, width: int = 1280, height: int = 900
) -> Page:
    context = browser.new_context(
        base_url=server.url, viewport={"width": width, "height": height}, reduced_motion=CALM
    )
    context.add_init_script("localStorage.setItem('tablestream.speed', JSON.stringify('instant'))")
    if seat is not None:
        name, value = seat_cookie(table.game_id, table.tokens[seat])
        context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    page.goto(f"/tables/{table.game_id}")
    expect(page.locator("[data-testid=table]")).to_have_attribute("data-live", "open", timeout=ms(20))
    expect(page.locator("[data-testid=table]")).to_have_attribute(
        "data-seat", "" if seat is None else str(seat)
    )
    return page


def say(page: Page, text: str) -> None:
    page.fill("[data-testid=chat-input]", text)
    page.press("[data-testid=chat-input]", "Enter")  # the keyboard sends
    expect(page.locator("[data-testid=chat-input]")).to_have_value("")


def messages(page: Page) -> Locator:
    return page.locator("[data-testid=chat-message]:visible .chat-text")


@pytest.fixture
def pages(browser: Browser, server: Server) -> Iterator[list[Page]]:
    opened: list[Page] = []
    yield opened
    for page in opened:
        page.context.close()


def test_two_players_chat_at_a_table_while_they_play(
    browser: Browser, server: Server, pages: list[Page], screenshots: Path
) -> None:
    table = new_table(server, 1)
    ada = open_page(browser, server, table, 0)
    brook = open_page(browser, server, table, 1)
    pages += [ada, brook]
    expect(ada.locator("[data-testid=table]")).to_have_attribute("data-status", "playing")

    say(ada, "Good luck everyone, I never bluff")
    expect(messages(brook)).to_have_text(["Good luck everyone, I never bluff"])
    say(brook, "Of course you don't")
    expect(messages(ada)).to_have_text(["Good luck everyone, I never bluff", "Of course you don't"])
    expect(ada.locator("[data-testid=chat-message].mine")).to_have_count(1)
    expect(ada.locator("[data-testid=chat-message]").first.locator(".chat-name")).to_have_text("Ada")
    # the game goes on beside it: a move still draws on both screens
    with httpx.Client(base_url=server.url, timeout=10) as client:
        version = int(ada.get_attribute("[data-testid=table]", "data-version") or 0)
        play(client, table.game_id, table.tokens, seed=1, stop=lambda moves, views: moves >= 1)
    expect(brook.locator("[data-testid=table]")).not_to_have_attribute("data-version", str(version))
    ada.click("[data-testid=react-thumbs_up]")
    expect(messages(brook).last).to_have_text("👍 Thumbs up")
    ada.mouse.move(0, 0)
    ada.evaluate("window.scrollTo(0, 0)")  # the sticky top bar at the top of the whole page
    ada.screenshot(path=str(screenshots / "chat.png"), full_page=True)
    found = blocking(violations(ada))
    assert found == [], describe(found)


def test_a_spectators_message_reaches_the_seats_only_once_the_game_ended(
    browser: Browser, server: Server, pages: list[Page]
) -> None:
    table = new_table(server, 2)
    ada = open_page(browser, server, table, 0)
    rail = open_page(browser, server, table, None)
    other_rail = open_page(browser, server, table, None)
    pages += [ada, rail, other_rail]
    expect(rail.locator("[data-testid=chat-note]")).to_be_visible()

    say(rail, "Ada has a skull, I saw it")
    say(ada, "Hello from the table")
    expect(messages(other_rail)).to_have_text(["Ada has a skull, I saw it", "Hello from the table"])
    expect(messages(rail)).to_have_text(["Ada has a skull, I saw it", "Hello from the table"])
    expect(messages(ada)).to_have_text(["Hello from the table"])
    expect(ada.locator("text=Ada has a skull, I saw it")).to_have_count(0)

    with httpx.Client(base_url=server.url, timeout=10) as client:
        play_to_a_quick_end(client, table.game_id, table.tokens)
    expect(ada.locator("[data-testid=table]")).to_have_attribute("data-status", "finished", timeout=ms(30))
    expect(messages(ada)).to_have_text(["Ada has a skull, I saw it", "Hello from the table"], timeout=ms(15))
    expect(ada.locator("[data-testid=chat-message].rail .badge.rail")).to_have_text("Spectators")
    # after the end both sides talk in one chat, live
    say(rail, "Well bluffed")
    expect(messages(ada).last).to_have_text("Well bluffed", timeout=ms(15))


def test_a_spectator_who_sits_down_stops_reading_the_rail_and_reads_it_all_after_the_end(
    browser: Browser, server: Server, pages: list[Page]
) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        created = client.post("/games", json={"game": "skull", "players": 3, "options": practice(4)})
        assert created.status_code == 201, created.text
        table = Table(created.json()["game_id"], [join(client, created.json()["game_id"], "Ada")], "")
    ada = open_page(browser, server, table, 0)
    rail = open_page(browser, server, table, None)
    pages += [ada, rail]
    say(rail, "I will keep quiet")
    say(ada, "Anyone joining?")
    expect(messages(rail)).to_have_text(["I will keep quiet", "Anyone joining?"])

    join_table(rail, table.game_id, "Brook")  # the spectator sits down: now at the table
    expect(messages(rail)).to_have_text(["Anyone joining?"], timeout=ms(15))
    expect(rail.locator("[data-testid=chat-message].rail")).to_have_count(0)
    say(rail, "Here I am")
    expect(messages(ada)).to_have_text(["Anyone joining?", "Here I am"])
    expect(messages(rail)).to_have_text(["Anyone joining?", "Here I am"])

    with httpx.Client(base_url=server.url, timeout=10) as client:
        brook = rail.context.cookies()
        tokens = [table.tokens[0], next(c["value"] for c in brook if c["name"] == f"ts_seat_{table.game_id}")]
        tokens.append(join(client, table.game_id, "Cyd"))
        play_to_a_quick_end(client, table.game_id, tokens)
    for page in (ada, rail):
        expect(page.locator("[data-testid=table]")).to_have_attribute(
            "data-status", "finished", timeout=ms(30)
        )
        expect(messages(page)).to_have_text(
            ["I will keep quiet", "Anyone joining?", "Here I am"], timeout=ms(15)
        )  # once, in the order said


def test_a_muted_players_messages_disappear_for_the_muter_only(
    browser: Browser, server: Server, pages: list[Page]
) -> None:
    table = new_table(server, 3)
    ada = open_page(browser, server, table, 0)
    brook = open_page(browser, server, table, 1)
    cyd = open_page(browser, server, table, 2)
    pages += [ada, brook, cyd]

    say(ada, "first from Ada")
    say(cyd, "Cyd here")
    expect(messages(brook)).to_have_text(["first from Ada", "Cyd here"])
    brook.locator("[data-testid=chat-message][data-from='seat:0'] [data-testid=chat-mute]").click()
    expect(messages(brook)).to_have_text(["Cyd here"])
    say(ada, "second from Ada")
    expect(messages(cyd)).to_have_text(["first from Ada", "Cyd here", "second from Ada"])
    expect(messages(ada)).to_have_text(["first from Ada", "Cyd here", "second from Ada"])
    expect(messages(brook)).to_have_text(["Cyd here"])
    # kept for this table across a reload, and undone in one click
    brook.reload()
    expect(brook.locator("[data-testid=table]")).to_have_attribute("data-live", "open", timeout=ms(20))
    expect(messages(brook)).to_have_text(["Cyd here"])
    expect(brook.locator("[data-testid=chat-muted]")).to_contain_text("Ada")
    brook.click("[data-testid=chat-unmute]")
    expect(messages(brook)).to_have_text(["first from Ada", "Cyd here", "second from Ada"])


def test_a_reaction_on_a_phone_appears_on_the_other_screen_and_the_dock_stays(
    browser: Browser, server: Server, pages: list[Page], screenshots: Path
) -> None:
    table = new_table(server, 4)
    phone = open_page(browser, server, table, 0, width=390, height=844)
    brook = open_page(browser, server, table, 1)
    pages += [phone, brook]
    expect(phone.locator("[data-testid=chat-panel]")).to_be_hidden()

    say(brook, "Your move, Ada")
    expect(phone.locator("[data-testid=chat-unread]")).to_have_text("1")
    phone.click("[data-testid=chat-toggle]")  # one tap
    expect(phone.locator("[data-testid=chat-panel]")).to_be_visible()
    expect(phone.locator("[data-testid=chat-unread]")).to_be_hidden()
    phone.click("[data-testid=react-gl]")
    expect(messages(brook).last).to_have_text("🍀 Good luck")
    dock = phone.locator(".dock")
    expect(dock).to_be_visible()
    panel_box = phone.locator("[data-testid=chat-panel]").bounding_box()
    dock_box = dock.bounding_box()
    assert panel_box is not None and dock_box is not None
    assert panel_box["y"] + panel_box["height"] <= dock_box["y"] + 1  # the sheet sits above the controls
    assert panel_box["width"] <= 390
    phone.screenshot(path=str(screenshots / "chat-phone.png"))
    found = blocking(violations(phone))
    assert found == [], describe(found)
    phone.keyboard.press("Escape")
    expect(phone.locator("[data-testid=chat-panel]")).to_be_hidden()
    expect(phone.locator("[data-testid=chat-toggle]")).to_be_focused()


def test_an_xss_payload_in_chat_renders_as_text(browser: Browser, server: Server, pages: list[Page]) -> None:
    table = new_table(server, 5)
    ada = open_page(browser, server, table, 0)
    spectator = open_page(browser, server, table, None)
    pages += [ada, spectator]

    say(ada, XSS)
    expect(messages(spectator)).to_have_text([XSS])
    expect(messages(ada)).to_have_text([XSS])
    for page in (ada, spectator):
        assert page.locator("[data-testid=chat-list] img, [data-testid=chat-list] script").count() == 0
        assert page.evaluate("window.__xss") is None


def test_the_replay_shows_each_message_at_the_move_it_was_sent(
    browser: Browser, server: Server, pages: list[Page]
) -> None:
    table = new_table(server, 6)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        seat0 = {"Authorization": f"Bearer {table.tokens[0]}"}
        play(client, table.game_id, table.tokens, seed=6, stop=lambda moves, views: moves >= 2)
        sent = client.post(f"/games/{table.game_id}/chat", json={"text": "nice flower"}, headers=seat0)
        assert sent.status_code == 201, sent.text
        version = sent.json()["message"]["version"]
        play_to_a_quick_end(client, table.game_id, table.tokens)
    page = open_replay(browser, server, table, version - 1)
    pages.append(page)

    expect(page.locator("[data-testid=replay]")).to_have_attribute("data-version", str(version - 1))
    expect(page.locator("[data-testid=replay-chat] .chat-text")).to_have_count(0)
    page.click("[data-testid=next]")
    expect(page.locator("[data-testid=replay-chat] .chat-text")).to_have_text(["nice flower"])
    expect(page.locator("[data-testid=replay-chat] .chat-msg.now")).to_have_count(1)
    page.click("[data-testid=next]")
    expect(page.locator("[data-testid=replay-chat] .chat-msg.now")).to_have_count(0)
    expect(page.locator("[data-testid=replay-chat] .chat-text")).to_have_text(["nice flower"])
    found = blocking(violations(page))
    assert found == [], describe(found)


def open_replay(browser: Browser, server: Server, table: Table, version: int) -> Page:
    context = browser.new_context(
        base_url=server.url, viewport={"width": 1280, "height": 900}, reduced_motion=CALM
    )
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    page.goto(f"/replay/{table.game_id}#v={version}")
    return page
