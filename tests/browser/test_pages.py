"""The table page across a reload, at phone size and in another language; the replay viewer and the
audit page of a finished game."""

from __future__ import annotations

import random
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from bots import choose
from tests.browser.conftest import Server
from tests.browser.http_games import create, finished, join, seat_cookie
from tests.browser.http_games import play as http_play
from tests.browser.play import (
    POLL_MS,
    join_table,
    play,
    player,
    version,
    wait_log_caught_up,
)
from tests.support.waiting import Deadline, ms

pytestmark = pytest.mark.browser


def _log_versions(page) -> list[int]:  # type: ignore[no-untyped-def]
    return [
        int(v)
        for v in page.eval_on_selector_all("[data-testid=log] li", "els => els.map(e => e.dataset.version)")
    ]


def _bot_game(
    server: Server, game: str, players: int, options: dict[str, Any], bots: int
) -> tuple[str, list[str]]:
    """A table with ``bots`` seats taken over HTTP; returns its id and their seat tokens."""
    with httpx.Client(base_url=server.url) as client:
        game_id = client.post("/games", json={"game": game, "players": players, "options": options}).json()[
            "game_id"
        ]
        tokens = [
            client.post(f"/games/{game_id}/players", json={"name": f"Bot {i + 1}"}).json()["token"]
            for i in range(bots)
        ]
    return game_id, tokens


def _bots_play(server: Server, game_id: str, tokens: list[str], seed: int, moves: int | None) -> None:
    """Seeded bots play the seats of ``tokens`` over HTTP, each from its own fresh view, for ``moves``
    moves (None: until the game is over) or until none of them may move."""
    rng = random.Random(seed)
    made = 0
    deadline = Deadline(30)
    with httpx.Client(base_url=server.url) as client:
        while moves is None or made < moves:
            views = [
                client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}).json()
                for token in tokens
            ]
            movers = [(token, view) for token, view in zip(tokens, views, strict=True) if view["legal"]]
            if views[0]["status"] == "finished" or (not movers and moves is not None):
                return
            # Playing to the end: a seat's view may lag behind the other seat's last move for a moment.
            assert not deadline.passed(), "the bots' game did not end"
            for token, view in movers:
                body = {"command_id": uuid.uuid4().hex, "command": choose(view["game"], view, rng)}
                client.post(
                    f"/games/{game_id}/commands", json=body, headers={"Authorization": f"Bearer {token}"}
                )
                made += 1


def test_a_reload_mid_game_resumes_the_same_seat_and_log_without_gap_or_duplicate(
    server: Server, browser
) -> None:
    # The table is played over HTTP by seeded bot moves for both seats: the page of Ada's seat only
    # shows them, live, before and after its reload (how the moves are made is not what is tested).
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "six-nimmt", 2, {"rounds": 1})
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook")]
    host = player(browser, server.url)
    name, value = seat_cookie(game_id, tokens[0])
    host.context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
    host.goto(f"/tables/{game_id}")
    host.wait_for_selector("[data-testid=table][data-seat='0'][data-status=playing]")
    with httpx.Client(base_url=server.url, timeout=10) as client:
        http_play(client, game_id, tokens, seed=11, stop=lambda moves, views: views[0]["version"] >= 12)
    _shows_at_least(host, 12)
    wait_log_caught_up(host)
    before = _log_versions(host)
    seat_name = host.inner_text(".player.me .pname")
    assert seat_name.startswith("Ada"), seat_name

    host.reload()
    host.wait_for_selector("[data-testid=table][data-seat='0']")
    wait_log_caught_up(host)
    after = _log_versions(host)
    assert host.inner_text(".player.me .pname") == seat_name
    assert after[: len(before)] == before
    assert len(after) == len(set(after)) and after == sorted(after)

    with httpx.Client(base_url=server.url, timeout=10) as client:
        http_play(client, game_id, tokens, seed=12, stop=finished)
        # The stream's head (a view may be read from a projection a few versions behind it).
        head = client.get(f"/games/{game_id}/events", params={"limit": 1}).json()["version"]
    _shows_at_least(host, head)
    host.wait_for_selector("[data-testid=table][data-status=finished]")
    wait_log_caught_up(host)
    final = _log_versions(host)
    assert len(final) == len(set(final)) and final == sorted(final)
    assert final[-1] == version(host) == head
    host.context.close()


