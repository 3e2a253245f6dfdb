"""Disputes in the browser: a player who kept receipts opens a dispute on round 2 from the end screen,
and the dispute's page gives the verdict of every check, the browser's own included; a second
browser handed a forked export of the same game is told it is not the history the service logged,
and one handed the genuine export before the log holds its final head is told when to export again."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from services.cli.witness import Witness
from services.history.records import chain_hash
from tests.browser.conftest import Server
from tests.browser.http_games import create, finished, join, seat_cookie
from tests.browser.page_moves import play_from_page
from tests.browser.play import PRACTICE_SEED, player
from tests.support.waiting import ms, wait_until

pytestmark = pytest.mark.browser

LOG_SECONDS = 60  # the worker pool appends every second and signs a checkpoint every ten


def logged(server: Server, game_id: str) -> bool:
    """The game's final head is under a published checkpoint (appended and signed)."""
    head = httpx.get(f"{server.url}/games/{game_id}/export").json()["head"]["version"]
    proofs = httpx.get(f"{server.url}/games/{game_id}/log").json()
    return proofs["checkpoint"] is not None and head in {leaf["version"] for leaf in proofs["leaves"]}


def test_a_dispute_on_round_two_from_the_end_screen_gets_a_verdict_and_a_forked_export_is_named(
    server: Server, browser, screenshots: Path, tmp_path: Path
) -> None:
    # A practice table of three rounds, Ada's page at seat 0 against Brook (over HTTP): Ada's moves
    # are sent by her page's own web client, which keeps their receipts, the clicks' path.
    page = player(browser, server.url)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        options = {"seed": PRACTICE_SEED, "rounds": 3, "turn_seconds": 0}
        game_id = create(client, "six-nimmt", 2, options)
        tokens = [join(client, game_id, name) for name in ("Ada", "Brook")]
        name, value = seat_cookie(game_id, tokens[0])
        page.context.add_cookies([{"name": name, "value": value, "url": server.url, "httpOnly": True}])
        page.goto(f"/tables/{game_id}")
        page.wait_for_selector("[data-testid=table][data-seat='0'][data-status=playing]")
        assert play_from_page(page, client, game_id, tokens, 0, seed=25, stop=finished) > 0
    page.wait_for_selector("[data-testid=end-screen]")
    wait_until(lambda: logged(server, game_id), LOG_SECONDS, "the game's heads in the log")

    page.click("[data-testid=dispute-open] summary")
    page.select_option("[data-testid=dispute-round]", "2")
    page.fill("[data-testid=dispute-text]", "Brook took the row I meant to take in round 2.")
    # A language switch words the open form again and keeps what was chosen and typed.
    fold = page.locator("[data-testid=dispute-open]")
    page.select_option("#lang-select", "fr")
    expect(fold.locator("summary")).to_have_text("Contester une manche")
    expect(page.locator("[data-testid=dispute-submit]")).to_have_text("Ouvrir la contestation")
    assert page.locator("[data-testid=dispute-round] option").all_inner_texts()[:3] == [
        "Toute la partie",
        "Manche 1",
        "Manche 2",
    ]
    page.select_option("#lang-select", "en")
    expect(fold.locator("summary")).to_have_text("Dispute a round")
    assert page.input_value("[data-testid=dispute-round]") == "2"
    assert page.input_value("[data-testid=dispute-text]").startswith("Brook took the row")
    page.click("[data-testid=dispute-submit]")
    page.wait_for_url(f"**/disputes/{game_id}/*")
    dispute_id = page.url.rsplit("/", 1)[1]

    page.wait_for_selector("[data-testid=dispute-verdict][data-ok=true]", timeout=ms(60))
    for check in ("deal", "commands", "scores", "receipts", "views", "log", "export"):
        result = page.get_attribute(f"[data-testid=dispute-check-{check}]", "data-result")
        assert result == "passed", (check, result)
    assert "Round 2" in page.inner_text("[data-testid=dispute-summary]")
    page.wait_for_selector("[data-testid=dispute-browser-chain][data-result=passed]", timeout=ms(60))
    assert page.get_attribute("[data-testid=dispute-browser-seeds]", "data-result") == "passed"
    # the bundle's history is cut at round 2's end: the start of the one published, not all of it
    assert page.get_attribute("[data-testid=dispute-browser-log]", "data-result") == "prefix"
    assert page.locator("[data-testid=dispute-browser-receipts] .mark.ok").count() == 1
    assert "Brook took the row" in page.inner_text("[data-testid=dispute-text-shown]")
    expect(page.locator("[data-testid=dispute-page]")).to_contain_text("Opened by Ada")  # a name, not a seat
    took = page.evaluate("document.documentElement.dataset.disputeCheckMs")
    print(f"\nbrowser check of the round-2 bundle: {took} ms")
    page.screenshot(path=screenshots / "dispute.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=screenshots / "dispute-phone.png", full_page=True)

    # The dispute is recorded with the player's receipts as evidence, and the audit page lists it.
    record = page.evaluate(f"fetch('/games/{game_id}/disputes/{dispute_id}').then(r => r.json())")
    assert record["round"] == 2 and [e["type"] for e in record["events"]] == [
        "dispute_opened",
        "evidence_added",
    ]
    page.goto(f"/audit/{game_id}")
    page.wait_for_selector("[data-testid=audit-dispute-link]")

    # A witness cosigns the log's checkpoint; the player names it among the witnesses she trusts, and
    # the page counts its cosignature; with a second, silent witness and a quorum of two it waits.
    witnesses = (Witness(tmp_path / f"witness-{n}", "witness.example/ours") for n in range(64))
    # a key whose base64 holds a "+", the vkey's own separator: it must still be read
    ours = next(w for w in witnesses if "+" in w.key.vkey.split("+", 2)[2])
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert ours.poll(client).cosigned
    silent = Witness(tmp_path / "silent", "witness.example/silent")
    page.click("[data-testid=witness-trust] summary")
    page.fill("[data-testid=witness-keys]", ours.key.vkey)
    page.fill("[data-testid=witness-quorum]", "1")
    page.click("[data-testid=witness-save]")
    page.wait_for_selector("[data-testid=log-witnesses][data-result=passed]", timeout=ms(30))
    assert "cosigned by 1 of the 1 witnesses you trust" in page.inner_text("[data-testid=log-witnesses]")
    page.click("[data-testid=witness-trust] summary")
    page.fill("[data-testid=witness-keys]", f"{ours.key.vkey}\n{silent.key.vkey}")
    page.fill("[data-testid=witness-quorum]", "2")
    page.click("[data-testid=witness-save]")
    page.wait_for_selector("[data-testid=log-witnesses][data-result=pending]", timeout=ms(30))
    assert "cosigned by 1 of the 2 witnesses you trust (needed: 2)" in page.inner_text(
        "[data-testid=log-witnesses]"
    )
    page.locator("[data-testid=log-panel]").screenshot(path=screenshots / "audit-witnesses.png")

    # A second person is handed an export of the same game that differs from the one logged: one
    # entry re-salted at the end, every hash recomputed (a consistent history that verifies alone).
    export = httpx.get(f"{server.url}/games/{game_id}/export").json()
    last = json.loads(export["entries"][-1]["data"])
    last["salt"] = "0" * 32
    data = json.dumps(last, separators=(",", ":"))
    forked_hash = chain_hash(export["entries"][-2]["hash"], data.encode())
    export["entries"][-1] = {"version": export["entries"][-1]["version"], "hash": forked_hash, "data": data}
    export["head"]["hash"] = forked_hash
    forked = tmp_path / "forked.json"
    forked.write_text(json.dumps(export))
    genuine = tmp_path / "genuine.json"
    genuine.write_text(httpx.get(f"{server.url}/games/{game_id}/export").text)

    other = player(browser, server.url)
    other.goto(f"/audit/{game_id}")
    other.set_input_files("[data-testid=file-check-input]", str(genuine))
    other.wait_for_selector("[data-testid=file-check-summary][data-ok=true]", timeout=ms(60))
    assert other.get_attribute("[data-testid=file-check-log]", "data-result") == "included"
    other.set_input_files("[data-testid=file-check-input]", str(forked))
    other.wait_for_selector("[data-testid=file-check-summary][data-ok=false]", timeout=ms(60))
    assert other.get_attribute("[data-testid=file-check-chain]", "data-result") == "passed"
    assert other.get_attribute("[data-testid=file-check-log]", "data-result") == "fork"
    assert "not the one in the public log" in other.inner_text("[data-testid=file-check-log]")
    other.locator("[data-testid=file-check]").screenshot(path=screenshots / "audit-forked-export.png")

    # Checked right after the last move, the genuine export's final head is not in a signed checkpoint
    # yet: the log answers without its leaf (the appender has not reached it). That is said in words
    # with the time to export again, and is neither a fork nor "the history the service published".
    def before_the_appender(route) -> None:
        proofs = route.fetch().json()
        proofs["leaves"] = [leaf for leaf in proofs["leaves"] if leaf["version"] < export["head"]["version"]]
        proofs["pending"] = []
        route.fulfill(json=proofs)

    other.route(f"**/games/{game_id}/log", before_the_appender)
    other.set_input_files("[data-testid=file-check-input]", str(genuine))
    other.wait_for_selector("[data-testid=file-check-summary][data-ok=pending]", timeout=ms(60))
    said = other.inner_text("[data-testid=file-check-summary]")
    assert said.startswith("The public log has not yet published this head; export again after "), said
    assert "not verified" in said
    assert other.get_attribute("[data-testid=file-check-log]", "data-result") == "pending"
    other.unroute(f"**/games/{game_id}/log")

    # The dispute's bundle, handed over: its history is the published one up to round 2's end (said
    # so, not "the history the service published"), and its receipts are checked with the published
    # keys against that history.
    bundle = tmp_path / "bundle.json"
    path = f"/games/{game_id}/disputes/{dispute_id}/bundle"  # the disputing player's, with her cookie
    bundle.write_text(page.evaluate(f"fetch('{path}').then(r => r.text())"))
    other.set_input_files("[data-testid=file-check-input]", str(bundle))
    other.wait_for_selector("[data-testid=file-check-summary][data-ok=true]", timeout=ms(60))
    assert other.get_attribute("[data-testid=file-check-log]", "data-result") == "prefix"
    said = other.inner_text("[data-testid=file-check-summary]")
    assert said.startswith("This file is the start of the history the service published"), said
    assert other.get_attribute("[data-testid=file-check-receipts]", "data-result") == "passed"
    other.locator("[data-testid=file-check]").screenshot(path=screenshots / "audit-bundle-check.png")

    # A log whose inclusion proof does not lead to its own signed checkpoint is named as such: a
    # failure, not a round still pending.
    def broken_proof(route) -> None:
        proofs = route.fetch().json()
        for leaf in proofs["leaves"]:
            leaf["proof"] = [base64.b64encode(bytes(32)).decode() for _ in leaf["proof"]] or [
                base64.b64encode(bytes(32)).decode()
            ]
        route.fulfill(json=proofs)

    other.route(f"**/games/{game_id}/log", broken_proof)
    other.set_input_files("[data-testid=file-check-input]", str(genuine))
    other.wait_for_selector("[data-testid=file-check-summary][data-ok=false]", timeout=ms(60))
    assert other.get_attribute("[data-testid=file-check-log]", "data-result") == "bad_proof"
    assert "the log contradicts itself" in other.inner_text("[data-testid=file-check-log]")
    other.unroute(f"**/games/{game_id}/log")
    other.context.close()
    page.context.close()
