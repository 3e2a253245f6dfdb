"""One person against paced bots, in Chromium: every other seat's move is shown in turn, the log
follows the game, the end screen has a score sheet; on a phone every legal move stays on screen."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.browser.conftest import Server
from tests.browser.play import POLL_MS, create_table, fill_with_bots, wait_log_caught_up
from tests.browser.test_games import skull_short_game
from tests.browser.watch import Watch, game_id, play_and_watch, read, wait_shown, watcher
from tests.support.waiting import ms

pytestmark = pytest.mark.browser

GAMES = [  # title, seats, table options, file name
    ("Skull", 3, {}, "skull"),
    ("6 nimmt!", 4, {"rounds": 1}, "six-nimmt"),
    ("Skull King", 2, {}, "skull-king"),
]
SLIDING = (  # a step of another seat being drawn: its card or disc on its way to the table
    "() => { const now = document.querySelector('[data-testid=now].live');"
    " const seat = document.querySelector('.player.actor:not(.me)');"
    " return now && seat && document.getAnimations().some(a => a.playState === 'running'"
    " && a.effect && a.effect.target && a.effect.target.closest('.trick, .rows, .pending, .mats')); }"
)
LATER_TRIES = 2  # moves after which a later mid-move frame is waited for, once one is shot
GAME_SECONDS = 150.0  # a deadline against a hung game: Skull King's ten rounds, on a quiet machine


def seat_against_bots(page: Page, title: str, seats: int, options: dict[str, object]) -> str:
    """The person creates the table, sits down and fills the other seats with bots."""
    game_id = create_table(page, title, "Ada", seats, **options)
    fill_with_bots(page)
    return game_id


def bold_skull(rng: random.Random, keys: list[str]) -> int:
    """Bid every disc on the mats at the first chance, then flip: the seat that starts round 1 bids
    before any bot may (each seat places one disc first), so it becomes the challenger and reaches
    the reveal whatever the bots do."""

    def rank(key: str) -> tuple[int, int]:
        fields = dict(part.split("=", 1) for part in key.split("&") if "=" in part)
        kind = fields.get("type", "")
        if kind == "bid":
            return (1, -int(fields.get("count", 0)))
        order = {"flip": 0, "pass": 2, "place_disc": 4 if fields.get("disc") == "skull" else 3}
        return (order.get(kind, 5), 0)

    best = min(rank(key) for key in keys)
    return rng.choice([i for i, key in enumerate(keys) if rank(key) == best])


def watched_play(page: Page, name: str, screenshots: Path, enough: Callable[[Page], bool]) -> Watch:
    """The person plays against paced bots until the game ends or ``enough(page)``; before each of
    the person's moves every bot move since the last was shown as a step of its own, in order, and
    the log kept its newest line in sight. One frame is shot mid-move.

    How many moves the person makes is the bots' chance, not the test's: two bots that bid every
    disc on the mats end a Skull game after two of the person's discs. So the frame is shot after
    the person's first move if need be, and again after a later one when the game lasts (a picture
    with more on the table; tried after ``LATER_TRIES`` moves at most, as each try is a wait that may
    come to nothing); the moves checked are counted by the caller once the game is over."""
    watch = Watch()
    shot_at: dict[str, int] = {}
    later_tries = [0]  # a later frame is a nicer picture, not a check: each try may wait for nothing

    def check(page: Page) -> None:
        watch.moves_shown_in_order(page)
        watch.log_follows(page)

    def mid_move(page: Page, moves: int) -> None:
        # A frame of the game while another seat's card or disc slides into place.
        if shot_at.get(name, 0) >= 2 or later_tries[0] >= LATER_TRIES:
            return
        if shot_at:
            later_tries[0] += 1
        page.mouse.move(1, 1)  # no card help under the pointer in the picture
        try:
            page.wait_for_function(SLIDING, timeout=ms(3), polling=POLL_MS)
        except PlaywrightTimeoutError:
            return  # nothing of another seat's moved in time: a later move is shot
        page.screenshot(path=screenshots / f"{name}-mid-move.png")
        shot_at[name] = moves

    chooser = skull_short_game if name == "skull" else None
    moves = play_and_watch(
        [page], random.Random(22), GAME_SECONDS, check, lambda page: chooser, mid_move, enough=enough
    )
    assert moves >= 1
    assert shot_at, "no move was caught mid-animation"
    return watch


WHOLE = GAMES[:2]  # Skull and 6 nimmt! (one round): whole games of a minute at most


@pytest.mark.parametrize(("title", "seats", "options", "name"), WHOLE, ids=[name for *_, name in WHOLE])
@pytest.mark.soak(reason="a whole game against bots paced as people see them, every move checked on screen")
def test_a_whole_game_against_paced_bots_shows_every_move_of_the_other_seats_in_order_and_the_log_follows(
    server: Server, browser, screenshots: Path, title: str, seats: int, options: dict[str, object], name: str
) -> None:
    page = watcher(browser, server.url)
    seat_against_bots(page, title, seats, options)
    watch = watched_play(page, name, screenshots, enough=lambda page: False)
    page.wait_for_selector("[data-testid=end-screen]")
    wait_shown(page)
    wait_log_caught_up(page)
    watch.moves_shown_in_order(page)
    watch.log_follows(page)
    assert watch.moves_seen >= 3, watch.moves_seen
    sheet = page.locator("[data-testid=score-sheet]")
    sheet.wait_for()
    assert sheet.locator("tbody tr").count() >= 1
    replay = page.locator("[data-testid=end-replay]").get_attribute("href")
    assert replay == f"/replay/{page.url.rsplit('/', 1)[1]}"
    page.mouse.move(1, 1)
    page.screenshot(path=screenshots / f"{name}-end-sheet.png", full_page=True)
    log_rounds = page.locator("[data-testid=log] .log-round").all_inner_texts()
    assert log_rounds and log_rounds[0].lower().startswith("round 1"), log_rounds
    page.context.close()


def test_skull_kings_first_rounds_against_a_paced_bot_show_every_move_of_the_other_seat_and_the_log_follows(
    server: Server, browser, screenshots: Path
) -> None:
    # Skull King's ten rounds repeat its first ones with more cards: two rounds show every kind of
    # step (bids revealed, cards played, a trick taken, a round scored); its whole game and end
    # sheet are played by two browsers in tests/browser/test_games.py.
    title, seats, options, name = GAMES[2]
    page = watcher(browser, server.url)
    seat_against_bots(page, title, seats, options)
    watch = watched_play(page, name, screenshots, enough=lambda page: read_round(page) > 2)
    wait_shown(page)
    wait_log_caught_up(page)
    watch.moves_shown_in_order(page)
    watch.log_follows(page)
    assert watch.moves_seen >= 3, watch.moves_seen
    log_rounds = page.locator("[data-testid=log] .log-round").all_inner_texts()
    assert [text.lower()[:7] for text in log_rounds[:3]] == ["round 1", "round 2", "round 3"], log_rounds
    page.context.close()


def read_round(page: Page) -> int:
    """The round the table's view is in (0: a view from before the deal, which has no round yet:
    the API's view may still be the one of the last join while the page shows the first move)."""
    round_number: int = read(page, f"/games/{game_id(page)}/view").get("round", 0)
    return round_number


