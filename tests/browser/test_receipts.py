"""Signed receipts in the browser: a player's receipts land in IndexedDB as they play, and the audit
page checks each one's Ed25519 signature (WebCrypto) and its presence in the export; an export that
rewrote a move, or a forged receipt, is named."""

from __future__ import annotations

import json
import random
from pathlib import Path

import httpx
import pytest

from services.history.records import decode_stored
from tests.browser.conftest import Server
from tests.browser.play import PRACTICE_SEED, create_table, fill_with_bots, finished, play, player

pytestmark = pytest.mark.browser

KEPT = """id => new Promise((resolve, reject) => {
  const open = indexedDB.open("tablestream-receipts");
  open.onerror = () => reject(open.error);
  open.onsuccess = () => {
    const req = open.result.transaction("receipts").objectStore("receipts").index("game").getAll(id);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  };
})"""

FORGE = """receipt => new Promise((resolve, reject) => {
  const open = indexedDB.open("tablestream-receipts");
  open.onsuccess = () => {
    const tx = open.result.transaction("receipts", "readwrite");
    tx.objectStore("receipts").put(receipt);
    tx.oncomplete = () => resolve(true);
    tx.onerror = () => reject(tx.error);
  };
})"""

NO_ED25519 = """(() => {
  const importKey = crypto.subtle.importKey.bind(crypto.subtle);
  crypto.subtle.importKey = (format, key, algorithm, ...rest) =>
    algorithm && algorithm.name === "Ed25519"
      ? Promise.reject(new DOMException("Ed25519 is not supported", "NotSupportedError"))
      : importKey(format, key, algorithm, ...rest);
})()"""


def seat_command_versions(export: dict, seat: int) -> set[int]:
    """The version each of a seat's own commands ended at (the version its receipt names)."""
    ends: dict[str, int] = {}
    for entry in export["entries"]:
        stored = decode_stored(entry["data"].encode())
        own = stored.command is not None and stored.command.kind == "command" and stored.command.seat == seat
        if own or stored.command_id in ends:  # a batch's later entries carry its command id too
            ends[stored.command_id] = entry["version"]
    return set(ends.values())


def test_a_players_kept_receipts_are_all_valid_and_a_rewritten_export_or_forged_receipt_is_named(
    server: Server, browser, screenshots: Path
) -> None:
    page = player(browser, server.url)
    game_id = create_table(page, "6 nimmt!", "Ada", 2, seed=PRACTICE_SEED, rounds=1, turn_seconds=0)
    fill_with_bots(page)
    play([page], random.Random(5), finished([page]), seconds=120)
    page.wait_for_selector("[data-testid=end-screen]")

    export = httpx.get(f"{server.url}/games/{game_id}/export").json()
    kept = page.evaluate(KEPT, game_id)
    assert {r["version"] for r in kept} == seat_command_versions(export, 0)
    assert all({"key_id", "signed_at", "signature"} <= set(r) for r in kept)

    page.click("[data-testid=end-audit]")
    page.wait_for_url(f"**/audit/{game_id}")
    page.wait_for_selector("[data-testid=receipts-check][data-result=passed]")
    summary = page.inner_text("[data-testid=receipts-check]")
    assert f"{len(kept)} of {len(kept)} receipts" in summary, summary
    page.screenshot(path=screenshots / "audit-receipts.png", full_page=True)

    with page.expect_download() as download:
        page.click("[data-testid=receipts-download]")
    saved = json.loads(Path(download.value.path()).read_text())
    assert saved["format"] == "tablestream-receipts/1" and saved["receipts"] == kept

    # An operator hands this player an export whose history no longer holds one of their moves.
    rewritten = kept[len(kept) // 2]["version"]

    def tampered(route) -> None:  # type: ignore[no-untyped-def]
        doc = route.fetch().json()
        for entry in doc["entries"]:
            if entry["version"] == rewritten:
                entry["hash"] = "0" * 64
        route.fulfill(json=doc)

    page.route(f"**/games/{game_id}/export", tampered)
    page.reload()
    page.wait_for_selector("[data-testid=receipts-check][data-result=failed]")
    problems = page.locator("[data-testid=receipt-problem]")
    assert problems.count() == 1
    assert problems.first.get_attribute("data-verdict") == "rewritten"
    assert problems.first.get_attribute("data-version") == str(rewritten)
    assert (
        f"version {rewritten}" in problems.first.inner_text() and "rewritten" in problems.first.inner_text()
    )
    page.unroute(f"**/games/{game_id}/export")

    # A receipt changed in the player's own store (a forgery) fails its signature.
    forged = {**kept[0], "hash": "f" * 64}
    page.evaluate(FORGE, forged)
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    page.wait_for_selector("[data-testid=receipts-check][data-result=failed]")
    problem = page.locator("[data-testid=receipt-problem]")
    assert problem.count() == 1 and problem.first.get_attribute("data-verdict") == "forged"
    assert "forged" in problem.first.inner_text()
    page.locator("[data-testid=receipts-panel]").screenshot(path=screenshots / "audit-receipts-phone.png")

    # A browser whose WebCrypto lacks Ed25519 is told so; only the presence in the history is checked.
    page.evaluate(FORGE, kept[0])  # the true receipt back in place of the forgery
    page.add_init_script(NO_ED25519)
    page.reload()
    page.wait_for_selector("[data-testid=receipts-check][data-result=unchecked]")
    assert page.locator("[data-testid=receipts-no-crypto]").is_visible()
    assert "not checked" in page.inner_text("[data-testid=receipts-check]")
    assert page.locator("[data-testid=receipt-problem]").count() == 0
    page.context.close()
