"""How the pages reach a real Chromium: the shell's fingerprinted, preloaded modules (a reload fetches
none of them again), the live lobby (no polling), the page for an unknown address, the favicon."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from services.bench.pages import Recorder
from tests.browser.conftest import Server
from tests.browser.play import CALM, PAGE_ERRORS, POLL_MS, create_table, player
from tests.support.waiting import ms

pytestmark = pytest.mark.browser
VERSIONED = re.compile(r"^/static/[0-9a-f]{16}/")
SECONDS = 30.0


def recorded(page: Any) -> Recorder:
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    return Recorder(cdp)


def settle(page: Any, recorder: Recorder) -> None:
    until = time.monotonic() + SECONDS
    while not recorder.settled():
        assert time.monotonic() < until, "the page's requests did not settle"
        page.wait_for_timeout(50)


def test_the_lobby_shows_a_table_created_elsewhere_and_its_seats_filling_without_polling(
    server: Server, browser
) -> None:
    page = player(browser, server.url)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(f"{request.method} {urlsplit(request.url).path}"))
    page.goto("/")
    page.wait_for_selector("[data-testid=create-form]")
    page.wait_for_selector("#tables-title")
    with httpx.Client(base_url=server.url) as client:
        game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        row = page.locator(f"[data-testid=tables] li[data-game-id='{game_id}']")
        row.wait_for(timeout=ms(SECONDS))
        assert "0/3" in row.inner_text()
        client.post(f"/games/{game_id}/players", json={"name": "Ada"})
        page.wait_for_function(
            "id => (document.querySelector(`li[data-game-id='${id}']`)?.innerText || '').includes('1/3')",
            arg=game_id,
            timeout=ms(SECONDS),
            polling=POLL_MS,
        )
    page.wait_for_timeout(4500)  # longer than the old polling period: no GET /games meanwhile
    assert "GET /lobby/live" in asked and "GET /games" not in asked
    scripts = [path for entry in asked if (path := entry.split(" ", 1)[1]).endswith(".js")]
    assert scripts and all(VERSIONED.match(path) for path in scripts), scripts
    preloaded = page.eval_on_selector_all("link[rel=modulepreload]", "links => links.map(l => l.href)")
    assert any(href.endswith("/js/lobby_live.js") for href in preloaded)
    assert page.evaluate("document.cookie").count("tablestream.lang=en") == 1
    page.context.close()


def test_a_table_page_from_the_new_shell_reloads_without_fetching_a_module_again(
    server: Server, browser
) -> None:
    page = player(browser, server.url)
    game_id = create_table(page, "Skull King", "Ada", 2)
    recorder = recorded(page)
    page.reload()
    page.wait_for_selector("[data-testid=table][data-seat='0'][data-game='skull-king']")
    settle(page, recorder)
    fetched = [r for r in recorder.requests.values() if VERSIONED.match(urlsplit(r.url).path)]
    assert fetched, "the table's modules and style are named under the versioned prefix"
    assert all(r.cached for r in fetched), [r.url for r in fetched if not r.cached]
    shell = next(r for r in recorder.requests.values() if urlsplit(r.url).path == f"/tables/{game_id}")
    assert not shell.cached  # the shell is revalidated on every visit
    assert page.locator("[data-testid=table] .board").count() == 1
    page.context.close()


def test_an_unknown_address_shows_a_page_in_the_persons_language_with_the_way_back(
    server: Server, browser, screenshots
) -> None:
    context = browser.new_context(
        base_url=server.url, locale="pl-PL", viewport={"width": 1280, "height": 800}, reduced_motion=CALM
    )
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    response = page.goto("/no/such/page")
    assert response is not None and response.status == 404
    heading = page.locator("[data-testid=not-found] h1")
    heading.wait_for()
    assert heading.inner_text() == "Nie znaleziono strony"
    assert "/no/such/page" in page.inner_text("[data-testid=not-found]")
    assert page.title().startswith("Nie znaleziono strony")
    page.screenshot(path=str(screenshots / "not-found.png"))
    page.click("[data-testid=back-to-lobby]")
    page.wait_for_selector("[data-testid=create-form]")
    assert urlsplit(page.url).path == "/" and page.title() == "Tablestream"
    icon = page.request.get("/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/x-icon"
    context.close()
