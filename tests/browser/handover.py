"""Handing a table played over HTTP to browsers: a page seated by its seat's cookie, a page's own seat
token read back from its cookies, and the seats' hands counted, for a stop of ``http_games.play``."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Browser, Page

from tests.browser.http_games import seat_cookie
from tests.browser.play import player


def seated_player(browser: Browser, base_url: str, game_id: str, token: str, **viewport: Any) -> Page:
    """A :func:`~tests.browser.play.player` page that holds the seat of ``token`` (its HttpOnly seat
    cookie, as the server sets it when a browser joins), not yet at the table."""
    page = player(browser, base_url, **viewport)
    name, value = seat_cookie(game_id, token)
    page.context.add_cookies([{"name": name, "value": value, "url": base_url, "httpOnly": True}])
    return page


def seat_token(page: Page, game_id: str) -> str:
    """The seat token the server gave this page's browser when it sat down at ``game_id``."""
    name = seat_cookie(game_id, "")[0]
    tokens = [cookie["value"] for cookie in page.context.cookies() if cookie["name"] == name]
    assert len(tokens) == 1, f"the browser holds {len(tokens)} seats at {game_id}"
    return tokens[0]


def most_in_hand(views: list[dict[str, Any]]) -> int:
    """The most cards any of these seats holds (a seat's view shows its own hand)."""
    return max(len(view.get("hand") or ()) for view in views)


def down_to_one_card(moves: int, views: list[dict[str, Any]]) -> bool:
    """A stop for ``http_games.play``: the game is on and no seat holds more than one card."""
    return views[0]["status"] == "playing" and bool(views[0].get("hand")) and most_in_hand(views) <= 1
