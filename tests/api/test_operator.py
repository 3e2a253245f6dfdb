"""The operator's console (services.operating.operator, services.api.operator_routes): who may use it, closing
a table (a recorded event the offline verifier accepts), banning and unbanning an account (events
of its stream, refused at login and at join), chat reports, searches, figures, and the audit log
that records every action with who did it."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from starlette.routing import Route

from bots import choose
from domain.accounts import AccountBanned, AccountUnbanned
from domain.games import game_names, spec
from services.accounts.registry import _decoder as account_decoder
from services.api.operator_routes import routes as operator_routes
from services.disputes.receipt_check import verify_with_receipts
from services.store.keys import account_events_key
from services.store.operator import AUDIT, OPERATORS
from tests.api.conftest import ADMIN_TOKEN, Api, practice
from tests.api.test_full_game import parse_sse

ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
REASON = {"reason": "stuck for an hour"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def register(api: Api, name: str, password: str | None = "correct horse") -> dict[str, Any]:
    body: dict[str, Any] = {"name": name}
    if password is not None:
        body["password"] = password
    response = api.client.post("/accounts", json=body)
    assert response.status_code == 201, response.text
    registered: dict[str, Any] = response.json()
    return registered


def operator_account(api: Api, name: str = "Moderator") -> dict[str, Any]:
    """A registered account granted the role, as ``tablestream operator grant`` does."""
    account = register(api, name)
    api.sync.sadd(OPERATORS, account["account_id"])
    return account


def error(response: Any) -> str:
    code: str = response.json()["error"]["code"]
    return code


def audit(api: Api) -> list[dict[str, str]]:
    response = api.client.get("/operator/audit", headers=ADMIN)
    assert response.status_code == 200, response.text
    entries: list[dict[str, str]] = response.json()["entries"]
    return entries


def report(api: Api, game_id: str, seat: int) -> Any:
    """``seat`` reports the table's first chat message as abuse."""
    body = {"messages": [1], "reason": "abuse"}
    return api.client.post(f"/games/{game_id}/chat/report", json=body, headers=api.auth(game_id, seat))


def play_some(api: Api, game_id: str, moves: int, seed: int) -> None:
    """Bots play ``moves`` commands of a started game (seeded: the same moves each run)."""
    rng = random.Random(seed)
    for _ in range(moves):
        view = api.view(game_id)
        if view["status"] != "playing":
            return
        seat = view["to_act"][0]
        own = api.view(game_id, seat)
        response = api.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
        assert response.status_code in (200, 409), response.text


# -- who is an operator ----------------------------------------------------------------------------

SAMPLE_PATH = {"game_id": "g0000000", "account": "Nobody", "report_id": "1-0"}


def console_requests() -> list[tuple[str, str]]:
    """Every route of the console (page included), with its path parameters filled in."""
    found = []
    for route in operator_routes:
        assert isinstance(route, Route)
        path = route.path
        for name, value in SAMPLE_PATH.items():
            path = path.replace("{" + name + "}", value)
        for method in sorted(route.methods or ()):
            if method != "HEAD":
                found.append((method, path))
    return found


def test_every_console_route_refuses_a_non_operator_with_403_not_an_operator(fake_api: Api) -> None:
    game_id = fake_api.started()
    player = register(fake_api, "Plain")
    callers = {
        "nobody": {},
        "a seat token": fake_api.auth(game_id, 0),
        "the host token": bearer(fake_api.hosts[game_id]),
        "an account that is not an operator": bearer(player["token"]),
        "a made-up token": bearer("0123456789abcdef.not-a-token"),
        "a malformed header": {"Authorization": "Basic abc"},
    }
    requests = console_requests()
    assert ("GET", "/operator") in requests
    assert ("POST", f"/operator/tables/{SAMPLE_PATH['game_id']}/close") in requests
    for who, headers in callers.items():
        for method, path in requests:
            body = REASON if method == "POST" else None
            response = fake_api.client.request(method, path, json=body, headers=headers)
            assert response.status_code == 403, (who, method, path, response.text)
            assert error(response) == "not_an_operator", (who, method, path)
    assert fake_api.sync.xlen(AUDIT) == 0


def test_the_admin_token_and_an_operator_account_may_use_the_console(fake_api: Api) -> None:
    moderator = operator_account(fake_api)

    as_admin = fake_api.client.get("/operator/me", headers=ADMIN)
    as_account = fake_api.client.get("/operator/me", headers=bearer(moderator["token"]))
    page = fake_api.client.get("/operator", headers={**bearer(moderator["token"]), "Accept": "text/html"})

    assert as_admin.json() == {"operator": "admin", "name": "admin"}
    assert as_account.json() == {"operator": moderator["account_id"], "name": "Moderator"}
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")


