"""How the web client reaches the browser over HTTP: fingerprinted immutable assets, gzip where the
browser accepts it (and never on the hot paths or live streams), the shell and its preloads, the
glossary's language files, the HTML 404 page for a person, the favicon."""

from __future__ import annotations

import gzip
import re
import struct
from collections.abc import Iterator
from pathlib import Path

import fakeredis
import pytest
from starlette.testclient import TestClient

from services.api.app import create_app
from services.api.assets import STATIC_DIR, AssetTree
from services.operating.config import Settings
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only

GZIP = {"Accept-Encoding": "gzip, deflate, br"}
IDENTITY = {"Accept-Encoding": "identity"}
HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
GLOSSARY = {"en": '{"nav.lobby": "Lobby"}', "pl": '{"nav.lobby": "Poczekalnia"}'}


@pytest.fixture
def web(tmp_path: Path) -> Iterator[Api]:
    """The app on fakeredis with the real client files and a glossary of our own."""
    glossary = tmp_path / "glossary"
    glossary.mkdir()
    for lang, text in GLOSSARY.items():
        (glossary / f"{lang}.json").write_text(text)
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **UNLIMITED),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
        assets=AssetTree(STATIC_DIR, glossary, recheck_seconds=0),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Api(bearer_only(client), fakeredis.FakeRedis(server=server))


def prefix_of(api: Api) -> str:
    match = re.search(r'src="(/static/[0-9a-f]{16})/js/app.js"', api.client.get("/").text)
    assert match is not None
    return match.group(1)


def test_a_fingerprinted_asset_is_immutable_and_gzipped_when_the_browser_accepts_it(web: Api) -> None:
    prefix = prefix_of(web)
    packed = web.client.get(f"{prefix}/css/app.css", headers=GZIP)
    plain = web.client.get(f"{prefix}/css/app.css", headers=IDENTITY)
    assert packed.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert packed.headers["content-encoding"] == "gzip" and "content-encoding" not in plain.headers
    assert packed.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
    assert int(packed.headers["content-length"]) < int(plain.headers["content-length"]) / 3
    assert packed.content == plain.content == (STATIC_DIR / "css" / "app.css").read_bytes()  # decoded
    assert packed.headers["etag"] != plain.headers["etag"]  # two representations, two tags


@pytest.mark.parametrize("accept", ["identity", "gzip;q=0", "br", ""])
def test_a_browser_that_does_not_accept_gzip_gets_the_file_as_it_is(web: Api, accept: str) -> None:
    response = web.client.get(f"{prefix_of(web)}/js/i18n.js", headers={"Accept-Encoding": accept})
    assert response.status_code == 200 and "content-encoding" not in response.headers
    assert response.content == (STATIC_DIR / "js" / "i18n.js").read_bytes()


