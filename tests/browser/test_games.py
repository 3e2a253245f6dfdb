"""Two browsers play whole games against each other through the web client's controls only."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Server
from tests.browser.handover import down_to_one_card, most_in_hand, seat_token, seated_player
from tests.browser.http_games import create, join
from tests.browser.http_games import play as http_play
from tests.browser.play import (
    PRACTICE_SEED,
    create_table,
    fill_with_bots,
    finished,
    join_from_lobby,
    join_table,
    play,
    player,
    status,
    wait_log_caught_up,
)

pytestmark = pytest.mark.browser


def test_two_browsers_play_a_whole_game_of_six_nimmt_to_the_end_screen(
    server: Server, browser, screenshots: Path
) -> None:
    host = player(browser, server.url)
    guest = player(browser, server.url)
    host.goto("/")
    host.screenshot(path=screenshots / "lobby.png", full_page=True)
    game_id = create_table(host, "6 nimmt!", "Ada", 2, rounds=1)
    join_table(guest, game_id, "Brook")
    host.wait_for_selector("[data-testid=table][data-status=playing]")

    def shoot(moves: int) -> None:
        if moves == 9:
            host.screenshot(path=screenshots / "six-nimmt-table.png", full_page=True)

    play([host, guest], random.Random(6), finished([host, guest]), on_move=shoot)

    for page in (host, guest):
        page.wait_for_selector("[data-testid=end-screen]")
        assert "won" in page.inner_text("[data-testid=winners]")
    assert host.locator("[data-testid=log] li").count() > 10
    host.context.close()
    guest.context.close()


def test_two_browsers_take_over_skull_king_at_round_nine_s_last_trick_and_play_round_ten_to_the_end_screen(
    server: Server, browser, screenshots: Path
) -> None:
    """Skull King has ten rounds and no option for fewer: seeded bots play the first eight and most of
    the ninth over HTTP, then Ada's and Brook's browsers, seated by their seats' cookies, play the
    ninth's last trick (its scoring, and the deal of the tenth) and the whole tenth round by their
    controls, to the end screen and its score pad of ten rounds."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id = create(client, "skull-king", 2, {"seed": SKULL_KING_SEED})
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook")]
        http_play(client, game_id, tokens, seed=7, stop=ninth_rounds_last_trick)
    host, guest = (seated_player(browser, server.url, game_id, token) for token in tokens)
    for page in (host, guest):
        page.goto(f"/tables/{game_id}")
        page.wait_for_selector("[data-testid=table][data-status=playing]")
    expect(host.locator("[data-testid=table] .round")).to_have_text("Round 9 of 10")

    def shoot(moves: int) -> None:
        if moves == 14:
            host.screenshot(path=screenshots / "skull-king-table.png", full_page=True)

    moves = play([host, guest], random.Random(7), finished([host, guest]), on_move=shoot)
    assert moves >= 22  # round ten in the browsers: two bids and twenty cards, after the ninth's last trick

    for page in (host, guest):
        page.wait_for_selector("[data-testid=end-screen]")
        assert status(page) == "finished"
    wait_log_caught_up(host)
    assert host.locator("[data-testid=log] li").last.inner_text().startswith("Game over")
    host.screenshot(path=screenshots / "skull-king-end.png", full_page=True)
    # The score pad arrives after the end screen (GET /games/{id}/scores): a line per round.
    expect(host.locator("[data-testid=score-sheet] tbody tr")).to_have_count(10)
    host.mouse.move(1, 1)
    host.screenshot(path=screenshots / "skull-king-end-sheet.png", full_page=True)
    host.context.close()
    guest.context.close()


SKULL_KING_SEED = hashlib.sha256(b"two-browsers-skull-king").hexdigest()


def ninth_rounds_last_trick(moves: int, views: list[dict[str, Any]]) -> bool:
    """Round nine's last trick is about to be played: one card (or none) left in each hand."""
    view = views[0]
    return view.get("round") == 9 and view.get("phase") == "playing" and most_in_hand(views) <= 1


