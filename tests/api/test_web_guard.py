"""The web surface (docs/security.md, "The web surface"): a browser's cookies act only for the
service's own pages, bodies are JSON only, and every answer carries the security headers."""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest
from starlette.testclient import TestClient

from services.api.app import create_app
from services.api.middleware import CSP, normalized_origin
from services.operating.config import Settings
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api

SAME_ORIGIN = {"Origin": "http://testserver"}  # the test client's own origin
ELSEWHERE = {"Origin": "http://127.0.0.1:9"}  # another port of the same host: the same site
HEADERS = {
    "content-security-policy": CSP,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
}


def app_with(**settings: object) -> TestClient:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **UNLIMITED, **settings),  # type: ignore[arg-type]
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    return TestClient(app, raise_server_exceptions=False)


@pytest.fixture
def browser_client() -> Iterator[TestClient]:
    """A client that keeps the cookies the server sets, as a browser does."""
    with app_with() as client:
        yield client


def seated_browser(client: TestClient, players: int = 3) -> tuple[str, str]:
    """A browser creates a table (its host cookie) and sits down (its seat cookie), from the own page."""
    created = client.post("/games", json={"game": "skull", "players": players}, headers=SAME_ORIGIN)
    game_id = created.json()["game_id"]
    joined = client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=SAME_ORIGIN)
    assert joined.status_code == 201, joined.text
    return game_id, created.json()["host_token"]


def seats(client: TestClient, game_id: str) -> list[dict[str, object]]:
    players: list[dict[str, object]] = client.get(f"/games/{game_id}/view").json()["players"]
    return players


# -- bodies are JSON -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        None,
    ],
)
def test_a_body_not_declared_json_is_refused_with_415_and_changes_nothing(
    fake_api: Api, content_type: str | None
) -> None:
    headers = {"Content-Type": content_type} if content_type else {}
    created = fake_api.client.post("/games", content=b'{"game": "skull", "players": 3}', headers=headers)
    assert created.status_code == 415
    assert created.json()["error"]["code"] == "unsupported_media_type"
    game_id = fake_api.create()
    before = fake_api.head(game_id)
    joined = fake_api.client.post(f"/games/{game_id}/players", content=b'{"name": "Ada"}', headers=headers)
    assert joined.status_code == 415
    assert fake_api.head(game_id) == before
    fake_api.project()
    assert len(fake_api.client.get("/games").json()["games"]) == 1  # only the table created as JSON


def test_json_with_a_charset_is_json(fake_api: Api) -> None:
    created = fake_api.client.post(
        "/games",
        content=b'{"game": "skull", "players": 3}',
        headers={"Content-Type": "Application/JSON; charset=utf-8"},
    )
    assert created.status_code == 201, created.text


# -- cookies act for the own pages only ------------------------------------------------------------


