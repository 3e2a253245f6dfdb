"""Driving the web client like a person: create, join, and click enabled controls until a condition."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from playwright.sync_api import Browser, Page

ACTIONS = "[data-testid=table] .board button[data-act]:enabled"
GAME_SECONDS = 50.0
PAGE_ERRORS: list[str] = []  # uncaught script errors of every page; the tests' fixture checks it is empty


def player(browser: Browser, base_url: str, width: int = 1280, height: int = 900) -> Page:
    context = browser.new_context(base_url=base_url, viewport={"width": width, "height": height})
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    return page


def create_table(page: Page, title: str, name: str, players: int, **options: Any) -> str:
    """Create a table through the lobby form and sit down; returns the table id."""
    page.goto("/")
    page.get_by_text(title, exact=True).first.click()
    page.fill("#name", name)
    page.fill("#players", str(players))
    if options:
        page.click("details.options summary")
        for key, value in options.items():
            if isinstance(value, bool):
                page.set_checked(f"#opt-{key}", value)
            else:
                page.fill(f"#opt-{key}", str(value))
    page.click("[data-testid=create]")
    page.wait_for_url("**/tables/*")
    page.wait_for_selector("[data-testid=table][data-seat='0']")
    return page.url.rsplit("/", 1)[1]


def join_table(page: Page, game_id: str, name: str) -> None:
    page.goto(f"/tables/{game_id}")
    page.fill("#join-name", name)
    page.click("[data-testid=join-form] button[type=submit]")
    page.wait_for_selector("[data-testid=table][data-seat]:not([data-seat=''])")


def version(page: Page) -> int:
    return int(page.get_attribute("[data-testid=table]", "data-version") or 0)


def status(page: Page) -> str:
    return page.get_attribute("[data-testid=table]", "data-status") or ""


def play(
    pages: Sequence[Page],
    rng: random.Random,
    until: Callable[[], bool],
    seconds: float = GAME_SECONDS,
    on_move: Callable[[int], None] | None = None,
) -> int:
    """Click a seeded random enabled control on whichever page has one, until ``until()``; each click
    waits for that page's view to move on. Returns the number of moves made."""
    deadline = time.monotonic() + seconds
    moves = 0
    while not until():
        assert time.monotonic() < deadline, f"no end after {moves} moves"
        acted = False
        for page in pages:
            buttons = page.locator(ACTIONS)
            count = buttons.count()
            if not count or status(page) != "playing":
                continue
            before = version(page)
            buttons.nth(rng.randrange(count)).click()
            page.wait_for_function(
                "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v"
                " || document.querySelector('#toast.show')",
                arg=before,
                timeout=10_000,
            )
            moves += 1
            acted = True
            if on_move:
                on_move(moves)
            if until():
                break
        if not acted:
            # Nobody may act right now on the pages' views: wait for one of them to move on.
            pages[0].wait_for_function(
                "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v",
                arg=version(pages[0]),
                timeout=10_000,
            )
    return moves


def finished(pages: Sequence[Page]) -> Callable[[], bool]:
    return lambda: all(status(page) == "finished" for page in pages)
