"""Quick play over HTTP: queue, read (the long-poll), agree to bots, cancel; one live ticket per
browser and per account; the limits and the codes of every refusal."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import fakeredis
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from services.api.app import create_app
from services.operating.config import Settings
from services.people.quickplay import Matcher
from services.store.event_store import EventStore
from services.store.operations import Handover
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED

GAME = "six-nimmt"
PROXY = "203.0.113.7"  # the test client's address: a trusted proxy, so each browser has its own


@pytest.fixture
def served() -> Iterator[tuple[Starlette, fakeredis.FakeServer]]:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(
            admin_token=ADMIN_TOKEN,
            **{**UNLIMITED, "quickplay_rate": "100000/second", "trusted_proxies": PROXY},
        ),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    yield app, server


class Browser:
    """One browser (its own cookie jar) on the app's one test client: the app's lifespan runs once."""

    def __init__(self, client: TestClient, address: str) -> None:
        self.client, self.address = client, address
        self.jar: list[tuple[str, str, str, str]] = []

    def request(self, method: str, url: str, **kw: Any) -> Any:
        self.client.cookies.clear()
        for name, value, domain, path in self.jar:
            self.client.cookies.set(name, value, domain=domain, path=path)
        headers = {"X-Forwarded-For": self.address, **kw.pop("headers", {})}
        response = self.client.request(method, url, headers=headers, **kw)
        self.jar = [(c.name, c.value or "", c.domain, c.path) for c in self.client.cookies.jar]
        return response

    def get(self, url: str, **kw: Any) -> Any:
        return self.request("GET", url, **kw)

    def post(self, url: str, **kw: Any) -> Any:
        return self.request("POST", url, **kw)

    def delete(self, url: str, **kw: Any) -> Any:
        return self.request("DELETE", url, **kw)


@contextmanager
def browsers(app: Starlette, count: int) -> Iterator[list[Browser]]:
    with TestClient(app, raise_server_exceptions=False, client=(PROXY, 5000)) as client:
        yield [Browser(client, f"198.51.100.{n + 1}") for n in range(count)]


async def no_poke(game_id: str, handover: Handover) -> None:
    return None


def match(server: fakeredis.FakeServer) -> list[tuple[str, str]]:
    """One pass of the matcher, as the worker runs it, on the app's data."""

    async def run() -> list[tuple[str, str]]:
        client = fakeredis.FakeAsyncRedis(server=server)
        commands = GameCommands(EventStore(client), TokenStore(client), no_poke)
        done = await Matcher(commands).run_pass()
        await client.aclose()
        return done.seated

    return asyncio.run(run())


def queue(client: Browser, name: str | None = "Ada", players: int = 2, **more: Any) -> Any:
    body = {"game": GAME, "players": players, **({"name": name} if name else {}), **more}
    return client.post("/quickplay", json=body)


def test_two_players_pressing_play_now_are_seated_at_one_table_each_with_a_working_seat_token(
    served: tuple[Starlette, fakeredis.FakeServer],
) -> None:
    app, server = served
    with browsers(app, 2) as (one, two):
        first, second = queue(one, "Ada"), queue(two, "Bo")
        assert first.status_code == 201 and second.status_code == 201
        ticket = first.json()
        assert ticket["state"] == "queued" and ticket["position"] == 1 and ticket["wait_bound_seconds"] == 30
        assert "token" not in ticket and ticket["ticket_token"]
        assert len(match(server)) == 1
        seated = one.get(f"/quickplay/{ticket['ticket']}")  # the browser's cookie is the secret
        shown = seated.json()
        assert shown["state"] == "seated" and shown["token"]
        assert seated.cookies.get(f"ts_seat_{shown['game_id']}") == shown["token"]
        other = two.get(
            f"/quickplay/{second.json()['ticket']}",
            headers={"Authorization": f"Bearer {second.json()['ticket_token']}"},
        ).json()
        assert other["game_id"] == shown["game_id"] and other["seat"] != shown["seat"]
        again = one.get(f"/quickplay/{ticket['ticket']}").json()
        assert again["state"] == "seated" and "token" not in again  # handed out once
        view = two.get(
            f"/games/{shown['game_id']}/view", headers={"Authorization": f"Bearer {other['token']}"}
        )
        assert view.status_code == 200 and view.json()["status"] == "playing"
        lobby = one.get("/games").json()["games"]
        assert all(g.get("private") is not True for g in lobby)


