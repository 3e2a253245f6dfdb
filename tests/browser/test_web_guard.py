"""The web surface in real Chromium (docs/security.md, "The web surface"): a page on another port of
the same host cannot act with a player's cookies (change the password, make the seat leave, fill the
table with bots), no page of the service loads inside a foreign frame, and the client shows a whole
game (its seats click the last turns) and its replay and audit under the Content-Security-Policy with
no violation reported."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.browser.conftest import Server, _free_port
from tests.browser.http_games import play as http_play
from tests.browser.play import (
    CALM,
    PAGE_ERRORS,
    create_as_account,
    create_table,
    finished,
    join_table,
    play,
    player,
    register,
    wait_until,
)

pytestmark = pytest.mark.browser

PASSWORD = "the victim's own passphrase"
ATTACK_SECONDS = 30.0


class Elsewhere:
    """A tiny web server on another port of 127.0.0.1 (the same site, another origin) that serves
    whatever pages a test gives it."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = pages.get(self.path, "not here").encode()
                self.send_response(200 if self.path in pages else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.port = _free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture
def elsewhere() -> Iterator[Elsewhere]:
    site = Elsewhere()
    site.thread.start()
    yield site
    site.server.shutdown()
    site.server.server_close()


def visitor(browser: Browser, base_url: str) -> Page:
    """A browser page with no init script (``play.player``'s would run, and fail, in the error page
    Chromium shows in a refused frame); its uncaught script errors still fail the test."""
    page = browser.new_context(base_url=base_url, reduced_motion=CALM).new_page()
    page.on("pageerror", lambda error: PAGE_ERRORS.append(f"{page.url}: {error}"))
    return page


def attack_page(service: str, game_id: str) -> str:
    """What a malicious page does with a visitor's cookies: an HTML form that posts itself (text/plain,
    shaped as JSON) and "simple" fetches with credentials (no preflight: text/plain bodies)."""
    form_name = '{"password": "pwned-by-form'  # the body: name=value, i.e. {"password": "pwned-by-form="}
    return f"""<!doctype html><html><body>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" enctype="text/plain" target="sink" action="{service}/accounts/me/password">
  <input type="hidden" name='{form_name}' value='"}}'>
</form>
<script>
  const post = (path, body) => fetch("{service}" + path, {{
    method: "POST", mode: "no-cors", credentials: "include",
    headers: {{ "Content-Type": "text/plain" }}, body }}).catch(() => null);
  document.getElementById("form").submit();
  Promise.all([
    post("/accounts/me/password", JSON.stringify({{ password: "pwned-by-fetch" }})),
    post("/games/{game_id}/leave", "{{}}"),
    post("/games/{game_id}/bots", "{{}}"),
  ]).then(() => {{ document.title = "done"; }});
</script></body></html>"""


def test_a_page_on_another_port_cannot_change_the_password_leave_the_seat_or_fill_bots(
    server: Server, browser: Browser, elsewhere: Elsewhere
) -> None:
    victim = visitor(browser, server.url)
    register(victim, "Victim Vera", password=PASSWORD)  # as a person does, from the lobby's account box
    # her seat and host cookies, and her account's: she sits as her account (a page that has seen it)
    game_id = create_as_account(victim, "Skull", 3)
    attacks: dict[str, int] = {}

    def seen(response: Any) -> None:
        if response.url.startswith(server.url) and response.request.method == "POST":
            attacks[f"{response.request.resource_type} {response.url[len(server.url) :]}"] = response.status

    victim.on("response", seen)
    elsewhere.pages["/"] = attack_page(server.url, game_id)
    victim.goto(f"{elsewhere.url}/")
    wait_until(
        lambda: victim.title() == "done" and len(attacks) == 4, ATTACK_SECONDS, "the attacks to be answered"
    )
    print(f"\n[csrf] answers to the page elsewhere: {attacks}")
    assert all(status in (403, 415) for status in attacks.values()), attacks

    with httpx.Client(base_url=server.url, timeout=10) as client:
        login = client.post("/accounts/login", json={"name": "Victim Vera", "password": PASSWORD})
        assert login.status_code == 200, login.text  # the password is still hers
        players = client.get(f"/games/{game_id}/view").json()["players"]
    assert [(p["name"], p["bot"]) for p in players] == [("Victim Vera", False)]  # seated, no bot came
    victim.goto(f"/tables/{game_id}")
    victim.wait_for_selector("[data-testid=table][data-seat='0']")  # her page still acts for her
    victim.context.close()


def test_no_page_of_the_service_loads_inside_a_frame_of_another_origin(
    server: Server, browser: Browser, elsewhere: Elsewhere
) -> None:
    framer = visitor(browser, server.url)
    refusals: list[str] = []
    framer.on("console", lambda message: refusals.append(message.text) if "frame" in message.text else None)
    elsewhere.pages["/frame"] = f'<!doctype html><iframe id="t" src="{server.url}/" width="800"></iframe>'
    framer.goto(f"{elsewhere.url}/frame")

    def child() -> Any:
        return framer.frames[1] if len(framer.frames) > 1 else None

    def refused() -> bool:
        frame = child()
        return bool(refusals) or (frame is not None and frame.url.startswith("chrome-error://"))

    wait_until(refused, ATTACK_SECONDS, "Chromium to refuse the frame")
    print(f"\n[frame] {refusals}, the frame at {child().url if child() else None}")
    frame = child()
    assert frame is None or frame.locator("header.topbar").count() == 0  # the lobby never drew in it
    framer.context.close()


TURNS_OVER_HTTP = 8  # of 6 nimmt!'s ten turns a round: each one move a seat, and a row taken now and then


def seat_token(page: Page, game_id: str) -> str:
    """The seat's token, from the page's (HttpOnly) seat cookie."""
    return next(c["value"] for c in page.context.cookies() if c["name"] == f"ts_seat_{game_id}")


SENTINEL = "https://csp-sentinel.invalid/last.png"


def watch_csp(page: Page) -> list[str]:
    """Every CSP violation the page's documents report (the DOM event, through a binding)."""
    violations: list[str] = []
    page.context.expose_function("__cspViolation", lambda text: violations.append(text))
    page.context.add_init_script(
        """document.addEventListener("securitypolicyviolation", (e) => window.__cspViolation(
             `${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`));"""
    )
    return violations


def reported_so_far(page: Page, violations: list[str]) -> list[str]:
    """The violations reported up to now: a last, deliberate one (an image from elsewhere) is caused
    and waited for; reports arrive in order, so every earlier one has arrived by then."""
    page.evaluate("(url) => { new Image().src = url; }", SENTINEL)
    # each poll asks the page something: Playwright's sync API delivers the binding's calls then
    wait_until(
        lambda: page.evaluate("() => true") and any(SENTINEL in v for v in violations),
        10,
        "the sentinel's violation report",
    )
    return [v for v in violations if SENTINEL not in v]


def test_a_whole_game_its_replay_and_its_audit_run_under_the_csp_with_no_violation(
    server: Server, browser: Browser
) -> None:
    host = player(browser, server.url)
    guest = player(browser, server.url)
    violations, guest_violations = watch_csp(host), watch_csp(guest)
    policy = httpx.get(f"{server.url}/", headers={"Accept": "text/html"}).headers["content-security-policy"]
    assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy
    game_id = create_table(host, "6 nimmt!", "Ada", 2, rounds=1)
    join_table(guest, game_id, "Brook")
    host.wait_for_selector("[data-testid=table][data-status=playing]")
    # The first eight of the ten turns are played over HTTP with the pages' own seats, which draw
    # them live; the seats click their last turns' cards on the pages themselves.
    tokens = [seat_token(page, game_id) for page in (host, guest)]
    with httpx.Client(base_url=server.url, timeout=10) as client:
        http_play(client, game_id, tokens, seed=11, stop=lambda moves, views: moves >= TURNS_OVER_HTTP * 2)
    assert play([host, guest], random.Random(11), finished([host, guest])) >= 2
    for page in (host, guest):
        page.wait_for_selector("[data-testid=end-screen]")
    assert reported_so_far(guest, guest_violations) == []

    host.goto(f"/replay/{game_id}")
    host.wait_for_selector("[data-testid=scrub]")
    host.wait_for_selector(".seg")  # the rounds' strip: positioned through the CSSOM
    assert host.locator(".seg").first.evaluate("el => el.style.left") != ""
    host.keyboard.press("End")
    host.goto(f"/audit/{game_id}")
    host.wait_for_selector("[data-testid=audit-summary]")
    host.goto("/rankings/six-nimmt")
    host.wait_for_selector("[data-testid=leaderboard]")
    host.goto("/docs")
    host.wait_for_selector("#swagger-ui .info")
    found = reported_so_far(host, violations)
    print(f"\n[csp] violations: {found}")
    assert found == []
    host.context.close()
    guest.context.close()