def test_a_revoked_operator_account_is_refused_again(fake_api: Api) -> None:
    moderator = operator_account(fake_api)
    fake_api.sync.srem(OPERATORS, moderator["account_id"])

    response = fake_api.client.get("/operator/figures", headers=bearer(moderator["token"]))

    assert response.status_code == 403 and error(response) == "not_an_operator"


# -- closing a table -------------------------------------------------------------------------------


@pytest.mark.thorough
@pytest.mark.parametrize("game", game_names())
def test_a_closed_running_table_is_a_recorded_ending_the_verifier_accepts(fake_api: Api, game: str) -> None:
    players = spec(game).default_players
    game_id = fake_api.create(game, players, **practice(game, 7))
    for seat in range(players):
        fake_api.join(game_id, f"P{seat}", f"seed-{seat}")
    play_some(fake_api, game_id, 12, seed=7)
    moderator = operator_account(fake_api)

    closed = fake_api.client.post(
        f"/operator/tables/{game_id}/close",
        json={"reason": "abusive names"},
        headers=bearer(moderator["token"]),
    )

    assert closed.status_code == 200, closed.text
    assert closed.json()["status"] == "closed"
    view = fake_api.view(game_id)
    assert view["status"] == "closed" and view["to_act"] == [] and view["legal"] == []
    events = fake_api.client.get(f"/games/{game_id}/events", params={"after": 0, "limit": 1000}).json()
    ending = [e for e in events["events"] if e["type"] == "table_closed"]
    assert ending == [{**ending[0], "reason": "abusive names", "operator": moderator["account_id"]}]
    export = fake_api.client.get(f"/games/{game_id}/export")
    assert export.status_code == 200, export.text
    document = export.json()
    assert document["closed"] == {"reason": "abusive names", "operator": moderator["account_id"]}
    assert "scores" not in document
    report = verify_with_receipts(document, [closed.json()])  # the close's receipt is signed too
    assert report.ok, report.failures()
    assert fake_api.sync.hget(f"ts:{{{game_id}}}:timer", "deadline") is None


def test_a_closed_table_refuses_commands_joins_and_a_second_close(fake_api: Api) -> None:
    waiting = fake_api.create()
    fake_api.join(waiting, "First")
    running = fake_api.started()
    seat = fake_api.view(running)["to_act"][0]
    legal = fake_api.view(running, seat)["legal"][0]
    for game_id in (waiting, running):
        closed = fake_api.client.post(f"/operator/tables/{game_id}/close", json=REASON, headers=ADMIN)
        assert closed.status_code == 200, closed.text

    join = fake_api.client.post(f"/games/{waiting}/players", json={"name": "Late"})
    command = fake_api.send(running, seat, legal)
    again = fake_api.client.post(f"/operator/tables/{running}/close", json=REASON, headers=ADMIN)

    assert join.status_code == 409 and error(join) == "table_closed"
    assert command.status_code == 409 and error(command) == "table_closed"
    assert again.status_code == 409 and error(again) == "table_closed"
    fake_api.project()
    lobby = fake_api.client.get("/games").json()["games"]
    assert {waiting, running}.isdisjoint({entry["game_id"] for entry in lobby})


def test_a_seats_live_stream_of_a_closed_table_shows_it_closed_and_ends(fake_api: Api) -> None:
    game_id = fake_api.started()
    fake_api.client.post(f"/operator/tables/{game_id}/close", json=REASON, headers=ADMIN)
    headers = {**fake_api.auth(game_id, 0), "Last-Event-ID": "0"}

    with fake_api.client.stream("GET", f"/games/{game_id}/live", headers=headers) as response:
        assert response.status_code == 200
        messages = parse_sse(response.iter_lines())  # returns: the stream ended by itself

    assert msgspec.json.decode(messages[-1]["data"])["status"] == "closed"
    assert messages[-1]["id"] == fake_api.head(game_id)


def test_closing_needs_a_reason_and_an_existing_table(fake_api: Api) -> None:
    game_id = fake_api.started()

    blank = fake_api.client.post(f"/operator/tables/{game_id}/close", json={"reason": "   "}, headers=ADMIN)
    missing = fake_api.client.post("/operator/tables/nosuchgame/close", json=REASON, headers=ADMIN)

    assert blank.status_code == 422 and error(blank) == "invalid_request"  # the body: no word in it
    assert missing.status_code == 404 and error(missing) == "game_not_found"
    assert fake_api.view(game_id)["status"] == "playing"


