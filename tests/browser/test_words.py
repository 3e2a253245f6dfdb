# ruff: noqa: RUF001 - Polish, French and Turkish words
"""Words in the browser: a Polish, French or Turkish page shows no English glossary text (lobby, rules,
a table in play, an end screen, the log); only the page's language file is loaded; errors are
worded from their codes; the lobby's player count and first-player seats follow the options."""

from __future__ import annotations

import functools
import random
import re
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from bots import choose
from domain.games import game_names, specs
from projections.words import GLOSSARY
from tests.browser.conftest import Server
from tests.browser.http_games import played_by_server_bots
from tests.browser.play import POLL_MS, join_table, player, version, wait_log_caught_up
from tests.support.waiting import Deadline, wait_until

pytestmark = pytest.mark.browser

# The games played move by move below, on their own boards' controls (``button[data-act]``); the
# rules pages are read for every registered game.
GAMES = ("skull", "six-nimmt", "skull-king")
SPECS = {game.name: game for game in specs()}
TITLES = {name: game.title for name, game in SPECS.items()}
PLACEHOLDER = re.compile(r"\{\w+\}")
# Every text node the page shows, with the placeholders and labels a screen reader reads.
VISIBLE_TEXT = """() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (text && node.parentElement.checkVisibility({ visibilityProperty: true })) out.push(text);
  }
  for (const el of document.querySelectorAll("[placeholder], [aria-label]")) {
    if (!el.checkVisibility({ visibilityProperty: true })) continue;
    for (const name of ["placeholder", "aria-label"]) {
      if (el.getAttribute(name)) out.push(el.getAttribute(name));
    }
  }
  return out;
}"""


@functools.cache
def english_patterns(lang: str) -> list[tuple[str, re.Pattern[str]]]:
    """One pattern per English glossary text that ``lang`` words differently: a whole text node
    matching it, or holding it when it is a phrase of two words or more, is English left behind."""
    theirs = {form for entry in GLOSSARY[lang].values() for form in _forms(entry)}
    patterns = []
    for key, entry in GLOSSARY["en"].items():
        if entry == GLOSSARY[lang][key]:
            continue
        for form in _forms(entry):
            words = re.findall(r"[A-Za-z]{2,}", PLACEHOLDER.sub("", form))
            if form in theirs or not words:
                continue
            literal = ".+".join(re.escape(part) for part in PLACEHOLDER.split(form))
            phrase = len(words) >= 2
            body = rf"(?<![\w]){literal}(?![\w])" if phrase else rf"^{literal}$"
            patterns.append((key, re.compile(body)))
    return patterns


def _forms(entry: Any) -> list[str]:
    return [entry] if isinstance(entry, str) else list(entry.values())


def english_in(page: Page, lang: str, where: str) -> list[str]:
    texts = page.evaluate(VISIBLE_TEXT)
    assert texts, where
    found = []
    for text in texts:
        for key, pattern in english_patterns(lang):
            if pattern.search(text):
                found.append(f"{where}: {text!r} is English ({key})")
                break
    return found


def in_language(browser, server: Server, lang: str) -> Page:  # type: ignore[no-untyped-def]
    """A page of a person who chose ``lang`` before: the choice is in localStorage and in the cookie the
    page sets beside it (from which the server preloads that language's glossary)."""
    page = player(browser, server.url)
    page.add_init_script(f"localStorage.setItem('tablestream.lang', '{lang}')")
    page.context.add_cookies([{"name": "tablestream.lang", "value": lang, "url": server.url}])
    return page


def new_table(server: Server, game: str, players: int) -> str:
    with httpx.Client(base_url=server.url) as client:
        answer = client.post("/games", json={"game": game, "players": players, "options": {}})
        assert answer.status_code == 201, answer.text
        return str(answer.json()["game_id"])