def _shows_at_least(page, at: int) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_function(
        "v => Number(document.querySelector('[data-testid=table]').dataset.version) >= v",
        arg=at,
        polling=POLL_MS,
    )


def test_what_a_visitor_types_into_the_join_form_survives_another_player_sitting_down(
    server: Server, browser
) -> None:
    game_id, _ = _bot_game(server, "skull", 4, {}, bots=1)
    page = player(browser, server.url)
    page.goto(f"/tables/{game_id}")
    page.wait_for_selector("[data-testid=join-form]")
    page.fill("#join-name", "Ada")
    before = version(page)
    with httpx.Client(base_url=server.url) as client:
        assert client.post(f"/games/{game_id}/players", json={"name": "Brook"}).status_code == 201
    page.wait_for_function(
        "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v",
        arg=before,
        polling=POLL_MS,
    )
    assert page.input_value("#join-name") == "Ada"
    assert page.evaluate("document.activeElement.id") == "join-name"
    page.context.close()


def test_a_table_page_fits_a_phone_and_plays_by_touch_sized_buttons(
    server: Server, browser, screenshots: Path
) -> None:
    game_id, tokens = _bot_game(server, "six-nimmt", 2, {"rounds": 1}, bots=1)
    phone = player(browser, server.url, width=390, height=844)
    join_table(phone, game_id, "Ada")
    phone.wait_for_selector("[data-testid=table][data-status=playing]")
    rng = random.Random(5)
    for _ in range(3):
        _bots_play(server, game_id, tokens, seed=5, moves=1)
        play([phone], rng, lambda: phone.locator("button[data-act]:enabled").count() == 0, seconds=10)
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    # A redraw under way (the change queue) may lay the hand out again between two looks, so the
    # height is read in the page, in one look, once a card of the hand is laid out.
    height = phone.wait_for_function(
        "() => { const card = document.querySelector('.hand .card-btn');"
        " const h = card ? card.getBoundingClientRect().height : 0; return h > 0 ? h : null; }",
        polling=POLL_MS,
    ).json_value()
    assert height >= 44, f"a card of the hand is {height}px tall on a phone"
    phone.screenshot(path=screenshots / "phone-table.png", full_page=True)
    phone.context.close()


def test_the_language_switch_changes_the_interface_and_the_log(server: Server, browser) -> None:
    game_id, tokens = _bot_game(server, "skull-king", 2, {}, bots=2)
    _bots_play(server, game_id, tokens, seed=8, moves=6)
    page = player(browser, server.url)
    page.goto(f"/tables/{game_id}")
    wait_log_caught_up(page)
    page.select_option("#lang-select", "en")
    wait_log_caught_up(page)
    english = _log_versions(page), page.inner_text("[data-testid=log]")
    assert page.text_content("#log-title") == "Table log"

    page.select_option("#lang-select", "pl")
    page.wait_for_function(
        "() => document.querySelector('#log-title').textContent === 'Przebieg gry'", polling=POLL_MS
    )
    wait_log_caught_up(page)
    assert page.evaluate("document.documentElement.lang") == "pl"
    assert _log_versions(page) == english[0]
    polish = page.inner_text("[data-testid=log]")
    assert polish != english[1]
    assert "Every seat is taken: the game begins" in english[1]
    assert "Wszystkie miejsca zajęte" in polish and "the game begins" not in polish
    page.select_option("#lang-select", "en")
    page.context.close()


OPTION_FIELDS = """(names) => {
    const read = {};
    for (const name of names) {
        const field = document.getElementById(`opt-${name}`);
        const label = document.querySelector(`label[for=opt-${name}]`);
        const helps = field ? field.parentElement.querySelectorAll(".help") : [];
        if (!label || helps.length !== 1) return null;
        const choices = [...field.querySelectorAll("option")].map((el) => [el.value, el.textContent]);
        read[name] = [label.innerText, helps[0].innerText, choices];
    }
    return read;
}"""


