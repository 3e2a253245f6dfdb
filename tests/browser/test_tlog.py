"""The public log in the browser: tlog.js checks RFC 9162 proofs made by the server's tree code, keeps
the last checkpoint in localStorage, and the audit page says in words when the log forked."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx
import pytest

from services.fairness.signing import KeyRing
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import merkle
from tests.browser.conftest import Server
from tests.browser.play import player

pytestmark = pytest.mark.browser

T0 = 1_800_000_000
RING = KeyRing.generate(T0, "tables.example")


def tree(datas: list[bytes]) -> dict[merkle.Node, bytes]:
    return merkle.append(0, {}, [merkle.leaf_hash(d) for d in datas])


def note_of(nodes: dict[merkle.Node, bytes], size: int) -> str:
    return cp.sign_checkpoint(RING, size, merkle.root(size, nodes), T0)


def b64(proof: list[bytes]) -> list[str]:
    return [base64.b64encode(p).decode() for p in proof]


HONEST = [f"head {i}".encode() for i in range(11)]
FORKED = [*HONEST[:2], b"a rewritten head", *HONEST[3:]]


def test_tlog_js_accepts_the_server_s_proofs_and_refuses_tampered_ones(server: Server, browser) -> None:
    page = player(browser, server.url)
    page.goto("/")
    nodes = tree(HONEST)
    cases = []
    for old, new in [(1, 1), (1, 2), (3, 7), (4, 8), (5, 11), (8, 11), (7, 8)]:
        proof = merkle.consistency_proof(old, new, nodes)
        cases.append([old, new, b64(proof), *b64([merkle.root(old, nodes), merkle.root(new, nodes)]), True])
        if proof:
            cases.append(
                [old, new, b64(proof[:-1]), *b64([merkle.root(old, nodes), merkle.root(new, nodes)]), False]
            )
    forked = tree(FORKED)
    cases.append(
        [
            5,
            11,
            b64(merkle.consistency_proof(5, 11, forked)),
            *b64([merkle.root(5, nodes), merkle.root(11, forked)]),
            False,
        ]
    )
    inclusions = []
    for index, size in [(0, 1), (2, 5), (7, 8), (10, 11)]:
        proof = merkle.inclusion_proof(index, size, nodes)
        leaf = merkle.leaf_hash(HONEST[index])
        inclusions.append([*b64([leaf]), index, size, b64(proof), *b64([merkle.root(size, nodes)]), True])
        inclusions.append(
            [*b64([merkle.leaf_hash(b"x")]), index, size, b64(proof), *b64([merkle.root(size, nodes)]), False]
        )
    outcome = page.evaluate(
        """async ([cases, inclusions]) => {
          const m = await import('/static/js/tlog.js');
          const b = (t) => Uint8Array.from(atob(t), (c) => c.charCodeAt(0));
          const out = [];
          for (const [o, n, proof, r1, r2, want] of cases)
            out.push((await m.verifyConsistency(o, n, proof.map(b), b(r1), b(r2))) === want);
          for (const [leaf, i, n, proof, root, want] of inclusions)
            out.push((await m.verifyInclusion(b(leaf), i, n, proof.map(b), b(root))) === want);
          return out;
        }""",
        [cases, inclusions],
    )
    assert outcome == [True] * len(outcome)


def serve_log(page, note: str, proof: list[str], keys: dict | None = None) -> None:
    page.unroute("**/log/**")
    page.unroute("**/.well-known/tablestream-keys")
    document = json.dumps(keys or RING.public_document())
    page.route(
        "**/.well-known/tablestream-keys",
        lambda route: route.fulfill(status=200, content_type="application/json", body=document),
    )
    page.route(
        "**/log/checkpoint", lambda route: route.fulfill(status=200, content_type="text/plain", body=note)
    )
    page.route(
        "**/log/consistency*",
        lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps({"proof": proof})
        ),
    )


@pytest.mark.parametrize(
    "lang,words", [("en", "Warning"), ("pl", "Uwaga"), ("fr", "Attention"), ("tr", "Dikkat")]
)
def test_the_audit_page_remembers_the_log_and_says_plainly_when_it_forked(
    server: Server, browser, screenshots: Path, lang: str, words: str
) -> None:
    game_id = httpx.post(f"{server.url}/games", json={"game": "skull", "players": 3}).json()["game_id"]
    page = player(browser, server.url, width=390 if lang == "pl" else 1280)
    page.context.add_init_script(f"localStorage.setItem('tablestream.lang', {lang!r})")
    honest, forked = tree(HONEST), tree(FORKED)
    serve_log(page, note_of(honest, 5), [])
    page.goto(f"/audit/{game_id}")
    page.wait_for_selector("[data-testid=log-panel][data-result=first]")

    serve_log(page, note_of(honest, 11), b64(merkle.consistency_proof(5, 11, honest)))
    page.reload()
    page.wait_for_selector("[data-testid=log-panel][data-result=consistent]")

    serve_log(page, note_of(forked, 11), b64(merkle.consistency_proof(5, 11, forked)))  # old leaf 2 rewritten
    page.reload()
    page.wait_for_selector("[data-testid=log-panel][data-result=fork]")
    assert words in page.inner_text("[data-testid=log-words]")
    kept = json.loads(page.evaluate("localStorage.getItem('tablestream.tlog.checkpoint')"))
    assert kept["size"] == 11  # the consistent one stays kept: the fork never replaces it
    if lang in ("en", "pl"):
        page.locator("[data-testid=log-panel]").screenshot(
            path=screenshots / f"audit-log-fork-{'phone' if lang == 'pl' else 'desktop'}.png"
        )


def test_the_audit_page_refuses_a_checkpoint_signed_by_a_key_the_service_does_not_publish(
    server: Server, browser
) -> None:
    game_id = httpx.post(f"{server.url}/games", json={"game": "skull", "players": 3}).json()["game_id"]
    page = player(browser, server.url)
    stranger = KeyRing.generate(T0, "tables.example")
    honest = tree(HONEST)
    serve_log(page, cp.sign_checkpoint(stranger, 5, merkle.root(5, honest), T0), [])
    page.goto(f"/audit/{game_id}")
    page.wait_for_selector("[data-testid=log-panel][data-result=bad_signature]")
    assert "not signed by any key this service publishes" in page.inner_text("[data-testid=log-words]")
    assert page.evaluate("localStorage.getItem('tablestream.tlog.checkpoint')") is None  # never kept
    rotated = RING.rotate(T0 + 100, overlap=10)
    late = cp.sign_checkpoint(KeyRing((rotated.keys[0],)), 5, merkle.root(5, honest), T0 + 500)
    serve_log(page, late, [], rotated.public_document())
    page.reload()
    page.wait_for_selector("[data-testid=log-panel][data-result=bad_signature]")
    assert "not valid at the time it states" in page.inner_text("[data-testid=log-words]")