def test_an_unversioned_path_still_answers_and_revalidates_to_304(web: Api) -> None:
    first = web.client.get("/static/js/docs.js", headers=GZIP)
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    again = web.client.get("/static/js/docs.js", headers={**GZIP, "If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    assert "/static/js/docs.js" in web.client.get("/docs").text  # the docs page's script


def test_an_older_version_gets_todays_file_revalidated_never_immutable(web: Api) -> None:
    response = web.client.get("/static/0123456789abcdef/js/app.js")
    assert response.status_code == 200 and response.headers["cache-control"] == "no-cache"
    assert response.content == (STATIC_DIR / "js" / "app.js").read_bytes()
    assert web.client.get(f"{prefix_of(web)}/js/missing.js").status_code == 404


def test_a_games_stylesheet_and_the_default_board_are_served_as_every_asset_and_a_missing_board_is_404(
    web: Api,
) -> None:
    prefix = prefix_of(web)
    served = (("css/games/skull_king.css", "text/css"), ("js/games/default.js", "text/javascript"))
    for path, media_type in served:
        response = web.client.get(f"{prefix}/{path}", headers=GZIP)
        assert response.status_code == 200 and response.headers["content-type"].startswith(media_type)
        assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert response.headers["content-encoding"] == "gzip"
        assert response.headers["vary"] == "Accept-Encoding"
        assert response.content == (STATIC_DIR / path).read_bytes()
    # what the board loader asks before it plays a game on the default board (js/game_board.js)
    assert web.client.head(f"{prefix}/js/games/no_such_game.js").status_code == 404


def test_the_shell_is_revalidated_gzipped_and_304_when_unchanged(web: Api) -> None:
    page = web.client.get("/", headers=GZIP)
    assert page.headers["cache-control"] == "no-cache" and page.headers["content-encoding"] == "gzip"
    assert "Accept-Language" in page.headers["vary"] and "Cookie" in page.headers["vary"]
    again = web.client.get("/", headers={**GZIP, "If-None-Match": page.headers["etag"]})
    assert again.status_code == 304


def test_the_shell_preloads_the_modules_of_the_page_and_the_data_the_lobby_reads_first(web: Api) -> None:
    prefix = prefix_of(web)
    lobby = web.client.get("/").text
    preloaded = set(re.findall(rf'rel="modulepreload" href="{prefix}/(js/[^"]+)"', lobby))
    assert {"js/i18n.js", "js/lobby.js", "js/lobby_live.js", "js/api.js"} <= preloaded
    assert '<link rel="preload" as="fetch" href="/games/options" crossorigin>' in lobby
    table = web.client.get("/tables/abc123").text
    assert f'rel="modulepreload" href="{prefix}/js/table.js"' in table
    assert "/games/options" not in table


def test_the_table_shell_preloads_the_game_module_of_a_table_this_process_holds(web: Api) -> None:
    game_id = web.started("six-nimmt", 2)
    assert "/js/games/six_nimmt.js" in web.client.get(f"/tables/{game_id}").text
    unknown = web.client.get("/tables/unknown123").text  # not held: its game is not guessed
    assert not any(f"/js/games/{module}.js" in unknown for module in ("skull", "six_nimmt", "skull_king"))


def test_the_language_files_are_served_from_the_glossary_under_the_version(web: Api) -> None:
    prefix = prefix_of(web)
    response = web.client.get(f"{prefix}/lang/pl.json")
    assert response.status_code == 200 and response.json() == {"nav.lobby": "Poczekalnia"}
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert web.client.get(f"{prefix}/lang/tr.json").status_code == 404  # none in this glossary


@pytest.mark.parametrize(
    ("headers", "preloaded"),
    [
        ({"Accept-Language": "pl-PL,pl;q=0.9,en;q=0.5"}, "pl"),
        ({"Accept-Language": "pl", "Cookie": "tablestream.lang=en"}, "en"),
        ({"Accept-Language": "de-DE"}, "en"),
        ({"Accept-Language": "fr"}, "en"),  # no French file in this glossary: English, as the client does
    ],
)
def test_the_shell_preloads_the_language_file_the_page_will_fetch(
    web: Api, headers: dict[str, str], preloaded: str
) -> None:
    page = web.client.get("/", headers=headers).text
    link = r'<link rel="preload" as="fetch" href="/static/[0-9a-f]{16}/lang/(\w+).json" crossorigin>'
    assert re.findall(link, page) == [preloaded]


@pytest.mark.parametrize(
    "path", ["/nowhere", "/tables", "/tables/abc/extra", "/rankings/skull/x", "/favicon.png"]
)
def test_a_person_asking_for_a_page_that_does_not_exist_gets_an_html_404_page(web: Api, path: str) -> None:
    response = web.client.get(path, headers=HTML)
    assert response.status_code == 404 and response.headers["content-type"].startswith("text/html")
    assert "Page not found" in response.text and '<a href="/">' in response.text  # also without scripts
    assert re.search(r'rel="modulepreload" href="/static/[0-9a-f]{16}/js/not_found.js"', response.text)


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("GET", "/nowhere", {"Accept": "application/json"}),
        ("GET", "/nowhere", {}),
        ("GET", "/games/abc/nothing", HTML),  # an API path: its error stays JSON
        ("GET", "/accounts/a/b/c", HTML),
        ("GET", "/static/js/nothing.js", HTML),
        ("POST", "/nowhere", HTML),
    ],
)
def test_an_api_client_gets_the_json_error_for_an_unknown_path(
    web: Api, method: str, path: str, headers: dict[str, str]
) -> None:
    response = web.client.request(method, path, headers=headers)
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "No such endpoint."}}


def test_favicon_ico_is_an_icon_with_the_sizes_a_browser_asks_for(web: Api) -> None:
    response = web.client.get("/favicon.ico")
    assert response.status_code == 200 and response.headers["content-type"] == "image/x-icon"
    reserved, kind, count = struct.unpack("<HHH", response.content[:6])
    assert (reserved, kind) == (0, 1)
    sizes = [response.content[6 + 16 * i] for i in range(count)]
    assert {16, 32} <= set(sizes)


def test_long_json_answers_are_gzipped_and_views_and_commands_never_are(web: Api) -> None:
    options = web.client.get("/games/options", headers=GZIP)
    assert options.headers["content-encoding"] == "gzip" and options.json()["games"]
    game_id = web.started("skull-king", 3)
    web.play_until(game_id, lambda view: view["round"] >= 2)
    events = web.client.get(f"/games/{game_id}/events", params={"lang": "pl"}, headers=GZIP)
    assert events.headers["content-encoding"] == "gzip" and events.json()["events"]
    assert "content-encoding" not in web.client.get(f"/games/{game_id}/events", headers=IDENTITY).headers
    view = web.client.get(f"/games/{game_id}/view", headers={**GZIP, **web.auth(game_id, 0)})
    assert view.status_code == 200 and "content-encoding" not in view.headers
    assert len(view.content) > 1024  # large enough to be compressed, were it not a view
    spectator = web.client.get(f"/games/{game_id}/view", params={"at": 3}, headers=GZIP)
    assert spectator.status_code == 200 and "content-encoding" not in spectator.headers
    command = web.send(game_id, 0, {"type": "bid", "tricks": 0})
    assert "content-encoding" not in command.headers


def test_a_live_stream_is_never_compressed(web: Api) -> None:
    game_id = web.started("skull", 3)
    web.play_until(game_id, lambda view: view["status"] == "finished")
    with web.client.stream("GET", f"/games/{game_id}/live", headers=GZIP) as response:
        body = b"".join(response.iter_raw())
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "content-encoding" not in response.headers and body.startswith(b"id: ")
    with pytest.raises(gzip.BadGzipFile):
        gzip.decompress(body)
