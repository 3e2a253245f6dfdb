"""axe-core over every page state the browser tests reach, on a desktop (1366x768) and a phone (390x844):
no critical and no serious violation.

The states: the lobby (a visitor, and signed in), each game's table waiting for players, in play (a
seat whose move is awaited, its controls enabled), finished (the end screen), a table watched, the
replay and the audit of a finished game (the replay also without the game boards it borrows from the
table, so that its own controls are checked even while those boards are known to fail), a game's
leaderboard, a player's page, and the rules page of each game once the server has one. The games
are set up over HTTP (guests and two registered accounts play seeded bot moves), then each page is
opened with the seat's or the account's cookie, as the browser that played would hold it.

A state whose violations come from a page another branch is rewriting is marked ``xfail(strict=True)``
with the rules seen (``KNOWN``): it must fail for exactly that reason, and it turns red the day the
page is fixed, so the marker is removed then. The module prints a table of the violated rules per
impact for every state (``TABLESTREAM_AXE_REPORT=<path>`` also writes them as JSON).

Pages are rendered with ``prefers-reduced-motion: reduce``: axe measures contrast on the page as it
is, and an element caught mid-transition would give a different answer from run to run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from playwright.sync_api import Page

from domain.games import game_names, spec
from tests.browser import axe
from tests.browser.conftest import Server
from tests.browser.http_games import create, finished, join, play, seat_cookie
from tests.browser.play import ACTIONS, CALM, MOVE_SECONDS, PAGE_ERRORS, POLL_MS
from tests.support.waiting import ms, wait_until

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
GAMES = {name: spec(name).min_players for name in game_names()}  # every registered game, fewest seats
RATED = "six-nimmt"  # the game whose finished table is rated: replay, audit, leaderboard and player pages
ACCOUNTS = ("Wren Axe", "Yuki Axe")
NO_TIMER = {"turn_seconds": 0}  # a table waiting on a seat for the whole module must not time out
IN_PLAY_MOVES = 8  # enough for the log to scroll, as it does in a real game


def practice(game: str) -> dict[str, Any]:
    """A practice table: the same deal on every run, so every run checks the same cards."""
    return {"seed": hashlib.sha256(f"accessibility-{game}".encode()).hexdigest(), **NO_TIMER}


READY_SECONDS = 30.0


@dataclass(frozen=True)
class State:
    """One page state: where it is, which cookies the browser holds, and what shows it is drawn."""

    name: str
    path: str
    ready: str
    cookies: tuple[tuple[str, str], ...] = ()
    storage: tuple[tuple[str, str], ...] = ()  # localStorage entries the page finds at load
    prepare: Callable[[Page], None] | None = None  # what a person does to reach the state, once drawn
    exclude: tuple[str, ...] = ()  # parts of the page not checked in this state


# -- setting the games up over HTTP ------------------------------------------------------------


def _signed_in(account: dict[str, str]) -> dict[str, Any]:
    """The account cookie, and the public part of the account the page keeps in localStorage."""
    known = json.dumps({"account_id": account["account_id"], "name": account["name"]})
    return {"cookies": (("ts_account", account["token"]),), "storage": (("tablestream.account", known),)}


def _replay_halfway(page: Page) -> None:
    """Scrub the replay to the middle of the game: boards with cards in hand and on the table."""
    middle = int(page.get_attribute("[data-testid=scrub]", "max") or 2) // 2
    page.fill("[data-testid=scrub]", str(middle))
    page.wait_for_function(
        "n => document.querySelector('[data-testid=position]').textContent.includes(String(n))",
        arg=middle,
        polling=POLL_MS,
    )


def _set_up(server: Server) -> list[State]:
    states: list[State] = []
    with httpx.Client(base_url=server.url, timeout=10) as client:
        accounts = []
        for name in ACCOUNTS:
            registered = client.post("/accounts", json={"name": name})
            assert registered.status_code == 201, registered.text
            accounts.append(registered.json())
        client.cookies.clear()
        states += [
            State("lobby", "/", "[data-testid=create-form]"),
            State("lobby signed in", "/", "[data-testid=signed-in]", **_signed_in(accounts[0])),
        ]
        rated: tuple[str, str] | None = None  # the rated game and its first seat's token
        for number, (game, players) in enumerate(GAMES.items()):
            waiting = create(client, game, GAMES[game], practice(game))
            states.append(
                State(
                    f"{game} waiting",
                    f"/tables/{waiting}",
                    "[data-testid=table][data-status=waiting]",
                    (seat_cookie(waiting, join(client, waiting, "Ada")),),
                )
            )
            playing = create(client, game, GAMES[game], practice(game))
            tokens = [join(client, playing, f"Guest {seat + 1}") for seat in range(players)]
            play(
                client,
                playing,
                tokens,
                number,
                lambda moves, views: moves >= IN_PLAY_MOVES and bool(views[0]["legal"]),
            )
            states.append(
                State(f"{game} in play", f"/tables/{playing}", ACTIONS, (seat_cookie(playing, tokens[0]),))
            )
            if game == RATED:
                states.append(
                    State(f"{game} watched", f"/tables/{playing}", "[data-testid=table][data-status]")
                )
            if game == RATED:  # every seat a registered player: a rated game (provisional ratings)
                over = create(client, game, GAMES[game], {"rounds": 1})
                tokens = [join(client, over, None, account["token"]) for account in accounts]
                rated = (over, tokens[0])
            else:
                over = create(client, game, GAMES[game], practice(game))
                tokens = [join(client, over, f"Guest {seat + 1}") for seat in range(players)]
            play(client, over, tokens, number, finished)
            states.append(
                State(
                    f"{game} finished",
                    f"/tables/{over}",
                    "[data-testid=end-screen]",
                    (seat_cookie(over, tokens[0]),),
                )
            )
        assert rated is not None
        wait_until(  # one game each: provisional, counted on the leaderboard page, not listed
            lambda: client.get(f"/leaderboards/{RATED}").json()["provisional_hidden"] >= 2,
            MOVE_SECONDS,
            "a rated game",
        )
        seat = (seat_cookie(*rated),)
        states += [
            State(
                "replay", f"/replay/{rated[0]}", "[data-testid=replay-event]", seat, prepare=_replay_halfway
            ),
            State(
                "replay, boards aside",
                f"/replay/{rated[0]}",
                "[data-testid=replay-event]",
                seat,
                prepare=_replay_halfway,
                exclude=(".game",),
            ),
            State("audit", f"/audit/{rated[0]}", "[data-testid=browser-check-1][data-result=passed]", seat),
            State(
                "leaderboard",
                f"/rankings/{RATED}",
                "[data-testid=leaderboard] [data-testid=provisional-hidden]",
            ),
            State(
                "player",
                f"/players/{quote(ACCOUNTS[0])}",
                "[data-testid=history] > li",
                **_signed_in(accounts[0]),
            ),
        ]
        states += [State(f"rules {game}", f"/rules/{game}", "#main h1") for game in GAMES]
    return states


@pytest.fixture(scope="module")
def states(server: Server) -> dict[str, State]:
    return {state.name: state for state in _set_up(server)}


@pytest.fixture(scope="module")
def report(request: pytest.FixtureRequest) -> Iterator[dict[tuple[str, str], list[dict[str, Any]]]]:
    """Every state's violations, printed as a table when the module is done."""
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    yield found
    lines = [
        f"axe-core {axe.axe_version()}: violated rules (elements) by impact, per page state",
        f"{'page state':<24} {'viewport':<8} " + " ".join(f"{i:>13}" for i in axe.IMPACTS) + "  rules",
    ]
    for (state, viewport), violations in found.items():
        cells = []
        for impact in axe.IMPACTS:
            rules = [v for v in violations if v["impact"] == impact]
            cells.append(f"{len(rules):>5} ({sum(len(v['nodes']) for v in rules):>4})")
        ids = ", ".join(sorted({v["id"] for v in violations if v["impact"] in axe.BLOCKING}))
        lines.append(f"{state:<24} {viewport:<8} " + " ".join(f"{c:>13}" for c in cells) + f"  {ids}")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # a teardown's output is captured otherwise
            reporter.write_line("")
            for line in lines:
                reporter.write_line(line)
    path = os.environ.get("TABLESTREAM_AXE_REPORT")
    if path:
        rows = [{"state": s, "viewport": v, "violations": found[(s, v)]} for s, v in found]
        with open(path, "w", encoding="utf-8") as out:
            json.dump({"axe": axe.axe_version(), "states": rows}, out, indent=1)


