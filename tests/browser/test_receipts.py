"""Signed receipts in the browser: a player's receipts land in IndexedDB as they play, and the audit
page checks each one's Ed25519 signature (WebCrypto) and its presence in the export; an export that
rewrote a move, or a forged receipt, is named."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from services.history.records import decode_stored
from tests.browser.conftest import Server
from tests.browser.http_games import create, finished, join, seat_cookie
from tests.browser.page_moves import play_from_page
from tests.browser.play import PRACTICE_SEED, player

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
    # A practice round, Ada's page at seat 0 against Brook (over HTTP): Ada's moves are sent by her
    # page's own web client, which keeps each one's receipt as a click's move does.
    page = player(browser, server.url)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        options = {"seed": PRACTICE_SEED, "rounds": 1, "turn_seconds": 0}
        game_id = create(client, "six-nimmt", 2, options)
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook")]
        name, value = seat_cookie(game_id, tokens[0])
        page.context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
        page.goto(f"/tables/{game_id}")
        page.wait_for_selector("[data-testid=table][data-seat='0'][data-status=playing]")
        sent = play_from_page(page, client, game_id, tokens, 0, seed=5, stop=finished)
    page.wait_for_selector("[data-testid=end-screen]")

    export = httpx.get(f"{server.url}/games/{game_id}/export").json()
    kept = page.evaluate(KEPT, game_id)
    assert len(kept) == sent and {r["version"] for r in kept} == seat_command_versions(export, 0)
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
    # the panel's place read in one look (the audit page may still lay it out again meanwhile)
    clip = page.evaluate(
        "() => { const r = document.querySelector('[data-testid=receipts-panel]').getBoundingClientRect();"
        " return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; }"
    )
    page.screenshot(path=screenshots / "audit-receipts-phone.png", clip=clip, full_page=True)

    # A browser whose WebCrypto lacks Ed25519 is told so; only the presence in the history is checked.
    page.evaluate(FORGE, kept[0])  # the true receipt back in place of the forgery
    page.add_init_script(NO_ED25519)
    page.reload()
    page.wait_for_selector("[data-testid=receipts-check][data-result=unchecked]")
    assert page.locator("[data-testid=receipts-no-crypto]").is_visible()
    assert "not checked" in page.inner_text("[data-testid=receipts-check]")
    assert page.locator("[data-testid=receipt-problem]").count() == 0
    page.context.close()


RECEIPTS_MODULE = "import(new URL('receipts.js', document.querySelector('script[type=module]').src).href)"

OLD_STORE = """receipts => new Promise((resolve, reject) => {
  const open = indexedDB.open("tablestream-receipts", 1);  // the store as it was before its list of tables
  open.onupgradeneeded = () => {
    const store = open.result.createObjectStore("receipts", { keyPath: ["game_id", "version"] });
    store.createIndex("game", "game_id");
  };
  open.onsuccess = () => {
    const tx = open.result.transaction("receipts", "readwrite");
    for (const r of receipts) tx.objectStore("receipts").put(r);
    tx.oncomplete = () => { open.result.close(); resolve(true); };
    tx.onerror = () => reject(tx.error);
  };
})"""

KEEP_MANY = (
    """async ([from, count]) => {
  const receipts = await """
    + RECEIPTS_MODULE
    + """;
  for (let n = from; n < from + count; n++) {
    await receipts.keep({ game_id: `t${n}`, version: 3, hash: "ab".repeat(32), key_id: "0".repeat(16),
                          signed_at: 1764000000000 + n, signature: "c2ln" });
  }
  return receipts.KEEP_TABLES;
}"""
)

HELD = (
    """async ids => {
  const receipts = await """
    + RECEIPTS_MODULE
    + """;
  const held = {};
  for (const id of ids) held[id] = (await receipts.receiptsOf(id)).map((r) => r.version);
  return held;
}"""
)


def test_receipts_kept_before_the_list_of_tables_stay_and_only_the_tables_played_longest_ago_are_dropped(
    server: Server, browser
) -> None:
    """A browser that kept receipts under the first version of the store keeps them (each table
    listed at its newest receipt); once more tables than KEEP_TABLES have receipts, the receipts of
    the table played longest ago go, whole, and a table played again is the newest once more."""
    page = player(browser, server.url)
    page.goto("/")
    old = [
        {
            "game_id": gid,
            "version": v,
            "hash": "ab" * 32,
            "key_id": "0" * 16,
            "signed_at": at,
            "signature": "c2ln",
        }
        for gid, at in (("old-a", 1_700_000_000_000), ("old-b", 1_700_000_500_000))
        for v in (2, 5, 9)
    ]
    page.evaluate(OLD_STORE, old)
    keep = page.evaluate(KEEP_MANY, [0, 1])
    assert page.evaluate(HELD, ["old-a", "old-b", "t0"]) == {
        "old-a": [2, 5, 9],
        "old-b": [2, 5, 9],
        "t0": [3],
    }

    page.evaluate(KEEP_MANY, [1, keep - 3])  # the store is full: old-a, old-b and KEEP_TABLES - 2 new ones
    assert page.evaluate(HELD, ["old-a", "old-b"]) == {"old-a": [2, 5, 9], "old-b": [2, 5, 9]}
    page.evaluate(KEEP_MANY, [keep - 2, 1])  # one table more: the one played longest ago goes, whole
    held = page.evaluate(HELD, ["old-a", "old-b", "t0", f"t{keep - 2}"])
    assert held == {"old-a": [], "old-b": [2, 5, 9], "t0": [3], f"t{keep - 2}": [3]}
    page.evaluate(KEEP_MANY, [0, 1])  # t0 again: it is the newest now, and no table is dropped for it
    page.evaluate(KEEP_MANY, [keep - 1, 1])
    held = page.evaluate(HELD, ["old-b", "t0", "t1", f"t{keep - 1}"])
    assert held == {"old-b": [], "t0": [3], "t1": [3], f"t{keep - 1}": [3]}
    page.evaluate(KEEP_MANY, [keep, 1])
    assert page.evaluate(HELD, ["t0", "t1"]) == {"t0": [3], "t1": []}
    page.context.close()