@pytest.mark.parametrize("language", ["pl", "fr", "tr"])
def test_every_table_option_is_named_and_explained_in_the_lobby_in_each_language(
    server: Server, browser, language: str
) -> None:
    options = httpx.get(f"{server.url}/games/options").json()
    page = player(browser, server.url)
    page.goto("/")
    page.wait_for_selector("[data-testid=create-form]")
    page.select_option("#lang-select", language)
    expect(page.locator("html")).to_have_attribute("lang", language)  # its words have arrived
    for game in options["games"]:
        page.locator("[data-testid=create-form]").get_by_text(game["title"], exact=True).first.click()
        page.click("details.options summary")
        # every option's label, help and choices, read in one look once they are all drawn
        fields = page.wait_for_function(
            OPTION_FIELDS, arg=[o["name"] for o in game["options"]], polling=POLL_MS
        )
        read = fields.json_value()
        for option in game["options"]:
            label, help_text, shown = read[option["name"]]
            assert label and "_" not in label, (option["name"], label)
            assert help_text and help_text != option["description"], (language, option["name"], help_text)
            if option["type"] == "choice":
                assert [value for value, _ in shown] == option["values"]
                assert all(text != value for value, text in shown), shown
        page.click("details.options summary")
    page.select_option("#lang-select", "en")
    page.context.close()


def test_a_page_whose_live_stream_is_refused_opens_it_again_by_itself_and_shows_the_next_moves(
    server: Server, browser
) -> None:
    game_id, tokens = _bot_game(server, "six-nimmt", 2, {"rounds": 1}, bots=2)
    _bots_play(server, game_id, tokens, seed=9, moves=2)
    page = player(browser, server.url)
    refused: list[str] = []

    def refuse(route) -> None:  # type: ignore[no-untyped-def]
        refused.append(route.request.url)
        body = '{"error": {"code": "shutting_down"}}'
        route.fulfill(status=503, content_type="application/json", body=body)

    page.route("**/live*", refuse)  # a busy or restarting server: the browser's EventSource gives up
    page.goto(f"/tables/{game_id}")
    page.wait_for_selector("[data-testid=table][data-live=closed]")
    page.unroute("**/live*")
    page.wait_for_selector("[data-testid=table][data-live=open]", timeout=ms(20))
    assert refused
    for moves in (2, 2):  # each pair of moves reaches the page by the stream alone, not by a reload
        before = version(page)
        _bots_play(server, game_id, tokens, seed=9 + before, moves=moves)
        page.wait_for_function(
            "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v",
            arg=before,
            polling=POLL_MS,
        )
    page.context.close()


def test_the_replay_steps_through_a_finished_game_and_the_audit_checks_its_seeds_in_the_browser(
    server: Server, browser, screenshots: Path
) -> None:
    game_id, tokens = _bot_game(server, "six-nimmt", 2, {"rounds": 1}, bots=2)
    _bots_play(server, game_id, tokens, seed=3, moves=None)
    page = player(browser, server.url)
    page.goto(f"/replay/{game_id}")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=position]')?.textContent", polling=POLL_MS
    )
    head = int(page.get_attribute("[data-testid=scrub]", "max") or 0)
    assert head > 20
    page.click("[data-testid=next]")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=scrub]').value === '2'", polling=POLL_MS
    )
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=scrub]').value === '3'", polling=POLL_MS
    )
    page.keyboard.press("ArrowLeft")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=scrub]').value === '2'", polling=POLL_MS
    )
    page.fill("[data-testid=scrub]", str(head // 2))
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=position]').textContent.includes('{head // 2}')",
        polling=POLL_MS,
    )
    assert page.locator(".seat-views .panel").count() == 2  # every seat's hand, revealed
    page.screenshot(path=screenshots / "replay.png", full_page=True)
    page.click("[data-testid=last]")
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=scrub]').value === '{head}'", polling=POLL_MS
    )

    page.click("[data-testid=audit-link]")
    page.wait_for_url(f"**/audit/{game_id}#round-*")
    page.wait_for_selector("[data-testid=browser-check-1][data-result=passed]")
    assert page.get_attribute("[data-testid=hash-chain] .mark", "class") == "mark ok"
    summary = page.inner_text("[data-testid=audit-summary]")
    ok, total = (int(n) for n in summary.split() if n.isdigit())
    assert ok == total
    page.screenshot(path=screenshots / "audit.png", full_page=True)
    page.context.close()
