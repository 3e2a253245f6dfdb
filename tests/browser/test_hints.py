"""Hints at a practice table and the strong bot's review in the replay, as a learner uses them: press
Hint, see the suggested move marked with its reason, play it; after the game, the replay says which
of the learner's own moves the strong bot would have played otherwise."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from projections.words import word
from tests.browser.conftest import Server
from tests.browser.http_games import PLAY_SECONDS, create, join, play, seat_cookie
from tests.browser.play import CALM, PAGE_ERRORS, POLL_MS
from tests.support.waiting import ms, wait_until

pytestmark = pytest.mark.browser

REVIEW_SECONDS = 90  # the review job runs on the server's worker after every other job
OWN_ROUNDS = 4  # the rounds Ada plays herself before she leaves the table to the bots
OWN_MOVES = sum(1 + cards for cards in range(1, OWN_ROUNDS + 1))  # a bid, and a card a trick, a round


@pytest.mark.soak(
    reason="a whole Skull King game (four rounds over HTTP, six by the service's bots), then its review,"
    " built at the lowest CPU priority"
)
def test_a_hint_marks_the_suggested_move_and_the_replay_shows_the_review(
    browser,
    server: Server,
    screenshots: Path,  # type: ignore[no-untyped-def]
) -> None:
    seed = hashlib.sha256(b"hints-skull-king").hexdigest()
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "skull-king", 2, {"seed": seed})
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook")]
    shots = {}
    for label, viewport in (
        ("desktop", {"width": 1366, "height": 900}),
        ("phone", {"width": 390, "height": 844}),
    ):
        context = browser.new_context(base_url=server.url, viewport=viewport, reduced_motion=CALM)
        name, value = seat_cookie(game_id, tokens[0])
        context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
        page = context.new_page()
        page.on("pageerror", lambda error, page=page: PAGE_ERRORS.append(f"{page.url}: {error}"))
        shots[label] = (context, page)
    phone = shots["phone"][1]
    phone.goto(f"/tables/{game_id}")
    phone.get_by_test_id("hint").click()
    expect(phone.locator(".act.hinted")).to_have_count(1)
    phone.screenshot(path=screenshots / "hint-phone.png")
    desk = shots["desktop"][1]
    desk.goto(f"/tables/{game_id}")
    hint = desk.get_by_test_id("hint")
    expect(hint).to_be_visible()
    hint.click()  # the game has not moved since the phone asked: the same hint, recorded once
    marked = desk.locator(".act.hinted")
    expect(marked).to_have_count(1)
    expect(desk.get_by_test_id("hint-text")).to_contain_text(
        word("en", "table.hintSuggests", move="").strip()
    )
    desk.screenshot(path=screenshots / "hint.png")
    bid = marked.get_attribute("data-key")
    marked.click()
    expect(desk.locator(".act.hinted")).to_have_count(0)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        mine = client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {tokens[0]}"}).json()
        assert mine["own_bid"] is not None and f"tricks={mine['own_bid']}" in (bid or "")
        # Four rounds played (seeded) over HTTP: Ada's own moves, the hinted bid among them, are 14 (a
        # bid and a card per trick in rounds 1 to 4). Then both leave the table to the service's bots,
        # which play rounds 5 to 10 at full speed (nobody is left to pace them for): the review is of
        # Ada's own moves, not the bots'.
        play(client, game_id, tokens, seed=5, stop=lambda moves, views: views[0]["round"] > OWN_ROUNDS)
        for token in tokens:
            left = client.post(
                f"/games/{game_id}/leave", json={}, headers={"Authorization": f"Bearer {token}"}
            )
            assert left.status_code == 200, left.text
        wait_until(
            lambda: client.get(f"/games/{game_id}/view").json()["status"] == "finished",
            PLAY_SECONDS,
            f"the service's bots to finish {game_id}",
        )
    desk.goto(f"/tables/{game_id}")
    expect(desk.get_by_test_id("hints-used")).to_be_visible()
    desk.goto(f"/replay/{game_id}")
    expect(desk.get_by_test_id("replay-hints-used")).to_be_visible()
    expect(desk.get_by_test_id("review-summary")).to_be_visible(timeout=ms(REVIEW_SECONDS))
    moves = desk.get_by_test_id("review-move")
    assert moves.count() > 10 and moves.count() == OWN_MOVES
    differing = desk.locator('[data-testid="review-move"][data-differs="true"]')
    if differing.count():
        differing.first.get_by_role("link").click()
        expect(desk.get_by_test_id("move-chip")).to_contain_text(word("en", "replay.reviewMark"))
    desk.screenshot(path=screenshots / "review.png", full_page=True)
    phone.goto(f"/replay/{game_id}")
    expect(phone.get_by_test_id("review-summary")).to_be_visible(timeout=ms(REVIEW_SECONDS))
    phone.get_by_test_id("review").scroll_into_view_if_needed()
    phone.screenshot(path=screenshots / "review-phone.png")
    for context, _ in shots.values():
        context.close()


def test_a_hint_stays_marked_while_another_seat_picks_its_card_and_the_seats_choices_are_unchanged(
    browser,  # type: ignore[no-untyped-def]
    server: Server,
) -> None:
    seed = hashlib.sha256(b"hints-six-nimmt").hexdigest()
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "six-nimmt", 2, {"seed": seed})
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook")]
    context = browser.new_context(
        base_url=server.url, viewport={"width": 1366, "height": 900}, reduced_motion=CALM
    )
    name, value = seat_cookie(game_id, tokens[0])
    context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
    page = context.new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    page.goto(f"/tables/{game_id}")
    page.get_by_test_id("hint").click()
    marked = page.locator(".act.hinted")
    expect(marked).to_have_count(1)
    hinted = marked.get_attribute("data-key")
    before = int(page.get_attribute("[data-testid=table]", "data-version") or 0)
    with httpx.Client(base_url=server.url, timeout=10) as client:  # Brook picks a card meanwhile
        brook = {"Authorization": f"Bearer {tokens[1]}"}
        card = client.get(f"/games/{game_id}/view", headers=brook).json()["legal"][0]
        body = {"command_id": "brook-1", "command": card}
        assert client.post(f"/games/{game_id}/commands", json=body, headers=brook).status_code == 200
    page.wait_for_function(  # drawn, not only received
        "v => Number(document.querySelector('[data-testid=table]').dataset.shownVersion) > v",
        arg=before,
        polling=POLL_MS,
    )
    expect(marked).to_have_count(1)  # Ada's hand and choices are as they were: the hint holds
    assert marked.get_attribute("data-key") == hinted
    suggests = word("en", "table.hintSuggests", move="").strip()
    expect(page.get_by_test_id("hint-text")).to_contain_text(suggests)
    marked.click()  # once Ada has played, her choices change and the hint goes
    expect(page.locator(".act.hinted")).to_have_count(0)
    context.close()
