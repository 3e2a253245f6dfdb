"""The operator's console in the browser: an account made an operator with ``tablestream operator
grant`` finds a table by a player's name, closes it, reads a chat report with the message's text and
marks it handled - by keyboard, on a desktop and on a 390 px phone, with no serious axe finding."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.browser import axe
from tests.browser.conftest import Server
from tests.browser.play import MOVE_SECONDS, player, register
from tests.support.waiting import ms, wait_until

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
ROOT = Path(__file__).resolve().parents[2]


def redis_url(server: Server) -> str:
    """The server's (embedded) Redis, as it printed it when it started."""
    assert server.log is not None
    found = re.search(r"\(Redis: (redis://[^)\s]+)\)", server.log.read_text())
    assert found, "the server did not print its Redis URL"
    return found.group(1)


def grant(server: Server, name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli", "operator", "grant", name, "--redis-url", redis_url(server)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is now an operator" in done.stdout


def reported_table(server: Server, rude: str) -> str:
    """A running Skull table where ``rude`` insults the others in chat, and a seat reports it."""
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id: str = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        tokens = []
        for name in (rude, "Patient Pam", "Quiet Quentin"):
            joined = client.post(f"/games/{game_id}/players", json={"name": name})
            assert joined.status_code == 201, joined.text
            tokens.append(joined.json()["token"])
        said = client.post(
            f"/games/{game_id}/chat",
            json={"text": "you are all hopeless"},
            headers={"Authorization": f"Bearer {tokens[0]}"},
        )
        assert said.status_code == 201, said.text
        report = client.post(
            f"/games/{game_id}/chat/report",
            json={"messages": [1], "reason": "abuse"},
            headers={"Authorization": f"Bearer {tokens[1]}"},
        )
        assert report.status_code == 201, report.text
    return game_id


def no_sideways_scroll(page: Page) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"))


def serious(page: Page) -> list[dict[str, Any]]:
    return axe.blocking(axe.violations(page))


def test_an_operator_finds_a_table_closes_it_and_handles_a_chat_report_by_keyboard(
    server: Server, browser, screenshots: Path
) -> None:
    olga = player(browser, server.url)
    register(olga, "Olga Operator", password="watchful eyes")
    grant(server, "Olga Operator")
    game_id = reported_table(server, "Rude Ralph")

    olga.goto("/operator")
    expect(olga.locator("[data-testid=op-me]")).to_contain_text("Olga Operator")
    expect(olga.locator("[data-testid=op-fig-health]")).to_have_text("Ready")
    expect(olga.locator("[data-testid=op-report]").first).to_be_visible()

    # find the table by a player's name, by keyboard: type, Enter submits the search
    olga.focus("#op-query")
    olga.keyboard.type("rude ralph")
    olga.keyboard.press("Enter")
    row = olga.locator(f"[data-testid=op-table][data-game-id='{game_id}']")
    expect(row).to_be_visible()
    expect(row.locator("[data-testid=op-table-status]")).to_have_text("In play")

    # close it: the button, then the reason (focused at once), Enter confirms
    row.locator("[data-testid=op-close]").focus()
    olga.keyboard.press("Enter")
    expect(row.locator("[data-testid=close-reason]")).to_be_focused()
    olga.keyboard.type("abusive chat, players asked for help")
    olga.keyboard.press("Enter")
    expect(row.locator("[data-testid=op-table-status]")).to_have_text("Closed")

    def public_view() -> dict[str, Any]:
        view: dict[str, Any] = httpx.get(f"{server.url}/games/{game_id}/view", timeout=5).json()
        return view

    # a spectator's view is the projection's: it shows the close once the worker has projected it
    closed = wait_until(
        lambda: (view := public_view())["status"] == "closed" and view,
        MOVE_SECONDS,
        "the closed table's public view",
        details=lambda: str(public_view()),
    )
    assert closed["to_act"] == []

    # the report shows the message's text; mark it handled with a note
    report = olga.locator("[data-testid=op-report]").filter(has_text=game_id)
    expect(report.locator("[data-testid=op-message]")).to_contain_text("Rude Ralph: you are all hopeless")
    report.locator("[data-testid=op-handle]").focus()
    olga.keyboard.press("Enter")
    expect(report.locator("[data-testid=handle-reason]")).to_be_focused()
    olga.keyboard.type("table closed, account to watch")
    olga.keyboard.press("Enter")
    expect(report.locator("[data-testid=op-handled]")).to_have_text(
        "Handled by Olga Operator: table closed, account to watch"
    )
    expect(report).to_contain_text("Handled")

    # the audit log names who did both
    audit = olga.locator("[data-testid=op-audit-entry]")
    expect(audit.filter(has_text=game_id).locator("[data-testid=op-audit-who]")).to_have_text("Olga Operator")
    expect(olga.locator("[data-testid=op-audit-entry][data-action=report_handled]").first).to_be_visible()

    expect(olga.locator("#toast")).to_be_hidden(timeout=ms(15))  # the "closed" notice has gone
    olga.screenshot(path=screenshots / "operator.png", full_page=True)
    found = serious(olga)
    assert found == [], axe.describe(found)

    olga.set_viewport_size(PHONE)
    expect(olga.locator("[data-testid=operator]")).to_be_visible()
    assert no_sideways_scroll(olga)
    found = serious(olga)
    assert found == [], axe.describe(found)

    # the table's own page says it was closed
    olga.locator(f"[data-testid=op-table][data-game-id='{game_id}'] a").click()
    olga.wait_for_selector("[data-testid=table][data-status=closed]")
    expect(olga.locator("main")).to_contain_text("An operator closed this table")


def test_the_console_page_is_refused_to_a_player_who_is_not_an_operator(server: Server, browser) -> None:
    paul = player(browser, server.url)
    register(paul, "Plain Paul")

    answer = paul.goto("/operator")

    assert answer is not None and answer.status == 403
    expect(paul.locator("[data-testid=op-refused]")).to_contain_text("This page needs operator rights")