# -- the states and what is known about them ------------------------------------------------------

STATE_NAMES = [
    "lobby",
    "lobby signed in",
    *(f"{game} {phase}" for game in GAMES for phase in ("waiting", "in play", "finished")),
    f"{RATED} watched",
    "replay",
    "replay, boards aside",
    "audit",
    "leaderboard",
    "player",
    *(f"rules {game}" for game in GAMES),
]

KNOWN: dict[str, tuple[tuple[str, ...], str]] = {}
"""Page state -> the serious rules axe is known to report there and where they come from (none
today). A state listed here must fail with those rules only (``UnexpectedViolation`` otherwise);
once fixed it passes, the strict xfail turns red, and the entry goes."""


class UnexpectedViolation(Exception):
    """A known state shows a serious rule that is not in ``KNOWN``: a regression, never an xfail."""


def _cases() -> list[Any]:
    cases = []
    for name in STATE_NAMES:
        for viewport in VIEWPORTS:
            marks = []
            if name in KNOWN:
                rules, where = KNOWN[name]
                reason = f"{', '.join(rules)} from {where}"
                marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
            case = f"{name}-{viewport}".replace(",", "").replace(" ", "-")
            cases.append(pytest.param(name, viewport, marks=marks, id=case))
    return cases


@pytest.mark.parametrize(("name", "viewport"), _cases())
def test_a_page_state_has_no_critical_or_serious_accessibility_violation(
    server: Server, browser, states: dict[str, State], report: dict[Any, Any], name: str, viewport: str
) -> None:
    state = states[name]
    if state.path.startswith("/rules/") and httpx.get(f"{server.url}{state.path}").status_code == 404:
        pytest.skip("no rules page on this server yet")
    context = browser.new_context(base_url=server.url, viewport=VIEWPORTS[viewport], reduced_motion=CALM)
    context.add_cookies(
        [{"name": key, "value": value, "url": server.url, "httpOnly": True} for key, value in state.cookies]
    )
    for key, value in state.storage:
        context.add_init_script(f"localStorage.setItem({json.dumps(key)}, {json.dumps(value)})")
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    try:
        page.goto(state.path)
        page.wait_for_selector(state.ready, timeout=ms(READY_SECONDS))
        if state.prepare is not None:
            state.prepare(page)
        found = axe.violations(page, state.exclude)
    finally:
        context.close()
    report[(name, viewport)] = found
    serious = axe.blocking(found)
    unexpected = [v for v in serious if v["id"] not in KNOWN.get(name, ((), ""))[0]]
    if name in KNOWN and unexpected:
        raise UnexpectedViolation(f"{name} on a {viewport}:\n{axe.describe(unexpected)}")
    assert not serious, f"{name} on a {viewport}:\n{axe.describe(serious)}"