# -- banning an account ----------------------------------------------------------------------------


@pytest.mark.thorough
def test_a_banned_account_cannot_log_in_or_join_and_unbanning_restores_it(fake_api: Api) -> None:
    player = register(fake_api, "Troll", password="correct horse")
    table = fake_api.create()

    banned = fake_api.client.post("/operator/accounts/Troll/ban", json={"reason": "insults"}, headers=ADMIN)
    login = fake_api.client.post("/accounts/login", json={"name": "Troll", "password": "correct horse"})
    wrong = fake_api.client.post("/accounts/login", json={"name": "Troll", "password": "wrong password"})
    join = fake_api.client.post(f"/games/{table}/players", json={}, headers=bearer(player["token"]))
    me = fake_api.client.get("/accounts/me", headers=bearer(player["token"]))

    assert banned.status_code == 200, banned.text
    assert banned.json() == {
        "account_id": player["account_id"], "name": "Troll", "banned": True, "ban_reason": "insults"
    }  # fmt: skip
    assert login.status_code == 403 and error(login) == "account_banned"
    assert wrong.status_code == 401 and error(wrong) == "invalid_credentials"  # no word without the password
    assert join.status_code == 403 and error(join) == "account_banned"
    assert me.status_code == 403 and error(me) == "account_banned"
    assert fake_api.client.get(f"/games/{table}/view").json()["players"] == []

    unbanned = fake_api.client.post(
        f"/operator/accounts/{player['account_id']}/unban", json={"reason": "appeal accepted"}, headers=ADMIN
    )
    login_again = fake_api.client.post("/accounts/login", json={"name": "Troll", "password": "correct horse"})
    join_again = fake_api.client.post(f"/games/{table}/players", json={}, headers=bearer(player["token"]))

    assert unbanned.status_code == 200 and unbanned.json()["banned"] is False
    assert login_again.status_code == 200, login_again.text
    assert join_again.status_code == 201, join_again.text


@pytest.mark.thorough
def test_a_ban_ends_the_account_s_play_at_every_table_it_sits_at(fake_api: Api) -> None:
    """At a running table its seat token stops working and a bot plays the seat on; at a waiting
    one the seat is freed; at a finished one the token no longer accepts a rematch."""
    player = register(fake_api, "Cheater")
    as_player = bearer(player["token"])
    running, waiting, finished = (
        fake_api.create(players=3),
        fake_api.create(players=3),
        fake_api.create(players=3),
    )
    seats: dict[str, str] = {}
    for table in (running, waiting, finished):
        joined = fake_api.client.post(f"/games/{table}/players", json={}, headers=as_player)
        assert joined.status_code == 201, joined.text
        seats[table] = joined.json()["token"]
    for table in (running, finished):
        fake_api.tokens[table].append(seats[table])
        fake_api.join(table, "Guest A")
        fake_api.join(table, "Guest B")
    fake_api.play_until(finished, lambda view: view["status"] == "finished", seed=4)

    banned = fake_api.client.post(
        "/operator/accounts/Cheater/ban", json={"reason": "collusion"}, headers=ADMIN
    )
    assert banned.status_code == 200, banned.text

    view = fake_api.view(running)
    assert view["status"] == "playing" and view["players"][0]["bot"] is True  # a bot plays the seat on
    own = fake_api.client.get(f"/games/{running}/view", headers=bearer(seats[running]))
    assert own.status_code in (401, 403), own.text
    command = {"command_id": "after-the-ban", "command": {"type": "place_disc", "disc": "flower"}}
    move = fake_api.client.post(f"/games/{running}/commands", json=command, headers=bearer(seats[running]))
    assert move.status_code in (401, 403), move.text
    assert [p["name"] for p in fake_api.view(waiting)["players"]] == []  # the waiting seat is free
    rematch = fake_api.client.post(f"/games/{finished}/rematch", json={}, headers=bearer(seats[finished]))
    assert rematch.status_code in (401, 403), rematch.text


