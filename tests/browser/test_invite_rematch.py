"""Invitations and rematch in a real browser: a host makes a private table, copies its link, a friend
opens it, reads what they are invited to and sits down with one button; two players finish a game,
both press "Play again" and land at the new table."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import expect

from tests.browser import axe
from tests.browser.handover import down_to_one_card, seated_player
from tests.browser.http_games import create, join
from tests.browser.http_games import play as http_play
from tests.browser.play import create_table, finished, play, player
from tests.support.waiting import ms

PHONE_WIDTH, PHONE_HEIGHT = 390, 844


def test_a_friend_opens_a_private_tables_link_reads_the_invitation_and_sits_down(
    server: Any, browser: Any, screenshots: Path
) -> None:
    host = player(browser, server.url)
    host.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    game_id = create_table(host, "6 nimmt!", "Ada", 3, rounds=2, private=True)
    expect(host.locator("[data-testid=invite-box]")).to_contain_text("Private table")
    host.click("[data-testid=copy-link]")
    expect(host.locator("[data-testid=copy-status]")).to_have_text("Link copied: send it to your friends.")
    link = host.evaluate("navigator.clipboard.readText()")
    assert link.startswith(f"{server.url}/tables/{game_id}?invite=")
    assert host.locator("[data-testid=share-link]").count() == 0  # desktop Chromium: no share sheet
    host.screenshot(path=screenshots / "invitation-host.png")

    lobby = host.request.get("/games").json()
    assert game_id not in [g["game_id"] for g in lobby["games"]]

    visitor = player(browser, server.url)  # a desktop visitor who only looks
    visitor.goto(link)
    invitation = visitor.locator("[data-testid=invitation]")
    expect(invitation).to_contain_text("You are invited to a game of 6 nimmt!")
    expect(visitor.locator("[data-testid=invitation-options]")).to_contain_text("Fixed number of rounds")
    expect(visitor.locator("[data-testid=invitation-options]")).to_contain_text("2")
    expect(visitor.locator("[data-testid=invitation-seated]")).to_have_text("Ada")
    expect(visitor.locator("#join-seed")).to_be_hidden()  # the entropy field is under "Advanced"
    found = axe.blocking(axe.violations(visitor))
    assert not found, axe.describe(found)
    visitor.screenshot(path=screenshots / "invitation.png", full_page=True)

    friend = player(browser, server.url, width=PHONE_WIDTH, height=PHONE_HEIGHT)
    friend.goto(link)
    expect(friend.locator("[data-testid=invitation]")).to_be_visible()
    friend.fill("#join-name", "Bo")
    friend.screenshot(path=screenshots / "invitation-phone.png", full_page=True)
    buttons = friend.locator("[data-testid=join-form] button")
    assert buttons.count() == 1
    buttons.click()
    friend.wait_for_selector("[data-testid=table][data-seat='1']")
    expect(host.locator("#players-panel")).to_contain_text("Bo")
    expect(friend.locator("[data-testid=copy-link]")).to_be_visible()  # a seated friend passes it on

    stranger = player(browser, server.url)
    stranger.goto(f"/tables/{game_id}?invite=not-the-code")
    expect(stranger.locator("main")).to_contain_text("There is no such table.")
    assert stranger.request.get(f"/games/{game_id}/view").status == 404
    for page in (host, visitor, friend, stranger):
        page.context.close()


def test_two_players_finish_a_game_both_press_play_again_and_land_at_the_new_table(
    server: Any, browser: Any, screenshots: Path
) -> None:
    """The game is played over HTTP by seeded bots up to its last turn; Ada (a desktop) and Bo (a
    phone), seated by their seats' cookies, finish it by their controls and meet at its end screen."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "six-nimmt", 2, {"rounds": 1, "seed": REMATCH_SEED})
        tokens = [join(client, game_id, name) for name in ("Ada", "Bo")]
        http_play(client, game_id, tokens, seed=23, stop=down_to_one_card)
    host = seated_player(browser, server.url, game_id, tokens[0])
    friend = seated_player(browser, server.url, game_id, tokens[1], width=PHONE_WIDTH, height=PHONE_HEIGHT)
    for page, seat in ((host, "0"), (friend, "1")):
        page.goto(f"/tables/{game_id}")
        page.wait_for_selector(f"[data-testid=table][data-seat='{seat}'][data-status=playing]")
    assert play([host, friend], random.Random(23), finished([host, friend])) >= 1

    host.click("[data-testid=play-again]")
    expect(host.locator("[data-testid=rematch]")).to_contain_text("Waiting for the others")
    expect(friend.locator("[data-testid=rematch-answer-0]")).to_have_text("ready")  # learnt by the end screen
    friend.locator("[data-testid=rematch]").scroll_into_view_if_needed()
    friend.screenshot(path=screenshots / "rematch.png")
    friend.click("[data-testid=play-again]")

    for page, seat in ((host, "0"), (friend, "1")):
        page.wait_for_url(lambda url: "/tables/" in url and game_id not in url, timeout=ms(30))
        page.wait_for_selector(f"[data-testid=table][data-seat='{seat}'][data-status=playing]")
    new_id = host.url.rsplit("/", 1)[1]
    assert friend.url.rsplit("/", 1)[1] == new_id != game_id
    for page in (host, friend):
        page.context.close()


REMATCH_SEED = hashlib.sha256(b"rematch-six-nimmt").hexdigest()
