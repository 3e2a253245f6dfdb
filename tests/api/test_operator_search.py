"""The operator's console finds players by the beginning of a name or by a name that looks like it
(the name index, ``services.store.name_index``), pages every list it shows, and shows a player's
recent games; its page tells a browser without operator rights what to do."""

from __future__ import annotations

from typing import Any

import pytest

from services.store import name_index
from services.store.event_store import SyncEventStore
from services.store.requests import clock_ms
from services.store.retention import RetentionPolicy
from tests.api.conftest import ADMIN_TOKEN, Api
from tests.api.test_accounts import rated_game
from tests.api.test_operator import audit, error, register, report
from workers.backup import rebuild_all
from workers.sweeper import retire

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
DAY_MS = 86_400_000
CYRILLIC_A = "\u0410"


def players(api: Api, q: str, **params: Any) -> dict[str, Any]:
    response = api.client.get("/operator/players", params={"q": q, **params}, headers=ADMIN)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def names(api: Api, q: str) -> list[tuple[str, str]]:
    return [(p["name"], p["match"]) for p in players(api, q)["players"]]


def every_page(api: Api, path: str, key: str, **params: Any) -> list[list[dict[str, Any]]]:
    """Each page of a list, first to last, following ``next``."""
    pages: list[list[dict[str, Any]]] = []
    cursor = None
    while True:
        asked = {**params, **({} if cursor is None else {"cursor": cursor})}
        response = api.client.get(path, params=asked, headers=ADMIN)
        assert response.status_code == 200, response.text
        pages.append(response.json()[key])
        cursor = response.json()["next"]
        if cursor is None:
            return pages
        assert len(pages) < 20, "the pages never ended"


def assert_bad_cursor_refused(api: Api, path: str, **params: Any) -> None:
    for cursor in ("not a cursor", "", "9" * 300):
        refused = api.client.get(path, params={**params, "cursor": cursor}, headers=ADMIN)
        assert refused.status_code == 422, (cursor, refused.text)
        assert error(refused) == "invalid_cursor"
        assert "'cursor'" in refused.json()["error"]["message"]


# -- search by prefix and lookalike -----------------------------------------------------------------


def test_the_beginning_of_a_name_finds_every_account_whose_name_begins_so_whatever_its_case(
    fake_api: Api,
) -> None:
    for name in ("Anna", "annie", "Ann4", "Bob", "Joanna"):
        register(fake_api, name)

    assert names(fake_api, "ann") == [("Ann4", "prefix"), ("Anna", "prefix"), ("annie", "prefix")]
    assert names(fake_api, "ANNI") == [("annie", "prefix")]
    assert names(fake_api, "anna") == [("Anna", "exact")]
    assert names(fake_api, "zed") == []


def test_a_name_that_only_looks_like_an_accounts_name_finds_that_account(fake_api: Api) -> None:
    for name in ("Anna", "Alice", "Marta"):
        register(fake_api, name)

    assert names(fake_api, "AnnA") == [("Anna", "exact")]
    assert names(fake_api, CYRILLIC_A + "nna") == [("Anna", "lookalike")]  # a Cyrillic capital A
    assert names(fake_api, "A1ice") == [("Alice", "lookalike")]  # a one for the l
    assert names(fake_api, "rnar") == [("Marta", "lookalike")]  # r and n for the m
    assert names(fake_api, "\uff21\uff4e\uff4e") == [("Anna", "prefix")]  # full-width letters


def test_an_account_id_finds_its_account(fake_api: Api) -> None:
    ada = register(fake_api, "Ada")

    found = players(fake_api, ada["account_id"])

    assert found == {
        "players": [
            {
                "account_id": ada["account_id"],
                "name": "Ada",
                "banned": False,
                "ban_reason": None,
                "match": "id",
            }
        ],
        "next": None,
    }


# -- the index follows the accounts ------------------------------------------------------------------