def test_three_browsers_play_skull_with_discs_mats_and_bids_as_controls(
    server: Server, browser, screenshots: Path
) -> None:
    pages = [player(browser, server.url) for _ in range(3)]
    game_id = create_table(pages[0], "Skull", "Ada", 3)
    join_table(pages[1], game_id, "Brook")
    join_table(pages[2], game_id, "Cyd")
    # data-status is the view received; the board is drawn from the page's queue a moment later
    pages[0].wait_for_selector("[data-testid=table][data-shown-status=playing]")
    expect(pages[0].locator("[data-testid=mat-2]")).to_have_count(1)

    seen_bid = []

    def bidding_seen() -> bool:
        if any(page.locator("button[data-act=bid]").count() for page in pages):
            seen_bid.append(True)
        flipped = pages[0].locator(".mat .disc.up").count() > 0
        return (bool(seen_bid) and flipped) or finished(pages)()

    play(pages, random.Random(3), bidding_seen, seconds=30)
    pages[0].screenshot(path=screenshots / "skull-table.png", full_page=True)
    assert seen_bid
    for page in pages:
        page.context.close()


def skull_short_game(rng: random.Random, keys: list[str]) -> int:
    """Mostly click what ends a Skull game soon: flip, pass, the lowest bid, a rose; now and then anything."""
    if rng.random() < 0.1:
        return rng.randrange(len(keys))

    def rank(key: str) -> tuple[int, int]:
        fields = dict(part.split("=", 1) for part in key.split("&") if "=" in part)
        kind = fields.get("type", "")
        if kind == "bid":
            return (2, int(fields.get("count", 0)))
        order = {"flip": 0, "pass": 1, "place_disc": 4 if fields.get("disc") == "skull" else 3}
        return (order.get(kind, 5), 0)

    best = min(rank(key) for key in keys)
    return rng.choice([i for i, key in enumerate(keys) if rank(key) == best])


def play_with_a_bot(
    server: Server, browser, title: str, seed: int, seconds: float, last_turn: bool = False, **options: object
) -> list[Page]:
    """Ada creates a 3-seat practice table in the lobby, Brook joins from the lobby's list, Ada fills the
    last seat with a bot; both humans click controls until the end screen. ``last_turn``: the humans'
    seats play over HTTP (their browsers' seat tokens, seeded moves) beside the bot until one card is
    left in each hand, and the browsers, which follow it live, click only from there. Returns the two
    pages."""
    host = player(browser, server.url)
    guest = player(browser, server.url)
    game_id = create_table(host, title, "Ada", 3, seed=PRACTICE_SEED, turn_seconds=0, **options)
    join_from_lobby(guest, game_id, "Brook")
    host.wait_for_selector("[data-testid=table] .player[data-seat='1']")
    fill_with_bots(host)
    guest.wait_for_selector("[data-testid=table][data-status=playing]")
    if last_turn:
        tokens = [seat_token(page, game_id) for page in (host, guest)]
        with httpx.Client(base_url=server.url, timeout=10) as client:
            http_play(client, game_id, tokens, seed=seed, stop=down_to_one_card)
    choose = skull_short_game if title == "Skull" else None
    moves = play([host, guest], random.Random(seed), finished([host, guest]), seconds=seconds, choose=choose)
    assert moves >= 1
    for page in (host, guest):
        page.wait_for_selector("[data-testid=end-screen]")
        assert "won" in page.inner_text("[data-testid=winners]")
    wait_log_caught_up(host)
    log = host.inner_text("[data-testid=log]")
    assert "(bot)" in log, log[-2000:]
    assert host.locator("[data-testid=log] li").last.inner_text().startswith("Game over")
    return [host, guest]


def test_two_browsers_and_a_bot_the_host_seated_play_skull_to_the_end_screen(server: Server, browser) -> None:
    for page in play_with_a_bot(server, browser, "Skull", seed=11, seconds=60):
        page.context.close()


def test_two_browsers_and_a_bot_the_host_seated_play_the_last_turn_of_six_nimmt_to_the_end_screen(
    server: Server, browser
) -> None:
    for page in play_with_a_bot(server, browser, "6 nimmt!", seed=12, seconds=60, last_turn=True, rounds=1):
        page.context.close()