def test_a_long_poll_answers_as_soon_as_the_ticket_is_seated(
    served: tuple[Starlette, fakeredis.FakeServer],
) -> None:
    app, server = served
    with browsers(app, 2) as (one, two):
        ticket = queue(one, "Ada").json()
        answers: list[Any] = []
        poll = threading.Thread(
            target=lambda: answers.append(
                one.get(f"/quickplay/{ticket['ticket']}?wait=25", headers=_bearer(ticket))
            )
        )
        poll.start()
        queue(two, "Bo")
        match(server)
        poll.join(timeout=30)
        assert answers and answers[0].json()["state"] == "seated" and answers[0].json()["token"]


def test_one_browser_holds_one_live_ticket(served: tuple[Starlette, fakeredis.FakeServer]) -> None:
    app, _ = served
    with browsers(app, 1) as (one,):
        first = queue(one, "Ada")
        again = queue(one, "Ada")
        assert again.status_code == 200 and again.json()["ticket"] == first.json()["ticket"]
        other = queue(one, "Ada", players=3)
        assert other.status_code == 409 and other.json()["error"]["code"] == "already_queued"
        assert other.json()["error"]["ticket"] == first.json()["ticket"]


def test_one_account_holds_one_live_ticket_and_is_seated_as_the_account(
    served: tuple[Starlette, fakeredis.FakeServer],
) -> None:
    app, server = served
    with browsers(app, 3) as (one, phone, two):
        account = one.post("/accounts", json={"name": "Ada Lovelace"}).json()
        auth = {"Authorization": f"Bearer {account['token']}"}
        ticket = one.post("/quickplay", json={"game": GAME, "players": 2}, headers=auth)
        assert ticket.status_code == 201
        elsewhere = phone.post("/quickplay", json={"game": GAME, "players": 2}, headers=auth)
        assert elsewhere.status_code == 409 and elsewhere.json()["error"]["code"] == "already_queued"
        named = phone.post("/quickplay", json={"game": GAME, "players": 2, "name": "Someone"}, headers=auth)
        assert named.status_code == 422 and named.json()["error"]["code"] == "name_not_yours"
        other = two.post("/accounts", json={"name": "Bo Diddley"}).json()  # two new accounts: close ratings
        two.post(
            "/quickplay",
            json={"game": GAME, "players": 2},
            headers={"Authorization": f"Bearer {other['token']}"},
        )
        match(server)
        shown = one.get(
            f"/quickplay/{ticket.json()['ticket']}",
            headers={"Authorization": f"Bearer {ticket.json()['ticket_token']}"},
        ).json()
        view = one.get(f"/games/{shown['game_id']}/view").json()
        me = next(p for p in view["players"] if p["seat"] == shown["seat"])
        assert me["account"] == {"id": account["account_id"], "name": "Ada Lovelace"}
        after = phone.post("/quickplay", json={"game": GAME, "players": 2}, headers=auth)
        assert after.status_code == 201  # seated: the account may queue again


def test_two_accounts_of_one_network_are_never_seated_together_while_two_guests_of_one_home_are(
    served: tuple[Starlette, fakeredis.FakeServer],
) -> None:
    """A rated table never seats two tickets of one client network (one client cannot feed its own
    account a rating with a second account or a guest); a table of guests is rated for no one."""
    app, server = served
    with browsers(app, 5) as (ada, bo, cy, kid, parent):
        bo.address = kid.address = parent.address = ada.address  # one home router
        tickets = {}
        for browser, name in ((ada, "Ada Lovelace"), (bo, "Bo Diddley")):
            account = browser.post("/accounts", json={"name": name}).json()
            auth = {"Authorization": f"Bearer {account['token']}"}
            tickets[name] = browser.post("/quickplay", json={"game": GAME, "players": 2}, headers=auth)
        assert match(server) == []
        cy_account = cy.post("/accounts", json={"name": "Cy Twombly"}).json()
        cy.post(
            "/quickplay",
            json={"game": GAME, "players": 2},
            headers={"Authorization": f"Bearer {cy_account['token']}"},
        )
        assert len(match(server)) == 1
        states = {}
        for name, ticket in tickets.items():
            token = {"Authorization": f"Bearer {ticket.json()['ticket_token']}"}
            states[name] = ada.get(f"/quickplay/{ticket.json()['ticket']}", headers=token).json()["state"]
        assert sorted(states.values()) == ["queued", "seated"]

        first, second = queue(kid, "Kid", players=3), queue(parent, "Parent", players=3)
        third = queue(ada, "Grace", players=3)  # Ada's browser without its account: a guest of the home
        assert {first.status_code, second.status_code, third.status_code} == {201}
        assert len(match(server)) == 1
        for browser, ticket in ((kid, first), (parent, second)):
            assert browser.get(f"/quickplay/{ticket.json()['ticket']}").json()["state"] == "seated"