def test_a_registered_account_is_found_at_once_and_a_removed_one_no_longer(fake_api: Api) -> None:
    kept = register(fake_api, "Keeper", password="correct horse")  # a password: never removed
    register(fake_api, "Kestrel", password=None)  # no password, no game: removed once idle long enough
    assert [n for n, _ in names(fake_api, "ke")] == ["Keeper", "Kestrel"]

    store = SyncEventStore(fake_api.sync)
    policy = RetentionPolicy()
    retired = retire(store, clock_ms() + policy.idle_account_after_ms + DAY_MS, policy)

    assert len(retired.accounts) == 1
    assert [n for n, _ in names(fake_api, "ke")] == ["Keeper"]
    assert fake_api.sync.zrange(name_index.NAMES, 0, -1) == [name_index.member("keeper", kept["account_id"])]


def test_rebuild_all_rebuilds_the_name_index_from_the_account_streams(fake_api: Api) -> None:
    for name in ("Ruth", "Rupert"):
        register(fake_api, name)
    before = fake_api.sync.zrange(name_index.NAMES, 0, -1)
    fake_api.sync.delete(name_index.NAMES)
    fake_api.sync.zadd(name_index.NAMES, {name_index.member("ghost", "0123456789abcdef"): 0})
    assert names(fake_api, "ru") == []

    rebuild_all(SyncEventStore(fake_api.sync))

    assert fake_api.sync.zrange(name_index.NAMES, 0, -1) == before
    assert [n for n, _ in names(fake_api, "ru")] == ["Rupert", "Ruth"]


def test_accounts_registered_before_the_name_index_are_indexed_once_by_the_sweeper(fake_api: Api) -> None:
    for name in ("Olaf", "Olive"):
        register(fake_api, name)
    fake_api.sync.delete(name_index.NAMES, name_index.MARK)  # as stored before the index existed
    assert names(fake_api, "ol") == []
    store = SyncEventStore(fake_api.sync)

    retire(store, clock_ms(), RetentionPolicy())

    assert [n for n, _ in names(fake_api, "ol")] == ["Olaf", "Olive"]
    assert fake_api.sync.exists(name_index.MARK)
    fake_api.sync.delete(name_index.NAMES)  # marked done: the next pass reads no account again
    retire(store, clock_ms(), RetentionPolicy())
    assert names(fake_api, "ol") == []


# -- paging ------------------------------------------------------------------------------------------


def test_player_search_pages_from_the_first_to_the_last_and_refuses_a_bad_cursor(fake_api: Api) -> None:
    for letter in "ABCDE":
        register(fake_api, f"Pager {letter}")

    pages = every_page(fake_api, "/operator/players", "players", q="pager", limit=2)

    assert [[p["name"] for p in page] for page in pages] == [
        ["Pager A", "Pager B"],
        ["Pager C", "Pager D"],
        ["Pager E"],
    ]
    assert_bad_cursor_refused(fake_api, "/operator/players", q="pager")
    first = players(fake_api, "pager", limit=2)
    other_search = fake_api.client.get(
        "/operator/players", params={"q": "zz", "cursor": first["next"]}, headers=ADMIN
    )
    assert other_search.status_code == 422 and error(other_search) == "invalid_cursor"


def test_table_search_pages_from_the_first_to_the_last_and_refuses_a_bad_cursor(fake_api: Api) -> None:
    tables = []
    for n in range(5):
        game_id = fake_api.create()
        fake_api.join(game_id, f"Pat {n}")
        tables.append(game_id)
    fake_api.join(fake_api.create(), "Someone Else")
    fake_api.project()

    pages = every_page(fake_api, "/operator/tables", "tables", q="pat", limit=2)

    assert [len(page) for page in pages] == [2, 2, 1]
    listed = [t["game_id"] for page in pages for t in page]
    assert sorted(listed) == sorted(tables) and len(set(listed)) == len(tables)
    assert_bad_cursor_refused(fake_api, "/operator/tables", q="pat")