def test_a_ban_and_an_unban_are_events_the_account_stream_folds(fake_api: Api) -> None:
    player = register(fake_api, "Folded")
    account_id = player["account_id"]
    fake_api.client.post(f"/operator/accounts/{account_id}/ban", json={"reason": "spam"}, headers=ADMIN)
    moderator = operator_account(fake_api)
    fake_api.client.post(
        f"/operator/accounts/{account_id}/unban",
        json={"reason": "ok now"},
        headers=bearer(moderator["token"]),
    )

    stream: list[tuple[bytes, dict[bytes, bytes]]] = fake_api.sync.xrange(account_events_key(account_id))  # type: ignore[assignment]
    raw = [fields[b"d"] for _, fields in stream]
    events = [account_decoder.decode(data) for data in raw]

    assert events[-2:] == [
        AccountBanned(reason="spam", operator="admin"),
        AccountUnbanned(reason="ok now", operator=moderator["account_id"]),
    ]


def test_a_ban_twice_and_an_unban_of_an_account_in_good_standing_are_conflicts(fake_api: Api) -> None:
    register(fake_api, "Twice")
    first = fake_api.client.post("/operator/accounts/Twice/ban", json=REASON, headers=ADMIN)
    second = fake_api.client.post("/operator/accounts/Twice/ban", json=REASON, headers=ADMIN)
    fake_api.client.post("/operator/accounts/Twice/unban", json=REASON, headers=ADMIN)
    third = fake_api.client.post("/operator/accounts/Twice/unban", json=REASON, headers=ADMIN)
    nobody = fake_api.client.post("/operator/accounts/Nobody/ban", json=REASON, headers=ADMIN)

    assert first.status_code == 200
    assert second.status_code == 409 and error(second) == "already_banned"
    assert third.status_code == 409 and error(third) == "not_banned"
    assert nobody.status_code == 404 and error(nobody) == "account_not_found"


def test_a_banned_operator_account_loses_the_console(fake_api: Api) -> None:
    moderator = operator_account(fake_api, "Rogue")
    fake_api.client.post(f"/operator/accounts/{moderator['account_id']}/ban", json=REASON, headers=ADMIN)

    response = fake_api.client.get("/operator/me", headers=bearer(moderator["token"]))

    assert response.status_code == 403 and error(response) == "not_an_operator"


# -- chat reports ----------------------------------------------------------------------------------


def test_an_operator_reads_a_report_with_the_messages_text_and_marks_it_handled(fake_api: Api) -> None:
    game_id = fake_api.started()
    said = fake_api.client.post(
        f"/games/{game_id}/chat", json={"text": "you are all idiots"}, headers=fake_api.auth(game_id, 0)
    )
    assert said.status_code == 201, said.text
    reported = report(fake_api, game_id, 1)
    assert reported.status_code == 201, reported.text
    moderator = operator_account(fake_api)

    reports = fake_api.client.get("/operator/reports", headers=bearer(moderator["token"])).json()["reports"]
    report_id = reports[0]["id"]
    handled = fake_api.client.post(
        f"/operator/reports/{report_id}/handled",
        json={"reason": "warned P0"},
        headers=bearer(moderator["token"]),
    )
    again = fake_api.client.post(f"/operator/reports/{report_id}/handled", json=REASON, headers=ADMIN)
    unknown = fake_api.client.post("/operator/reports/1-0/handled", json=REASON, headers=ADMIN)
    after = fake_api.client.get("/operator/reports", headers=ADMIN).json()["reports"]

    assert len(reports) == 1
    assert reports[0]["game_id"] == game_id and reports[0]["reason"] == "abuse"
    shown = [(m["n"], m["name"], m["text"]) for m in reports[0]["messages"]]
    assert shown == [(1, "P0", "you are all idiots")]
    assert reports[0]["handled"] is None
    assert handled.status_code == 200, handled.text
    assert again.status_code == 409 and error(again) == "report_handled"
    assert unknown.status_code == 404 and error(unknown) == "report_not_found"
    assert after[0]["handled"]["operator"] == moderator["account_id"]
    assert after[0]["handled"]["note"] == "warned P0"


# -- finding and figures ---------------------------------------------------------------------------