def test_cancelling_forgets_the_ticket_and_a_matched_ticket_cannot_be_cancelled(
    served: tuple[Starlette, fakeredis.FakeServer],
) -> None:
    app, server = served
    with browsers(app, 3) as (one, two, three):
        ticket = queue(one, "Ada").json()
        cancelled = one.delete(f"/quickplay/{ticket['ticket']}")
        assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
        assert one.get(f"/quickplay/{ticket['ticket']}", headers=_bearer(ticket)).status_code == 404
        assert one.delete(f"/quickplay/{ticket['ticket']}", headers=_bearer(ticket)).status_code == 404
        assert [
            k for k in fakeredis.FakeRedis(server=server).keys("*") if ticket["ticket"].encode() in k
        ] == []
        fresh = queue(one, "Ada")
        assert fresh.status_code == 201  # the cookie named a gone ticket: a new one
        queue(two, "Bo")
        match(server)
        late = one.delete(f"/quickplay/{fresh.json()['ticket']}")
        assert late.status_code == 409 and late.json()["error"]["code"] == "already_matched"
        alone = queue(three, "Cy").json()
        agreed = three.post(f"/quickplay/{alone['ticket']}/bots", json={})
        assert agreed.status_code == 200 and agreed.json()["bots_after_wait"] is True


def _bearer(ticket: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {ticket['ticket_token']}"}


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"game": "chess", "players": 2, "name": "Ada"}, "unknown_game"),
        ({"game": GAME, "players": 1, "name": "Ada"}, "bad_player_count"),
        ({"game": "skull", "players": 7, "name": "Ada"}, "bad_player_count"),
        ({"game": GAME, "players": 2}, "invalid_name"),
        ({"game": GAME, "players": 2, "name": "Ada", "bots": True}, "invalid_request"),
    ],
)
def test_a_bad_request_is_refused_with_its_code_and_queues_nothing(
    served: tuple[Starlette, fakeredis.FakeServer], body: dict[str, Any], code: str
) -> None:
    app, server = served
    with browsers(app, 1) as (one,):
        response = one.post("/quickplay", json=body)
        assert response.status_code == 422 and response.json()["error"]["code"] == code
        assert fakeredis.FakeRedis(server=server).keys("ts:qp:*") == []


def test_reading_a_ticket_needs_its_secret(served: tuple[Starlette, fakeredis.FakeServer]) -> None:
    app, _ = served
    with browsers(app, 2) as (one, stranger):
        ticket = queue(one, "Ada").json()
        assert stranger.get(f"/quickplay/{ticket['ticket']}").status_code == 401
        wrong = stranger.get(f"/quickplay/{ticket['ticket']}", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "ticket_not_found"
        assert (
            stranger.delete(
                f"/quickplay/{ticket['ticket']}", headers={"Authorization": "Bearer nope"}
            ).status_code
            == 404
        )
        assert stranger.get("/quickplay/not-a-ticket", headers=_bearer(ticket)).status_code == 404
        assert one.get(f"/quickplay/{ticket['ticket']}?wait=99").json()["error"]["code"] == "invalid_query"


def test_tickets_are_rate_limited_per_address() -> None:
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(
            admin_token=ADMIN_TOKEN, **{**UNLIMITED, "quickplay_rate": "2/minute", "trusted_proxies": PROXY}
        ),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with browsers(app, 2) as (one, other):
        for name in ("Ada", "Bo"):
            one.jar = []
            assert queue(one, name).status_code == 201
        one.jar = []
        limited = queue(one, "Cy")
        assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
        assert int(limited.headers["retry-after"]) >= 1
        assert queue(other, "Di").status_code == 201


def test_an_accounts_quick_play_seat_is_in_its_your_tables_on_another_device(
    served: tuple[Starlette, fakeredis.FakeServer],
) -> None:
    app, server = served
    with browsers(app, 3) as (one, phone, two):
        account = one.post("/accounts", json={"name": "Ada Lovelace"}).json()
        auth = {"Authorization": f"Bearer {account['token']}"}
        ticket = one.post("/quickplay", json={"game": GAME, "players": 2}, headers=auth)
        assert ticket.status_code == 201
        other = two.post("/accounts", json={"name": "Bo Diddley"}).json()
        two.post(
            "/quickplay",
            json={"game": GAME, "players": 2},
            headers={"Authorization": f"Bearer {other['token']}"},
        )
        match(server)
        shown = one.get(
            f"/quickplay/{ticket.json()['ticket']}",
            headers={"Authorization": f"Bearer {ticket.json()['ticket_token']}"},
        ).json()
        listed = phone.get("/me/tables", headers=auth)  # the phone holds no seat cookie of that table
        assert listed.status_code == 200, listed.text
        tables = listed.json()["tables"]
        assert [(t["game_id"], t["seat"]) for t in tables] == [(shown["game_id"], shown["seat"])]
