"""Watching the table page as a person would: what its change queue showed (its report on the
table's root), whether the log's newest line is in sight, whether every legal move is a button on
screen; and a player who clicks controls, with those checks before each of its moves."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from playwright.sync_api import Browser, Page
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.browser.play import (
    ACTIONS,
    CLICK_SECONDS,
    MOVE_SECONDS,
    POLL_MS,
    Chooser,
    describe,
    player,
    status,
    version,
)
from tests.support.waiting import Deadline, ms, wait_until

IDLE_SECONDS = 30  # the queue catching up: a few seconds of steps, more on a loaded machine
SHOWN = (
    "() => { const t = document.querySelector('[data-testid=table]');"
    " return t && t.dataset.shownVersion === t.dataset.version; }"
)


def watcher(
    browser: Browser, base_url: str, speed: str = "fast", width: int = 1280, height: int = 900
) -> Page:
    """A page whose table animates at ``speed`` (the setting a person picks, kept in localStorage)."""
    return player(browser, base_url, width=width, height=height, speed=speed)


def game_id(page: Page) -> str:
    return page.url.rsplit("/", 1)[1]


def read(page: Page, path: str) -> Any:
    """A JSON answer of the API with the page's cookies (its seat). A kept-alive connection the server
    closed at the moment it was reused (ECONNRESET) is tried again, at most twice."""
    for attempt in range(3):
        try:
            answer = page.request.get(path)
        except PlaywrightError as error:
            if "ECONNRESET" not in str(error) or attempt == 2:
                raise
            continue
        assert answer.ok, f"{path}: {answer.status} {answer.text()}"
        return answer.json()
    raise AssertionError("unreachable")


SETTLED = (  # no card or disc is still sliding into its place (an animation of finite length running)
    "() => document.getAnimations().every(a => a.playState !== 'running'"
    " || !a.effect || a.effect.getComputedTiming().endTime === Infinity)"
)


def wait_shown(page: Page) -> None:
    """Until the queue has shown the newest view the page received."""
    page.wait_for_function(SHOWN, timeout=ms(IDLE_SECONDS), polling=POLL_MS)


def wait_settled(page: Page) -> None:
    """Until the newest view is shown and its cards and discs have slid into their places: the queue
    reports a step shown as soon as it is drawn, while the step's motion still runs."""
    wait_shown(page)
    page.wait_for_function(SETTLED, timeout=ms(IDLE_SECONDS), polling=POLL_MS)


def played(page: Page) -> list[tuple[int, str, bool]]:
    """The queue's report: (version, event type, shown as a step rather than jumped over), in order."""
    tokens = (page.get_attribute("[data-testid=table]", "data-played") or "").split()
    return [(int(token.split(":")[0]), token.split(":")[1], not token.endswith(":j")) for token in tokens]


def key_of(command: dict[str, Any]) -> str:
    """The ``data-key`` the page gives a command's button (games/common.js keyOf)."""
    return "&".join(f"{key}={value}" for key, value in sorted(command.items()))


def still(page: Page, at: int) -> bool:
    """The page still shows version ``at``, settled."""
    return version(page) == at and bool(page.evaluate(SHOWN)) and bool(page.evaluate(SETTLED))


