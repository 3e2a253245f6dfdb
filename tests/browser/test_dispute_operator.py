"""An operator resolves a dispute from the console: a seated player disputed round 1 of a running
game (recorded at once, its evidence sealed until the game ends); the operator sees it among the
open disputes, rejects it with a reason, and the dispute's page shows the resolution and says, in
words, why its evidence still waits."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.browser.conftest import Server
from tests.browser.play import player, register
from tests.browser.test_operator import grant

pytestmark = pytest.mark.browser


def disputed_running_game(server: Server) -> tuple[str, str]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        game_id: str = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        tokens = [
            client.post(f"/games/{game_id}/players", json={"name": name}).json()["token"]
            for name in ("Ada", "Bea", "Cy")
        ]
        opened = client.post(
            f"/games/{game_id}/disputes",
            json={"round": 1, "text": "Bea's flip looked impossible."},
            headers={"Authorization": f"Bearer {tokens[0]}"},
        )
        assert opened.status_code == 201, opened.text
        return game_id, opened.json()["dispute_id"]


def test_an_operator_rejects_an_open_dispute_from_the_console(
    server: Server, browser, screenshots: Path
) -> None:
    game_id, dispute_id = disputed_running_game(server)
    page = player(browser, server.url)
    page.goto("/")
    register(page, "Olga Arbiter", "a long enough password")
    grant(server, "Olga Arbiter")
    page.goto("/operator")
    item = page.locator(f"[data-testid=op-dispute][data-dispute='{dispute_id}']")
    item.wait_for()
    assert "Bea's flip looked impossible." in item.inner_text()
    item.locator("[data-testid=op-dispute-rejected]").click()
    page.fill(
        "[data-testid=dispute-rejected-reason]", "Skull's rules allow that flip: the history checks out."
    )
    page.click("[data-testid=dispute-rejected-confirm]")
    item.wait_for(state="detached")
    page.wait_for_selector("[data-testid=op-audit-entry][data-action=dispute_resolved]")

    page.goto(f"/disputes/{game_id}/{dispute_id}")
    page.wait_for_selector("[data-testid=dispute-resolution]")
    assert "Rejected" in page.inner_text("[data-testid=dispute-resolution]")
    assert page.inner_text("[data-testid=dispute-status]").lower() == "resolved"
    sealed = page.inner_text("[data-testid=dispute-sealed]")
    assert "waits for the end" in sealed, sealed
    page.screenshot(path=screenshots / "dispute-resolved-sealed.png", full_page=True)
    page.context.close()