def test_chat_reports_page_from_the_newest_to_the_oldest_and_refuse_a_bad_cursor(fake_api: Api) -> None:
    games = []
    for _ in range(3):
        game_id = fake_api.started()
        said = fake_api.client.post(
            f"/games/{game_id}/chat", json={"text": "rude"}, headers=fake_api.auth(game_id, 0)
        )
        assert said.status_code == 201, said.text
        assert report(fake_api, game_id, 1).status_code == 201
        games.append(game_id)

    pages = every_page(fake_api, "/operator/reports", "reports", limit=2)

    assert [[r["game_id"] for r in page] for page in pages] == [[games[2], games[1]], [games[0]]]
    assert_bad_cursor_refused(fake_api, "/operator/reports")


def test_the_audit_log_pages_from_the_newest_to_the_oldest_and_refuses_a_bad_cursor(fake_api: Api) -> None:
    register(fake_api, "Target")
    for n in range(5):
        action = "ban" if n % 2 == 0 else "unban"
        done = fake_api.client.post(
            f"/operator/accounts/Target/{action}", json={"reason": f"r{n}"}, headers=ADMIN
        )
        assert done.status_code == 200, done.text

    pages = every_page(fake_api, "/operator/audit", "entries", limit=2)

    assert [[e["reason"] for e in page] for page in pages] == [["r4", "r3"], ["r2", "r1"], ["r0"]]
    assert [e["id"] for page in pages for e in page] == [e["id"] for e in audit(fake_api)]
    assert_bad_cursor_refused(fake_api, "/operator/audit")


def test_open_disputes_page_from_the_oldest_to_the_newest_and_refuse_a_bad_cursor(fake_api: Api) -> None:
    game_id = fake_api.started()
    opened = []
    for n in range(5):
        body = {"round": 1, "text": f"dispute {n}", "seat": n % 3}
        response = fake_api.client.post(f"/games/{game_id}/disputes", json=body, headers=ADMIN)
        assert response.status_code == 201, response.text
        opened.append(response.json()["dispute_id"])

    pages = every_page(fake_api, "/operator/disputes", "disputes", limit=2)

    assert [len(page) for page in pages] == [2, 2, 1]
    listed = [d["dispute_id"] for page in pages for d in page]
    assert sorted(listed) == sorted(opened) and len(set(listed)) == 5
    assert [d["text"] for page in pages for d in page] == [f"dispute {n}" for n in range(5)]
    assert_bad_cursor_refused(fake_api, "/operator/disputes")


# -- the player's card --------------------------------------------------------------------------------


@pytest.mark.thorough
def test_a_players_card_shows_the_recent_games_with_links_to_their_replays(fake_api: Api) -> None:
    ada, bo = register(fake_api, "Ada"), register(fake_api, "Bo")
    first = rated_game(fake_api, [ada["token"], bo["token"]], seed=1)
    second = rated_game(fake_api, [bo["token"], ada["token"]], seed=2)

    card = fake_api.client.get("/operator/players/ada", headers=ADMIN).json()

    assert card["games_played"] == 2
    recent = card["recent_games"]
    assert [g["game_id"] for g in recent] == [second, first]
    assert [g["replay"] for g in recent] == [f"/replay/{second}", f"/replay/{first}"]
    assert all(g["game"] == "six-nimmt" and g["players"] == 2 and g["rank"] in (1, 2) for g in recent)
    missing = fake_api.client.get("/operator/players/nobody-here", headers=ADMIN)
    assert missing.status_code == 404 and error(missing) == "account_not_found"


# -- the page without rights ---------------------------------------------------------------------------


def test_the_console_page_tells_a_browser_without_operator_rights_how_to_sign_in(fake_api: Api) -> None:
    player = register(fake_api, "Plain")
    as_browser = {"Accept": "text/html", "Authorization": f"Bearer {player['token']}"}

    page = fake_api.client.get("/operator", headers=as_browser)
    program = fake_api.client.get("/operator", headers={"Authorization": f"Bearer {player['token']}"})

    assert page.status_code == 403 and page.headers["content-type"].startswith("text/html")
    assert "This page needs operator rights" in page.text and "log in" in page.text
    assert "not_an_operator" not in page.text
    assert program.status_code == 403 and error(program) == "not_an_operator"
