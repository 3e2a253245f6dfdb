"""The replay viewer as a player uses it: by round, by turn or trick, through the moves of the seat this
browser played (or another one), with the keyboard, and playing by itself to the end; every label is
a sentence for people, never an event's internal name."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.http_games import create, finished, join, play, seat_cookie
from tests.browser.play import CALM, PAGE_ERRORS, POLL_MS

pytestmark = pytest.mark.browser

NAMES = ("Ada", "Brook")


def practice(game: str) -> dict[str, str]:
    """A practice table's options: the same deal on every run, so the seeded moves replay exactly."""
    return {"seed": hashlib.sha256(f"replay-{game}".encode()).hexdigest()}


@dataclass(frozen=True)
class Game:
    game_id: str
    tokens: list[str]
    index: dict[str, Any]  # the replay's table of contents, as the API gives it to seat 1
    tags: set[str]  # every event type of the stream


@pytest.fixture(scope="module")
def six_nimmt(server: Server) -> Game:
    """A finished two-round game of 6 nimmt! between Ada and Brook, played over HTTP (a practice table)."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "six-nimmt", 2, {"rounds": 2, **practice("six-nimmt")})
        tokens = [join(client, game_id, name) for name in NAMES]
        play(client, game_id, tokens, seed=21, stop=finished)
        auth = {"Authorization": f"Bearer {tokens[1]}"}
        index = client.get(f"/games/{game_id}/replay/index", headers=auth).json()
        events = client.get(f"/games/{game_id}/events", params={"after": 0, "limit": 1000}).json()["events"]
    return Game(game_id, tokens, index, {e["type"] for e in events})


def as_seat(browser, server: Server, game: Game, seat: int, **size: int) -> Iterator[Page]:  # type: ignore[no-untyped-def]
    viewport = {"width": size.get("width", 1366), "height": size.get("height", 768)}
    context = browser.new_context(base_url=server.url, viewport=viewport, reduced_motion=CALM)
    name, value = seat_cookie(game.game_id, game.tokens[seat])
    context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    yield page
    context.close()


@pytest.fixture
def brook(browser, server: Server, six_nimmt: Game) -> Iterator[Page]:  # type: ignore[no-untyped-def]
    """The browser Brook played seat 1 from."""
    yield from as_seat(browser, server, six_nimmt, 1)


def shown(page: Page) -> int:
    return int(page.get_attribute("[data-testid=replay]", "data-version") or 0)


def wait_shown(page: Page, version: int) -> None:
    page.wait_for_function(
        "v => Number(document.querySelector('[data-testid=replay]')?.dataset.version) === v",
        arg=version,
        polling=POLL_MS,
    )


def open_replay(page: Page, game: Game) -> None:
    page.goto(f"/replay/{game.game_id}")
    wait_shown(page, 1)


def starts(index: dict[str, Any], key: str, **where: Any) -> list[int]:
    return [s["start"] for s in index[key] if all(s[k] == v for k, v in where.items())]


def test_the_replay_steps_by_round_and_by_turn_and_names_them_as_people_do(
    brook: Page, six_nimmt: Game, screenshots: Path
) -> None:
    index = six_nimmt.index
    rounds = starts(index, "rounds")
    assert len(rounds) == 3  # the setup, then rounds 1 and 2
    open_replay(brook, six_nimmt)
    expect(brook.locator("[data-testid=where]")).to_have_text("Before round 1: the players sit down")

    brook.click("[data-testid=next-round]")
    wait_shown(brook, rounds[1])
    expect(brook.locator("[data-testid=where]")).to_have_text("Round 1, turn 1")
    brook.click("[data-testid=next-round]")
    wait_shown(brook, rounds[2])
    expect(brook.locator("[data-testid=where]")).to_have_text("Round 2, turn 1")
    expect(brook.locator("[data-testid=next-round]")).to_be_disabled()
    brook.click("[data-testid=prev-round]")
    wait_shown(brook, rounds[1])

    turns = starts(index, "steps", round=1, kind="turn")
    assert len(turns) == 10
    for n, start in enumerate(turns[1:4], start=2):
        brook.click("[data-testid=next-step]")
        wait_shown(brook, start)
        expect(brook.locator("[data-testid=where]")).to_have_text(f"Round 1, turn {n}")
    brook.keyboard.press("ArrowRight")  # one version into turn 4: "previous" goes back to its start
    wait_shown(brook, turns[3] + 1)
    brook.keyboard.press("Shift+ArrowLeft")
    wait_shown(brook, turns[3])
    brook.keyboard.press("Shift+ArrowLeft")
    wait_shown(brook, turns[2])
    brook.keyboard.press("PageDown")
    wait_shown(brook, rounds[2])
    brook.keyboard.press("Home")
    wait_shown(brook, 1)

    # Mid-round, for the screenshot: the event said in words, no internal event name anywhere.
    brook.click("[data-testid=next-round]")
    wait_shown(brook, rounds[1])
    for _ in range(5):
        brook.click("[data-testid=next-step]")
    wait_shown(brook, turns[5])
    brook.keyboard.press("ArrowRight")
    wait_shown(brook, turns[5] + 1)
    text = brook.inner_text("main")
    assert not [tag for tag in six_nimmt.tags if tag in text], text
    assert brook.locator(".seat-views .panel").count() == 2  # every hand, revealed
    brook.screenshot(path=screenshots / "replay.png", full_page=True)


def test_clicks_quicker_than_the_server_each_step_on_from_where_the_last_one_was_going(
    brook: Page, six_nimmt: Game
) -> None:
    turns = starts(six_nimmt.index, "steps", round=1, kind="turn")
    open_replay(brook, six_nimmt)
    brook.click("[data-testid=next-round]")
    wait_shown(brook, turns[0])
    held: list[Any] = []  # the versions asked for, unanswered until every click is in
    holding = [True]
    brook.route(
        re.compile(r"/games/[0-9a-f]+/replay\?"),
        lambda route: held.append(route) if holding[0] else route.continue_(),
    )
    for _ in range(3):
        brook.click("[data-testid=next-step]")
    brook.keyboard.press("ArrowRight")
    assert shown(brook) == turns[0]  # nothing answered yet: the first turn is still drawn
    holding[0] = False
    for route in held:
        route.continue_()
    wait_shown(brook, turns[3] + 1)
    expect(brook.locator("[data-testid=where]")).to_have_text("Round 1, turn 4")


def test_my_moves_go_through_the_moves_of_the_seat_this_browser_played_then_of_a_chosen_seat(
    brook: Page, six_nimmt: Game
) -> None:
    index = six_nimmt.index
    assert index["you"] == 1
    mine = [m["version"] for m in index["moves"] if m["seat"] == 1]
    theirs = [m["version"] for m in index["moves"] if m["seat"] == 0]
    open_replay(brook, six_nimmt)
    follow = brook.locator("[data-testid=follow]")
    expect(follow).to_have_value("1")
    expect(follow.locator("option:checked")).to_contain_text("Brook (you)")
    expect(brook.locator("[data-testid=move-position]")).to_have_text(f"{len(mine)} moves")

    for number, version in enumerate(mine[:4], start=1):
        brook.click("[data-testid=next-move]")
        wait_shown(brook, version)
        expect(brook.locator("[data-testid=move-position]")).to_have_text(f"Move {number} of {len(mine)}")
        # the chip may add the strong bot's review mark, once the review job has run meanwhile
        expect(brook.locator("[data-testid=move-chip]")).to_have_text(re.compile(r"^Brook's move( · .+)?$"))
        expect(brook.locator("[data-testid=replay-event]").first).to_contain_text("Brook")
    brook.keyboard.press("m")
    wait_shown(brook, mine[4])
    brook.keyboard.press("Shift+M")
    wait_shown(brook, mine[3])

    follow.select_option("0")
    expect(brook.locator("[data-testid=move-position]")).to_contain_text(f"of {len(theirs)}")
    after = next(v for v in theirs if v > mine[3])
    brook.click("[data-testid=next-move]")
    wait_shown(brook, after)
    expect(brook.locator("[data-testid=move-chip]")).to_have_text("Ada's move")
    brook.keyboard.press("End")
    wait_shown(brook, index["head"])
    expect(brook.locator("[data-testid=next-move]")).to_be_disabled()


def test_autoplay_plays_every_version_in_order_to_the_end_and_stops(brook: Page, six_nimmt: Game) -> None:
    index = six_nimmt.index
    last_turn = starts(index, "steps", round=2, kind="turn")[-1]
    open_replay(brook, six_nimmt)
    brook.keyboard.press("End")
    wait_shown(brook, index["head"])
    brook.keyboard.press("Shift+ArrowLeft")
    wait_shown(brook, last_turn)
    brook.evaluate(
        """() => {
          window.replayed = [];
          const root = document.querySelector('[data-testid=replay]');
          new MutationObserver(() => window.replayed.push(Number(root.dataset.version)))
            .observe(root, { attributes: true, attributeFilter: ['data-version'] });
        }"""
    )
    brook.select_option("[data-testid=speed]", "8")
    brook.click("[data-testid=play]")
    expect(brook.locator("[data-testid=replay]")).to_have_attribute("data-playing", "true")
    expect(brook.locator("[data-testid=play]")).to_have_accessible_name("Pause")
    wait_shown(brook, index["head"])
    expect(brook.locator("[data-testid=replay]")).to_have_attribute("data-playing", "false")
    expect(brook.locator("[data-testid=play]")).to_have_accessible_name("Play")
    assert brook.evaluate("window.replayed") == list(range(last_turn + 1, index["head"] + 1))

    brook.keyboard.press("Home")  # Space pauses a game that plays again from the start
    wait_shown(brook, 1)
    brook.keyboard.press("Space")
    expect(brook.locator("[data-testid=replay]")).to_have_attribute("data-playing", "true")
    brook.keyboard.press("Space")
    expect(brook.locator("[data-testid=replay]")).to_have_attribute("data-playing", "false")


def test_the_replay_speaks_the_chosen_language_and_a_link_opens_it_at_a_moment(
    brook: Page, six_nimmt: Game
) -> None:
    index = six_nimmt.index
    turn = starts(index, "steps", round=2, kind="turn")[2]
    brook.goto(f"/replay/{six_nimmt.game_id}#v={turn}")
    wait_shown(brook, turn)
    brook.select_option("#lang-select", "pl")
    expect(brook.locator("[data-testid=where]")).to_have_text("Runda 2, tura 3")
    expect(brook.locator("[data-testid=next-step]")).to_have_accessible_name("Następna tura")
    expect(brook.locator("[data-testid=follow] option:checked")).to_contain_text("Brook (ty)")
    brook.select_option("#lang-select", "en")
    expect(brook.locator("[data-testid=where]")).to_have_text("Round 2, turn 3")


def test_on_a_phone_every_replay_control_is_on_screen_without_sideways_scrolling(
    browser, server: Server, six_nimmt: Game, screenshots: Path
) -> None:
    for phone in as_seat(browser, server, six_nimmt, 1, width=390, height=844):
        open_replay(phone, six_nimmt)
        phone.click("[data-testid=next-round]")
        wait_shown(phone, starts(six_nimmt.index, "rounds")[1])
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        for control in (
            "first",
            "prev-round",
            "prev-step",
            "prev",
            "play",
            "next",
            "next-step",
            "next-round",
            "last",
        ):
            box = phone.locator(f"[data-testid={control}]").bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, (control, box)
            assert box["y"] + box["height"] <= 844 and box["height"] >= 40, (control, box)
        phone.screenshot(path=screenshots / "replay-phone.png")


def test_a_skull_replay_steps_through_each_round_by_its_phases(browser, server: Server) -> None:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "skull", 3, practice("skull"))
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook", "Cyd")]
        play(client, game_id, tokens, seed=5, stop=finished)
        index = client.get(f"/games/{game_id}/replay/index").json()
    skull = Game(game_id, tokens, index, set())
    for page in as_seat(browser, server, skull, 2):
        open_replay(page, skull)
        expect(page.locator("[data-testid=next-step]")).to_have_accessible_name("Next phase")
        phases = [s for s in index["steps"] if s["round"] == 1]
        assert [s["kind"] for s in phases] == ["placing", "auction", "challenge"]
        page.click("[data-testid=next-round]")
        for step, label in zip(phases, ("placing discs", "auction", "challenge"), strict=True):
            wait_shown(page, step["start"])
            expect(page.locator("[data-testid=where]")).to_have_text(f"Round 1, {label}")
            page.keyboard.press("Shift+ArrowRight")
        wait_shown(page, starts(index, "rounds")[2])
        expect(page.locator("[data-testid=where]")).to_have_text("Round 2, placing discs")


STALE_PAD = '{"status": "playing", "version": 1, "rounds": [], "totals": [0, 0]}'


def test_the_end_screen_waits_for_a_score_pad_that_lags_the_game_by_seconds_and_then_shows_every_round(
    brook: Page, six_nimmt: Game
) -> None:
    """The score pad is a projection: on a busy server it can lag the finished view by seconds. The
    end screen asks again, less and less often, until the pad has the finished game (it used to give
    up after about five seconds and said no round was scored)."""
    lagging_until = [0.0]
    asked: list[str] = []

    def lagging(route) -> None:  # type: ignore[no-untyped-def]
        now = time.monotonic()
        if not lagging_until[0]:
            lagging_until[0] = now + 7.0
        asked.append("stale" if now < lagging_until[0] else "fresh")
        if asked[-1] == "stale":  # the pad of the game's last round, before its end was projected
            route.fulfill(status=200, content_type="application/json", body=STALE_PAD)
        else:
            route.continue_()

    brook.route(f"**/games/{six_nimmt.game_id}/scores", lagging)
    brook.goto(f"/tables/{six_nimmt.game_id}")
    brook.wait_for_selector("[data-testid=end-screen]")
    expect(brook.locator("[data-testid=sheet-loading]")).to_be_visible()
    expect(brook.locator("[data-testid=score-sheet] tbody tr")).to_have_count(2)  # two rounds
    assert asked.count("stale") > 1 and asked[-1] == "fresh", asked