@pytest.mark.parametrize("route", ["leave", "bots"])
def test_a_cookie_request_from_another_origin_or_a_cross_site_fetch_is_refused(
    browser_client: TestClient, route: str
) -> None:
    game_id, _ = seated_browser(browser_client)
    for headers in (
        ELSEWHERE,
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-site"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        refused = browser_client.post(f"/games/{game_id}/{route}", json={}, headers=headers)
        assert refused.status_code == 403, (headers, refused.text)
        assert refused.json()["error"]["code"] == "cross_origin"
    assert [p["bot"] for p in seats(browser_client, game_id)] == [False]  # Ada alone: no bot came
    assert browser_client.get(f"/games/{game_id}/view").json()["seat"] == 0  # still seated


def test_a_cookie_request_from_the_own_page_is_served(browser_client: TestClient) -> None:
    game_id, _ = seated_browser(browser_client)
    filled = browser_client.post(f"/games/{game_id}/bots", json={}, headers=SAME_ORIGIN)
    assert filled.status_code == 200, filled.text
    left = browser_client.post(f"/games/{game_id}/leave", json={}, headers={"Sec-Fetch-Site": "same-origin"})
    assert left.status_code == 200, left.text


def test_a_password_change_by_cookie_from_another_origin_changes_nothing(browser_client: TestClient) -> None:
    registered = browser_client.post(
        "/accounts", json={"name": "Victim", "password": "correct horse", "cookie": True}, headers=SAME_ORIGIN
    )
    assert registered.status_code == 201, registered.text
    for headers in (ELSEWHERE, {"Sec-Fetch-Site": "same-site"}):
        changed = browser_client.post(
            "/accounts/me/password", json={"password": "pwned!pwned"}, headers=headers
        )
        assert changed.status_code == 403 and changed.json()["error"]["code"] == "cross_origin"
    browser_client.cookies.clear()
    login = browser_client.post("/accounts/login", json={"name": "Victim", "password": "correct horse"})
    assert login.status_code == 200, login.text


def test_a_page_of_another_origin_cannot_log_a_browser_in_even_without_a_cookie(fake_api: Api) -> None:
    fake_api.client.post("/accounts", json={"name": "Mallory", "password": "mallory's pass"})
    login = fake_api.client.post(
        "/accounts/login",
        json={"name": "Mallory", "password": "mallory's pass", "cookie": True},
        headers=ELSEWHERE,
    )
    assert login.status_code == 403 and login.json()["error"]["code"] == "cross_origin"
    assert "set-cookie" not in login.headers


def test_a_script_that_keeps_the_cookies_in_a_jar_and_sends_no_origin_is_served(
    browser_client: TestClient,
) -> None:
    game_id, _ = seated_browser(browser_client)  # the jar now holds the host and the seat cookie
    filled = browser_client.post(f"/games/{game_id}/bots", json={})  # no Origin, no Sec-Fetch-*
    assert filled.status_code == 200, filled.text


def test_a_bearer_client_without_cookie_or_origin_is_served_as_before(fake_api: Api) -> None:
    game_id = fake_api.create()
    host = {"Authorization": f"Bearer {fake_api.hosts[game_id]}"}
    fake_api.join(game_id, "Ada")
    assert fake_api.client.post(f"/games/{game_id}/bots", json={}, headers=host).status_code == 200
    left = fake_api.client.post(f"/games/{game_id}/leave", json={}, headers=fake_api.auth(game_id, 0))
    assert left.status_code == 200, left.text


def test_a_bearer_header_with_a_stray_cookie_is_a_bearer_request(browser_client: TestClient) -> None:
    game_id, host_token = seated_browser(browser_client)
    filled = browser_client.post(
        f"/games/{game_id}/bots", json={}, headers={"Authorization": f"Bearer {host_token}"}
    )
    assert filled.status_code == 200, filled.text


def test_behind_a_proxy_the_public_origin_is_the_only_origin_accepted() -> None:
    with app_with(public_origin="https://tables.example") as client:
        body = {"game": "skull", "players": 3}
        assert (
            client.post("/games", json=body, headers={"Origin": "https://tables.example"}).status_code == 201
        )
        # the Host the proxy forwards is not a second own origin
        own_host = client.post("/games", json=body, headers={"Origin": "http://testserver"})
        assert own_host.status_code == 403


@pytest.mark.parametrize(
    ("origin", "normal"),
    [
        ("http://127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("HTTP://Example.COM:80", "http://example.com"),
        ("https://example.com:443", "https://example.com"),
        ("http://[::1]:8080", "http://[::1]:8080"),
        ("null", None),
        ("http://example.com/path", None),
        ("ftp://example.com", None),
        ("http://user@example.com", None),
        ("http://example.com:port", None),
    ],
)
def test_origins_compare_by_scheme_host_and_port(origin: str, normal: str | None) -> None:
    assert normalized_origin(origin) == normal


# -- security headers on every answer --------------------------------------------------------------


def assert_guarded(response: object, what: str) -> None:
    headers = response.headers  # type: ignore[attr-defined]
    for name, value in HEADERS.items():
        assert headers.get(name) == value, (what, name, headers.get(name))
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "'unsafe-inline'" not in headers["content-security-policy"]
    assert "strict-transport-security" not in headers, what  # plain http


def test_every_kind_of_answer_carries_the_security_headers(fake_api: Api) -> None:
    client = fake_api.client
    game_id = fake_api.started()
    html = {"Accept": "text/html"}
    answers = {
        "the shell": client.get("/", headers=html),
        "a table page": client.get(f"/tables/{game_id}", headers=html),
        "a page nobody serves": client.get("/no/such/page", headers=html),
        "an unknown API path": client.get("/games/abc/nothing"),
        "a 405": client.delete("/games"),
        "the lobby": client.get("/games"),
        "a view (the route)": client.get(f"/games/{game_id}/view", params={"at": 1}),
        "a kept view (the view lane)": client.get(
            f"/games/{game_id}/view", headers=fake_api.auth(game_id, 0)
        ),
        "a 4xx": client.post("/games", json={"game": "chess", "players": 2}),
        "a 415": client.post("/games", content=b"{}", headers={"Content-Type": "text/plain"}),
        "a 403 cross_origin": client.post("/games", json={}, headers=ELSEWHERE),
        "a static module": client.get("/static/js/app.js"),
        "a missing static file": client.get("/static/js/missing.js"),
        "the favicon": client.get("/favicon.ico"),
        "the docs page": client.get("/docs"),
        "the OpenAPI document": client.get("/openapi.json"),
        "readiness (the probe lane)": client.get("/healthz"),
        "liveness (the probe lane)": client.get("/livez"),
        "an audit": client.get(f"/games/{game_id}/audit"),
        "an export refused": client.get(f"/games/{game_id}/export"),
    }
    for what, response in answers.items():
        assert_guarded(response, what)
    assert answers["a page nobody serves"].status_code == 404
    assert answers["a kept view (the view lane)"].status_code == 200


@pytest.mark.thorough
def test_a_server_error_and_a_live_stream_carry_them_too(
    fake_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = fake_api.started("skull-king", 2)
    fake_api.play_until(game_id, lambda view: view["status"] == "finished")
    with fake_api.client.stream("GET", f"/games/{game_id}/live") as stream:
        assert stream.status_code == 200
        assert_guarded(stream, "a live stream")

    async def broken(limit: int) -> list[object]:
        raise RuntimeError("a bug")

    queries = fake_api.client.app.state.context.queries  # type: ignore[attr-defined]
    monkeypatch.setattr(queries, "lobby", broken)
    failed = fake_api.client.get("/games")
    assert failed.status_code == 500
    assert_guarded(failed, "a 500")

    async def unforeseen() -> object:
        raise RuntimeError("a bug in the readiness check")

    readiness = fake_api.client.app.state.context.readiness  # type: ignore[attr-defined]
    monkeypatch.setattr(readiness, "answer", unforeseen)
    probe = fake_api.client.get("/healthz")  # the probes' lane leaves it to the app's error middleware
    assert probe.status_code == 500 and probe.json()["error"]["code"] == "internal_error"
    assert_guarded(probe, "a probe's 500")


def test_hsts_only_over_https_by_scheme_or_by_the_public_origin() -> None:
    with app_with() as client:
        assert "strict-transport-security" not in client.get("/livez").headers
        secure = client.get("https://testserver/livez")
        assert secure.headers["strict-transport-security"].startswith("max-age=15552000")
    with app_with(public_origin="https://tables.example") as client:
        assert client.get("/games").headers["strict-transport-security"].startswith("max-age=")
    with app_with(hsts_seconds=0) as client:
        assert "strict-transport-security" not in client.get("https://testserver/livez").headers


def test_the_shell_has_no_inline_script_or_style_or_handler(fake_api: Api) -> None:
    shell = fake_api.client.get("/", headers={"Accept": "text/html"}).text
    assert "<script>" not in shell and "<script " not in shell.replace('<script type="module" src=', "")
    assert "<style" not in shell and " style=" not in shell
    assert " onclick=" not in shell and " onload=" not in shell and "javascript:" not in shell
    docs = fake_api.client.get("/docs").text
    assert "<script>" not in docs and " style=" not in docs
