"""The default board and the default score sheet (services/api/static/js/games/default.js, table_end.js):
what a game without a board module of its own is played on. Here a real game's own module is made to
answer 404 (a Playwright route), so the table page falls back to the default board as it would for
such a game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, Route, expect

from domain.games import spec
from tests.browser import axe
from tests.browser.conftest import Server
from tests.browser.http_games import create, join, played_by_server_bots, seat_cookie
from tests.browser.play import player
from tests.support.waiting import wait_until

pytestmark = pytest.mark.browser

MOVES = "[data-board=default] [data-testid=moves] button"


def without_own_board(page: Page, game: str) -> None:
    """The game's own board module answers 404, as a game without one does."""
    module = f"**/js/games/{spec(game).package}.js"

    def missing(route: Route) -> None:
        route.fulfill(status=404, content_type="application/json", body='{"error": {"code": "not_found"}}')

    page.route(module, missing)


def seated(browser: Any, server: Server, game_id: str, token: str) -> Page:
    page = player(browser, server.url)
    name, value = seat_cookie(game_id, token)
    page.context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
    return page


def words(command: dict[str, Any]) -> str:
    """What the default board's button says for a command of Skull (no seat in it)."""
    args = [f"{key.replace('_', ' ')} {value}" for key, value in command.items() if key != "type"]
    kind = command["type"].replace("_", " ")
    return " · ".join([kind[0].upper() + kind[1:], *args])


def test_a_game_without_its_own_board_shows_its_state_and_each_legal_move_as_a_button_that_sends_it(
    server: Server, browser, screenshots: Path
) -> None:
    with httpx.Client(base_url=server.url) as client:
        game_id = create(client, "skull", 3, {})
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook", "Cleo")]
    page = seated(browser, server, game_id, tokens[0])
    without_own_board(page, "skull")
    page.goto(f"/tables/{game_id}")
    expect(page.locator(MOVES).first).to_be_visible()
    expect(page.locator("h1")).to_have_text("Skull")

    # The state: the game's own fields by name, its phase first; the table's own fields are not repeated.
    state = page.locator("[data-board=default] .state-area")
    expect(state.get_by_role("heading", name="The game")).to_be_visible()
    expect(state.locator("dl.state > .state-field").first.locator("dt")).to_have_text("Phase")
    expect(state.locator("[data-field=discs_on_mats] dd")).to_have_text("0")
    expect(state.locator("[data-field=hand] dd")).to_contain_text("flower 3")
    assert state.locator("[data-field=legal], [data-field=players], [data-field=game_id]").count() == 0
    expect(page.locator(".player[data-seat='1'] .pstat")).to_contain_text("discs 4")

    # The moves: one button with words per legal command of the seat's view, nothing else.
    view = page.request.get(f"/games/{game_id}/view").json()
    assert view["legal"], view
    expect(page.locator(MOVES)).to_have_text([words(command) for command in view["legal"]])
    expect(page.locator("[data-board=default]").get_by_role("heading", name="Your moves")).to_be_visible()
    assert page.locator("link[data-stylesheet=default]").count() == 1  # its own stylesheet, once
    assert page.locator("link[data-stylesheet=skull]").count() == 0  # the missing board's is not asked for
    found = axe.blocking(axe.violations(page))
    assert not found, axe.describe(found)
    page.screenshot(path=screenshots / "table-default-board.png", full_page=True)

    skull = next(command for command in view["legal"] if command.get("disc") == "skull")
    commands = f"/games/{game_id}/commands"
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith(commands)) as sent:
        page.get_by_role("button", name=words(skull)).click()
    assert sent.value.post_data_json["command"] == skull
    expect(state.locator("[data-field=own_stack] dd")).to_have_text("skull")
    expect(state.locator("[data-field=hand] dd")).to_contain_text("skull 0")
    wait_until(
        lambda: page.request.get(f"/games/{game_id}/view").json()["own_stack"] == ["skull"],
        10,
        "the server to have the seat's disc on its mat",
    )
    page.context.close()


def test_the_end_of_a_game_without_its_own_score_sheet_shows_the_default_sheet_of_its_rounds_and_totals(
    server: Server, browser
) -> None:
    with httpx.Client(base_url=server.url) as client:
        game_id = played_by_server_bots(client, "six-nimmt", 3, {"rounds": 2})
        pad = client.get(f"/games/{game_id}/scores").json()
        scores = client.get(f"/games/{game_id}/view").json()["scores"]
    page = player(browser, server.url)
    without_own_board(page, "six-nimmt")
    page.goto(f"/tables/{game_id}")
    sheet = page.locator("[data-testid=score-sheet]")
    expect(sheet).to_be_visible()
    expect(page.locator("[data-board=default]")).to_be_visible()

    rows = sheet.locator("tbody tr")
    expect(rows).to_have_count(len(pad["rounds"]))
    for index, line in enumerate(pad["rounds"]):
        expect(rows.nth(index).locator("th")).to_have_text(str(index + 1))
        expect(rows.nth(index).locator("td .pts")).to_have_text([str(n) for n in line])
    expect(sheet.locator("tfoot td")).to_have_text([str(n) for n in pad["totals"]])

    # 6 nimmt!'s fewest bullheads win (its spec's lower_score_wins): the final scores run from the lowest.
    assert spec("six-nimmt").lower_score_wins
    shown = [int(text) for text in page.locator(".end table.final td").all_inner_texts()]
    assert shown == sorted(scores) and len(shown) == 3
    page.context.close()


def test_the_tests_own_game_is_played_to_its_end_in_chromium_on_the_default_board_and_sheet(
    server: Server, browser, screenshots: Path
) -> None:
    """High Card (tests/games/high_card) has no board module, no stylesheet and no score sheet of its
    own: a person plays a whole game of it against the service's bot by pressing the default board's
    buttons, and reads the default sheet at the end."""
    game = spec("high-card")
    with httpx.Client(base_url=server.url) as client:
        created = client.post("/games", json={"game": game.name, "players": 2, "options": {}})
        assert created.status_code == 201, created.text
        game_id = created.json()["game_id"]
        token = join(client, game_id, "Ada")
        host = {"Authorization": f"Bearer {created.json()['host_token']}"}
        assert client.post(f"/games/{game_id}/bots", json={}, headers=host).status_code == 200
    page = seated(browser, server, game_id, token)
    page.goto(f"/tables/{game_id}")
    expect(page.locator("h1")).to_have_text(game.title)
    expect(page.locator("[data-board=default]")).to_be_visible()
    end = page.locator("[data-testid=end-screen]")

    def move_or_end() -> bool:
        """Press the first legal move when it is the seat's turn; true once the game is over."""
        if end.is_visible():
            return True
        buttons = page.locator(MOVES)
        if buttons.count():
            try:
                buttons.first.click(timeout=2_000)
            except Exception:  # the board redrew under the click: the next poll presses again
                return False
        return False

    wait_until(move_or_end, 120, "the person and the bot to finish the game of High Card")
    expect(page.locator(MOVES)).to_have_count(0)  # the board shows the end, with no moves left
    sheet = page.locator("[data-testid=score-sheet]")
    expect(sheet.locator("tbody tr")).to_have_count(2)  # two rounds by default
    with httpx.Client(base_url=server.url) as client:
        totals = client.get(f"/games/{game_id}/scores").json()["totals"]
    expect(sheet.locator("tfoot td")).to_have_text([str(n) for n in totals])
    assert sum(totals) == 6  # three tricks a round, each a point
    page.screenshot(path=screenshots / "high-card-end.png", full_page=True)
    page.context.close()