def finished_game(server: Server, game: str) -> str:
    """A table of ``game`` the service's own bots play to the end, at its fewest seats (the registry's
    ``min_players``: the same end screen and log entries as a larger table, in fewer moves)."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        return played_by_server_bots(client, game, SPECS[game].min_players, {})


def seat_bots(server: Server, game_id: str, names: list[str]) -> list[str]:
    with httpx.Client(base_url=server.url) as client:
        return [client.post(f"/games/{game_id}/players", json={"name": n}).json()["token"] for n in names]


def bots_move(
    server: Server,
    game_id: str,
    tokens: list[str],
    rng: random.Random,
    awaited: int,
    seen: int = 0,
) -> None:
    """The seats of ``tokens`` play (seeded) until the seat ``awaited`` is to act (or the game ends);
    nothing is decided on a view older than version ``seen`` (the page's own last move: a view from
    before it still awaits that seat in 6 nimmt!'s simultaneous turns)."""
    deadline = Deadline(60)
    with httpx.Client(base_url=server.url) as client:
        while not deadline.passed():
            table = client.get(f"/games/{game_id}/view").json()
            if table["version"] < seen:
                time.sleep(0.05)  # the poll's pace while the views catch up with the page's move
                continue
            if table["status"] == "finished" or awaited in table["to_act"]:
                return
            moved = False
            for token in tokens:
                headers = {"Authorization": f"Bearer {token}"}
                view = client.get(f"/games/{game_id}/view", headers=headers).json()
                if view["legal"]:
                    body = {"command_id": uuid.uuid4().hex, "command": choose(view["game"], view, rng)}
                    moved = client.post(f"/games/{game_id}/commands", json=body, headers=headers).is_success
            if not moved:
                time.sleep(0.05)  # the poll's pace while the views catch up with the last move
    raise AssertionError(f"seat {awaited} was never awaited")


@pytest.mark.parametrize(("lang", "playing", "ended"), [("pl", 0, 1), ("fr", 1, 2), ("tr", 2, 0)])
def test_a_page_in_polish_french_or_turkish_shows_no_english_words(
    server: Server, browser, screenshots: Path, lang: str, playing: int, ended: int
) -> None:
    # The finished game watched last is played by the service's bots meanwhile, beside the pages.
    background = ThreadPoolExecutor(1)
    try:
        finishing = background.submit(finished_game, server, GAMES[ended])
        english = pages_in(server, browser, screenshots, lang, playing, (GAMES[ended], finishing.result))
    finally:
        background.shutdown(wait=False, cancel_futures=True)
    assert english == []


def pages_in(  # type: ignore[no-untyped-def]
    server: Server,
    browser,
    screenshots: Path,
    lang: str,
    playing: int,
    ended: tuple[str, Callable[[], str]],
) -> list[str]:
    """What English the pages in ``lang`` show: the lobby, the rules, a table of ``GAMES[playing]``
    waiting and then in play, and the finished table of ``ended`` (its game, and its id once over)."""
    rng = random.Random(lang)
    page = in_language(browser, server, lang)
    english: list[str] = []

    page.goto("/")
    page.wait_for_selector("[data-testid=create-form]")
    assert page.evaluate("document.documentElement.lang") == lang
    page.click("details.options summary")
    page.click("[data-testid=advanced] summary")
    english += english_in(page, lang, "lobby")

    for game in game_names():
        page.goto(f"/rules/{game}")
        page.wait_for_selector("[data-testid=rules-variants]")
        english += english_in(page, lang, f"rules of {game}")

    # A table waiting for its last player, then in play, seen by that player.
    game = GAMES[playing]
    game_id = new_table(server, game, 3)
    tokens = seat_bots(server, game_id, ["Ola", "Jan"])
    page.goto(f"/tables/{game_id}")
    page.wait_for_selector("[data-testid=join-form]")
    english += english_in(page, lang, f"{game} waiting")
    join_table(page, game_id, "Ada")
    seat = int(page.get_attribute("[data-testid=table]", "data-seat") or 0)
    for move in range(3):
        bots_move(server, game_id, tokens, rng, awaited=seat, seen=version(page))
        page.wait_for_selector("[data-testid=table] .board button[data-act]:enabled")
        wait_log_caught_up(page)
        english += english_in(page, lang, f"{game} in play, move {move}")
        before = version(page)
        page.locator("[data-testid=table] .board button[data-act]:enabled").first.click()
        page.wait_for_function(  # the move is shown (it may be this seat's turn again at once)
            "v => Number(document.querySelector('[data-testid=table]').dataset.version) > v",
            arg=before,
            polling=POLL_MS,
        )
    page.screenshot(path=screenshots / f"words-{game}-{lang}.png")

    # A finished game, watched: the end screen and the whole log.
    game, finished = ended
    game_id = finished()
    page.goto(f"/tables/{game_id}")
    page.wait_for_selector("[data-testid=end-screen]")
    wait_log_caught_up(page)
    english += english_in(page, lang, f"{game} finished")
    page.context.close()
    return english


def test_the_page_loads_only_its_own_language_and_another_one_when_switched(server: Server, browser) -> None:
    page = in_language(browser, server, "fr")
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/lang/" in request.url else None)
    page.goto("/")
    page.wait_for_selector("[data-testid=create-form]")
    assert [url.rsplit("/", 1)[1] for url in asked] == ["fr.json"]
    assert page.inner_text("[data-testid=create]") == GLOSSARY["fr"]["lobby.createBtn"]
    page.select_option("#lang-select", "tr")
    expect(page.locator("[data-testid=create]")).to_have_text(GLOSSARY["tr"]["lobby.createBtn"])
    assert [url.rsplit("/", 1)[1] for url in asked] == ["fr.json", "tr.json"]
    assert page.get_attribute("#lang-select", "aria-label") == GLOSSARY["tr"]["nav.language"]
    page.context.close()


def test_an_error_is_worded_from_its_code_in_the_pages_language(server: Server, browser) -> None:
    page = in_language(browser, server, "pl")
    page.goto("/")
    page.wait_for_selector("[data-testid=create-form]")
    said = page.evaluate("""async () => {
      const api = await import(new URL("api.js", document.querySelector("script[type=module]").src).href);
      const refused = await api.games.view("nosuchtable").catch((e) => e);
      const unknown = new api.ApiError(418, "a_code_nobody_knows", "The server's own sentence.");
      return { code: refused.code, message: refused.message, unknown: unknown.message };
    }""")
    assert said == {
        "code": "game_not_found",
        "message": GLOSSARY["pl"]["err.game_not_found"],
        "unknown": "The server's own sentence.",
    }
    page.context.close()


def test_the_lobby_counts_seats_from_one_and_follows_the_options(server: Server, browser) -> None:
    page = in_language(browser, server, "en")
    page.goto("/")
    page.locator("[data-testid=create-form]").get_by_text("Skull", exact=True).first.click()
    card = page.locator(".game-card", has_text="Skull").first
    expect(card.locator(".game-players")).to_have_text("3–6 players (up to 12 with two boxes)")
    expect(page.locator("#players")).to_have_attribute("max", "6")
    expect(page.locator("#players-help")).to_contain_text("up to 12 with “Two boxes”")
    page.click("details.options summary")
    assert page.evaluate("getComputedStyle(document.querySelector('.opt-name')).textTransform") == "none"
    page.check("#opt-two_sets")
    expect(page.locator("#players")).to_have_attribute("max", "12")
    page.fill("#players", "9")
    seats = page.eval_on_selector_all(
        "#opt-first_player option", "els => els.map(e => [e.value, e.textContent])"
    )
    assert seats[:3] == [["", "Drawn by lot"], ["0", "Seat 1 (you)"], ["1", "Seat 2"]] and len(seats) == 10
    page.uncheck("#opt-two_sets")
    expect(page.locator("#players")).to_have_value("6")
    assert page.locator("#opt-first_player option").count() == 7
    page.select_option("#opt-first_player", "1")
    page.fill("#name", "Ada")
    page.click("[data-testid=create]")
    page.wait_for_url("**/tables/*")
    game_id = page.url.rsplit("/", 1)[1]
    options = httpx.get(f"{server.url}/games/{game_id}/view").json()["options"]
    assert options["first_player"] == 1
    page.context.close()


def test_the_rules_page_of_each_game_is_linked_from_the_lobby(
    server: Server, browser, screenshots: Path
) -> None:
    page = in_language(browser, server, "en")
    page.goto("/")
    for game in game_names():
        page.click(f"[data-testid=rules-{game}]")
        page.wait_for_url(f"**/rules/{game}")
        page.wait_for_selector("[data-testid=rules-variants] dt")
        assert page.inner_text("h1") == f"Rules of {TITLES[game]}"
        labels = page.locator("[data-testid=rules-variants] dt").all_inner_texts()
        assert labels and all(label.lstrip("“„«\"' ")[0].isupper() for label in labels), labels
        if game == "skull-king":
            expect(page.locator("[data-testid=rules-cards] dt")).to_have_count(6)
            page.screenshot(path=screenshots / "rules-skull-king.png", full_page=True)
        page.click("[data-testid=rules-start]")
        page.wait_for_url(f"{server.url}/")
        expect(page.locator(f".game-choice:has(input[value='{game}'])")).to_have_class(re.compile(r"\bon\b"))
    page.goto("/rules/chess")
    page.wait_for_selector("[data-testid=rules-unknown]")
    page.context.close()


def test_a_rules_page_fits_a_phone(server: Server, browser, screenshots: Path) -> None:
    page = player(browser, server.url, width=390, height=844)
    page.add_init_script("localStorage.setItem('tablestream.lang', 'tr')")
    page.goto("/rules/skull")
    page.wait_for_selector("[data-testid=rules-variants] dt")
    wait_until(lambda: page.evaluate("document.documentElement.scrollWidth") <= 390, 5, "no sideways scroll")
    page.screenshot(path=screenshots / "rules-phone-tr.png", full_page=True)
    page.context.close()