def test_an_operator_finds_a_table_by_id_or_by_a_players_name_and_a_player_by_name(fake_api: Api) -> None:
    player = register(fake_api, "Findme")
    game_id = fake_api.create()
    joined = fake_api.client.post(f"/games/{game_id}/players", json={}, headers=bearer(player["token"]))
    assert joined.status_code == 201
    other = fake_api.create()
    fake_api.join(other, "Somebody Else")
    fake_api.project()

    by_id = fake_api.client.get("/operator/tables", params={"q": game_id}, headers=ADMIN).json()["tables"]
    by_name = fake_api.client.get("/operator/tables", params={"q": "findME"}, headers=ADMIN).json()["tables"]
    nothing = fake_api.client.get("/operator/tables", params={"q": "zzz"}, headers=ADMIN).json()["tables"]
    found = fake_api.client.get("/operator/players/findme", headers=ADMIN).json()
    empty = fake_api.client.get("/operator/tables", params={"q": ""}, headers=ADMIN)

    assert [t["game_id"] for t in by_id] == [game_id]
    assert [t["game_id"] for t in by_name] == [game_id]
    assert by_name[0]["players"][0]["account"] == {"id": player["account_id"], "name": "Findme"}
    assert nothing == []
    assert found["account_id"] == player["account_id"] and found["banned"] is False
    assert empty.status_code == 422 and error(empty) == "invalid_query"
    for blank in ("\x1c", "\ufeff", " \x85 "):  # blank to Python's regex or to the schema's (ECMAScript)
        refused = fake_api.client.get("/operator/tables", params={"q": blank}, headers=ADMIN)
        assert refused.status_code == 422 and error(refused) == "invalid_query", blank


def test_the_figures_count_waiting_and_running_tables_beside_the_health(fake_api: Api) -> None:
    fake_api.create()
    fake_api.started()
    fake_api.project()

    figures = fake_api.client.get("/operator/figures", headers=ADMIN).json()

    assert figures["ready"] is True and figures["health"] == "ok"
    assert figures["tables_waiting"] == 1 and figures["tables_running"] == 1
    assert figures["queue_projections"] == 0 and isinstance(figures["lag_ms"], int)
    assert [figures[f"queue_{name}"] for name in ("lifecycle", "bots", "review")] == [0, 0, 0]


# -- the audit log ---------------------------------------------------------------------------------


def test_every_operator_action_is_in_the_audit_log_with_who_did_it(fake_api: Api) -> None:
    moderator = operator_account(fake_api)
    register(fake_api, "Target")
    game_id = fake_api.started()
    fake_api.client.post(f"/games/{game_id}/chat", json={"text": "rude"}, headers=fake_api.auth(game_id, 0))
    report(fake_api, game_id, 1)
    report_id = fake_api.client.get("/operator/reports", headers=ADMIN).json()["reports"][0]["id"]
    mod = bearer(moderator["token"])

    fake_api.client.post("/operator/accounts/Target/ban", json={"reason": "r1"}, headers=mod)
    fake_api.client.post("/operator/accounts/Target/unban", json={"reason": "r2"}, headers=ADMIN)
    fake_api.client.post(f"/operator/reports/{report_id}/handled", json={"reason": "r3"}, headers=mod)
    fake_api.client.post(f"/operator/tables/{game_id}/close", json={"reason": "r4"}, headers=ADMIN)
    refused = fake_api.client.post(f"/operator/tables/{game_id}/close", json={"reason": "r5"}, headers=ADMIN)

    entries = audit(fake_api)
    found = fake_api.client.get("/operator/players/Target", headers=ADMIN)
    target = found.json()["account_id"]
    assert refused.status_code == 409
    assert [(e["action"], e["operator"], e["name"], e["target"], e["reason"]) for e in entries] == [
        ("table_closed", "admin", "admin", game_id, "r4"),
        ("report_handled", moderator["account_id"], "Moderator", report_id, "r3"),
        ("account_unbanned", "admin", "admin", target, "r2"),
        ("account_banned", moderator["account_id"], "Moderator", target, "r1"),
    ]
    before = {"before": entries[1]["id"], "limit": "1"}
    older = fake_api.client.get("/operator/audit", params=before, headers=ADMIN)
    assert [e["reason"] for e in older.json()["entries"]] == ["r2"]


@pytest.mark.thorough
def test_an_operator_s_actions_are_rate_limited_per_operator(fake_api: Api) -> None:
    """A stolen or scripted operator credential cannot act on the whole service at once: past 60
    actions a minute the next one is 429, and reading the console still works."""
    register(fake_api, "Pawn")
    codes = []
    for n in range(61):
        action = "ban" if n % 2 == 0 else "unban"
        answer = fake_api.client.post(f"/operator/accounts/Pawn/{action}", json=REASON, headers=ADMIN)
        codes.append(answer.status_code)
    assert codes == [200] * 60 + [429], codes
    assert fake_api.client.get("/operator/audit", headers=ADMIN).status_code == 200
