"""Driving the web client like a person: create, join, and click enabled controls until a condition."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.support.waiting import Deadline, ms, wait_until

ACTIONS = "[data-testid=table] .board button[data-act]:enabled"
GAME_SECONDS = 90.0  # a deadline against a hung game; a loaded machine plays a move in ~0.5 s
MOVE_SECONDS = 30.0  # a bot or a projection on a loaded 2-core machine can take seconds
ACTION_SECONDS = 30  # Playwright's own default for an action or a wait, on a quiet machine
CLICK_SECONDS = 5  # how long a control seen enabled may take to accept a click
# A page's wait_for_function polls on a timer, not on animation frames (Playwright's default): a
# headless page the browser paints seldom, as a loaded machine's can be, runs few or none of those.
POLL_MS = 100
PAGE_ERRORS: list[str] = []  # uncaught script errors of every page; the tests' fixture checks it is empty
CALM = "reduce"
"""The pages of tests not about motion ask for reduced motion (``prefers-reduced-motion``), as a
person may: no decorative animation runs for ever (the acting seat's pulse, the waiting spinner). A
headless Chromium paints each of those frames in software: one pulsing dot cost a page a tenth of a
core, and the suite keeps a few pages open at every moment of its browser tests."""


def motion(speed: str) -> str:
    """The reduced-motion preference of a page whose table moves at ``speed``: calm when its moves
    are instant, as the page itself then chooses (``table_alerts.js``); none when a test watches
    moves animate."""
    return CALM if speed == "instant" else "no-preference"


def player(
    browser: Browser, base_url: str, width: int = 1280, height: int = 900, speed: str = "instant"
) -> Page:
    """A browser page; its table pages show moves at ``speed`` (the table's animation setting, kept in
    localStorage): instant by default, so that tests about other things need not wait for animations."""
    context = browser.new_context(
        base_url=base_url, viewport={"width": width, "height": height}, reduced_motion=motion(speed)
    )
    context.add_init_script(f"localStorage.setItem('tablestream.speed', JSON.stringify({speed!r}))")
    context.set_default_timeout(ms(ACTION_SECONDS))
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    return page


PRACTICE_SEED = "5eed" * 16  # a practice table's seed: the deal repeats from run to run
Chooser = Callable[[random.Random, list[str]], int]


def set_field(page: Page, selector: str, value: str) -> None:
    """Type into an input, or pick the option of that value in a menu (a choice or a seat)."""
    field = page.locator(selector)
    if field.evaluate("el => el.tagName") == "SELECT":
        field.select_option(value)
    else:
        field.fill(value)


def create_table(
    page: Page, title: str, name: str, players: int, seed: str | None = None, **options: Any
) -> str:
    """Create a table through the lobby form and sit down; returns the table id. ``seed`` makes it a
    practice table."""
    page.goto("/")
    # the create form's game, not the quick play panel's title of the same name (above it)
    page.locator("[data-testid=create-form]").get_by_text(title, exact=True).first.click()
    page.fill("#name", name)
    page.fill("#players", str(players))
    if options or seed:
        page.click("details.options summary")
        if seed:
            page.click("[data-testid=advanced] summary")  # the practice seed is under the advanced fold
            page.fill("#seed", seed)
        for key, value in options.items():
            if isinstance(value, bool):
                page.set_checked(f"#opt-{key}", value)
            else:
                set_field(page, f"#opt-{key}", str(value))
    page.click("[data-testid=create]")
    page.wait_for_url("**/tables/*")
    page.wait_for_selector("[data-testid=table][data-seat='0']")
    return page.url.rsplit("/", 1)[1]


def lobby(page: Page) -> None:
    """Open the lobby and wait until it is drawn whole: the quick play panel comes in above the
    account box once the games are known, and a click aimed at the box in between landed on what
    moved there (a "Log in" tab clicked so left the box registering, and its "Log in" button was
    never found)."""
    page.goto("/")
    expect(page.locator("[data-testid=quickplay] [data-testid^=qp-play-]").first).to_be_visible()


def register(page: Page, name: str, password: str | None = None) -> None:
    """Register from the lobby's account box and wait until it says who we are."""
    lobby(page)
    page.click("[data-testid=account-register]")
    expect(page.locator("[data-testid=register-form]")).to_be_visible()
    page.fill("#account-name", name)
    if password is not None:
        page.fill("#account-password", password)
    page.click("[data-testid=register-submit]")
    expect(page.locator("[data-testid=signed-in]")).to_contain_text(name)


def create_as_account(page: Page, title: str, players: int, **options: Any) -> str:
    """A logged-in player creates a table from the lobby and sits down as the account."""
    page.goto("/")
    # the create form's game, not the quick play panel's title of the same name (above it)
    page.locator("[data-testid=create-form]").get_by_text(title, exact=True).first.click()
    expect(page.locator("[data-testid=create-form] [data-testid=playing-as]")).to_be_visible()
    page.fill("#players", str(players))
    if options:
        page.click("details.options summary")
        for key, value in options.items():
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


def join_from_lobby(page: Page, game_id: str, name: str) -> None:
    """Join a table from the lobby's list: its Join button opens an inline form."""
    page.goto("/")
    row = page.locator(f"[data-testid=tables] li[data-game-id='{game_id}']")
    row.locator(".table-actions button.primary").click()
    row.locator(f"#jn-{game_id}").fill(name)
    row.locator("form.join-inline button[type=submit]").click()
    page.wait_for_url(f"**/tables/{game_id}")
    page.wait_for_selector("[data-testid=table][data-seat]:not([data-seat=''])")


def fill_with_bots(host: Page) -> None:
    """The host clicks the waiting table's button that seats bots in every empty seat."""
    host.click("[data-testid=fill-bots]")
    host.wait_for_selector("[data-testid=table][data-status=playing]")


def version(page: Page) -> int:
    return int(page.get_attribute("[data-testid=table]", "data-version") or 0)


def counted(page: Page, what: str) -> int:
    """The page's count of commands ``sent`` or ``answered`` (the table's data attributes)."""
    return int(page.get_attribute("[data-testid=table]", f"data-{what}") or 0)


def status(page: Page) -> str:
    return page.get_attribute("[data-testid=table]", "data-status") or ""


def play(
    pages: Sequence[Page],
    rng: random.Random,
    until: Callable[[], bool],
    seconds: float = GAME_SECONDS,
    on_move: Callable[[int], None] | None = None,
    choose: Chooser | None = None,
) -> int:
    """Click a seeded random enabled control on whichever page has one, until ``until()``; each click
    waits for that page's view to move on. ``choose`` (given the controls' ``data-key``s) may bias
    which control is clicked. Returns the number of moves made."""
    deadline = Deadline(seconds)
    moves = 0
    while not until():
        assert not deadline.passed(), f"no end after {moves} moves"
        # Read the versions before looking for controls: a view that moves on after this is noticed.
        seen = [version(page) for page in pages]
        acted = False
        for page in pages:
            before = version(page)  # before the controls: a redraw after this shows as a newer version
            buttons = page.locator(ACTIONS)
            keys = buttons.evaluate_all("els => els.map(el => el.dataset.key || '')")
            if not keys or status(page) != "playing":
                continue
            index = choose(rng, keys) if choose else rng.randrange(len(keys))
            sent = counted(page, "sent")
            try:
                buttons.nth(index).click(timeout=ms(CLICK_SECONDS))
            except PlaywrightTimeoutError:
                if version(page) != before:
                    continue  # the view moved on under the pointer and took the control away: look again
                raise
            if counted(page, "sent") == sent:
                continue  # the click reached no control (a redraw replaced it under the pointer): look again
            # Polled from here, not by the page's animation frames: a page the browser paints seldom
            # (a background window under load) still answers.
            wait_until(
                lambda page=page, before=before: (
                    version(page) > before or page.locator("#toast.show").count()
                ),
                MOVE_SECONDS,
                "the page's view to move on after its move",
                lambda: describe(pages),
            )
            moves += 1
            acted = True
            if on_move:
                on_move(moves)
            if until():
                break
        if not acted:
            # Nobody may act on the views seen: wait until one of the pages' views moves on (or the
            # end comes: the last move may have reached the pages since ``until()`` was asked).
            moved = _moved_or(pages, seen, until)
            wait_until(moved, MOVE_SECONDS, "a view to move on", lambda: describe(pages))
    return moves


def describe(pages: Sequence[Page]) -> str:
    """What each page shows against what the server holds: the message of a stuck game."""
    lines = []
    for page in pages:
        game_id = page.url.rsplit("/", 1)[1]
        served = page.request.get(f"/games/{game_id}/view")
        head = served.json() if served.ok else {"status": served.status}
        table = page.locator("[data-testid=table]")
        toast = page.locator("#toast.show")
        lines.append(
            f"{page.url}: shows version {version(page)} ({status(page)}), live stream"
            f" {table.get_attribute('data-live')!r}, toast {toast.inner_text() if toast.count() else None!r},"
            f" commands sent {counted(page, 'sent')} and answered {counted(page, 'answered')};"
            f" the server's view: version {head.get('version')} ({head.get('status')}),"
            f" to act {head.get('to_act')}"
        )
    return "\n".join(lines)


def _moved_or(pages: Sequence[Page], seen: list[int], until: Callable[[], bool]) -> Callable[[], bool]:
    # A page draws the moves it received one after another: its controls may come after its version.
    return lambda: (
        [version(page) for page in pages] != seen
        or until()
        or any(page.locator(ACTIONS).count() for page in pages)
    )


def wait_log_caught_up(page: Page) -> None:
    """Wait until the page's log shows every version its table view has."""
    page.wait_for_function(
        "() => { const t = document.querySelector('[data-testid=table]');"
        " const l = document.querySelector('[data-testid=log]');"
        " return t && l && Number(l.dataset.logged || 0) >= Number(t.dataset.version); }",
        polling=POLL_MS,
    )


def finished(pages: Sequence[Page]) -> Callable[[], bool]:
    return lambda: all(status(page) == "finished" for page in pages)