class Watch:
    """Per page: the version up to which the other seats' moves were already checked."""

    def __init__(self) -> None:
        self.checked: dict[str, int] = {}
        self.moves_seen = 0

    def moves_shown_in_order(self, page: Page) -> None:
        """Every move the bots made since the last check was shown as a step of its own, in order."""
        wait_shown(page)
        after = self.checked.get(game_id(page), 0)
        events = read(page, f"/games/{game_id(page)}/events?after={after}")["events"]
        head = int(page.get_attribute("[data-testid=table]", "data-shown-version") or 0)
        moves = [e for e in events if e.get("by") == "bot" and e["version"] <= head]
        report = played(page)
        where = {version: index for index, (version, _, _) in enumerate(report)}
        for event in moves:
            assert event["version"] in where, f"move {event} missing from the queue's report {report[-30:]}"
            _, kind, stepped = report[where[event["version"]]]
            assert kind == event["type"] and stepped, f"move {event} was not shown as a step: {report[-30:]}"
        indexes = [where[e["version"]] for e in moves]
        assert indexes == sorted(indexes), f"moves shown out of order: {report[-30:]}"
        self.checked[game_id(page)] = head
        self.moves_seen += len(moves)

    @staticmethod
    def log_follows(page: Page) -> None:
        """The log's newest line lies inside the log's box (it scrolled along)."""
        inside = page.evaluate(
            "() => { const log = document.querySelector('[data-testid=log]');"
            " const last = log.lastElementChild; if (!last) return true;"
            " const box = log.getBoundingClientRect(), line = last.getBoundingClientRect();"
            " return line.bottom <= box.bottom + 1 && line.top >= box.top - 1; }"
        )
        assert inside, "the log's last line is out of sight"

    @staticmethod
    def legal_moves_on_screen(page: Page) -> str:
        """Every legal command of the seat is an enabled button wholly inside the viewport and not
        covered by anything, once the page has settled (a card of the hand sliding to its new place
        passes over the buttons for a moment, as a person sees it). Returns the phase checked."""
        wait_settled(page)
        view = read(page, f"/games/{game_id(page)}/view")
        if view["version"] != version(page):
            return ""  # the table moved on meanwhile: the next move checks again
        size = page.viewport_size or {"width": 0, "height": 0}
        for command in view["legal"]:
            key = key_of(command)
            buttons = page.locator(f"{ACTIONS}[data-key='{key}']")
            assert buttons.count() >= 1, f"no enabled button for {key} in phase {view['phase']}"
            box = buttons.first.bounding_box()
            if box is None and not still(page, view["version"]):
                return ""  # the button left with a newer move: the next move checks again
            assert box is not None, key
            assert box["x"] >= 0 and box["y"] >= 0, (key, box)
            assert box["x"] + box["width"] <= size["width"] + 0.5, (key, box, view["phase"])
            assert box["y"] + box["height"] <= size["height"] + 0.5, (key, box, view["phase"])
            cover = buttons.first.evaluate(
                "b => { const r = b.getBoundingClientRect();"
                " const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);"
                " return b === at || b.contains(at) ? '' : (at ? at.outerHTML.slice(0, 300) : 'nothing'); }"
            )
            if cover and not still(page, view["version"]):
                return ""  # a newer move began to slide in meanwhile: the next move checks again
            assert not cover, f"the button for {key} is covered ({view['phase']}) by {cover}"
        return str(view["phase"])


def play_and_watch(
    pages: Sequence[Page],
    rng: random.Random,
    seconds: float,
    check: Callable[[Page], None],
    choose: Callable[[Page], Chooser | None] = lambda page: None,
    on_move: Callable[[Page, int], None] | None = None,
    enough: Callable[[Page], bool] = lambda page: False,
) -> int:
    """Like ``play.play`` until every page's game is over (or ``enough(page)`` holds for it: what
    the test is about was seen), but first ``check`` each page whose seat may move, then click one
    of its enabled controls (``choose(page)`` may bias which). Returns the moves made."""
    deadline = Deadline(seconds)
    moves = 0

    def over(page: Page) -> bool:
        return status(page) == "finished" or enough(page)

    while not all(over(page) for page in pages):
        assert not deadline.passed(), f"no end after {moves} moves:\n{describe(pages)}"
        seen = [version(page) for page in pages]
        acted = False
        for page in pages:
            if over(page) or status(page) != "playing" or not page.locator(ACTIONS).count():
                continue
            check(page)
            before = version(page)
            buttons = page.locator(ACTIONS)
            keys = buttons.evaluate_all("els => els.map(el => el.dataset.key || '')")
            if not keys or status(page) != "playing":
                continue
            chooser = choose(page)
            index = chooser(rng, keys) if chooser else rng.randrange(len(keys))
            try:
                page.locator(f"{ACTIONS}[data-key='{keys[index]}']").first.click(timeout=ms(CLICK_SECONDS))
            except PlaywrightTimeoutError:
                if version(page) != before:
                    continue  # the view moved on under the pointer and took the control away
                raise
            page.wait_for_function(
                "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v"
                " || document.querySelector('#toast.show')",
                arg=before,
                timeout=ms(10),
                polling=POLL_MS,
            )
            moves += 1
            acted = True
            if on_move:
                on_move(page, moves)
        if not acted:
            moved = _moved(pages, seen, over)
            wait_until(moved, MOVE_SECONDS, "a view to move on", details=lambda: describe(pages))
    return moves


def _moved(pages: Sequence[Page], seen: list[int], over: Callable[[Page], bool]) -> Callable[[], bool]:
    """A page received a newer view, shows controls now, or every game is over."""
    return lambda: (
        [version(page) for page in pages] != seen
        or any(page.locator(ACTIONS).count() for page in pages)
        or all(over(page) for page in pages)
    )