@pytest.mark.soak(reason="plays the first round of each of the three games on a phone, every phase")
def test_on_a_phone_every_legal_move_is_a_button_on_screen_in_every_phase_of_each_games_first_round(
    server: Server, browser, screenshots: Path
) -> None:
    pages = {watcher(browser, server.url, width=390, height=844): name for _, _, _, name in GAMES}
    for page, (title, seats, options, name) in zip(pages, GAMES, strict=True):
        # the person (seat 0) starts Skull's round 1, so bids before any bot may
        seat_against_bots(page, title, seats, {"first_player": 0} if name == "skull" else options)
    phases: dict[str, set[str]] = {name: set() for name in pages.values()}
    rounds: dict[str, int] = {name: 1 for name in pages.values()}

    def check(page: Page) -> None:
        phase = Watch.legal_moves_on_screen(page)
        name = pages[page]
        if phase:
            if phase not in phases[name]:
                page.screenshot(path=screenshots / f"phone-{name}-{phase}.png")
            phases[name].add(phase)
        rounds[name] = read_round(page)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"

    def first_round_played(page: Page) -> bool:
        # Every phase a game has comes in its first round: Skull King's nine rounds more add none.
        return rounds[pages[page]] > 1

    bold = lambda page: bold_skull if pages[page] == "skull" else None  # noqa: E731
    play_and_watch(list(pages), random.Random(390), GAME_SECONDS, check, bold, enough=first_round_played)
    # Every round begins with placing (Skull), choosing (6 nimmt!), bidding and playing (Skull King);
    # the Skull seat bids all at its first chance in round 1, so it reveals as the challenger; the
    # other phases the seats reached depend on the game and were checked as well.
    assert {"placement", "reveal"} <= phases["skull"], phases
    assert "selecting" in phases["six-nimmt"], phases
    assert {"bidding", "playing"} <= phases["skull-king"], phases
    for page in pages:
        page.context.close()
