"""Commands answered ahead of the app (``services.api.command_lane``) answer exactly as the route does:
the same answer, headers, refusals, counting and log line; what the lane cannot answer without I/O
goes the whole way; a revoked token is refused with nothing written; the drain bounds the lane's
commands as it bounds the route's."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
from starlette.testclient import TestClient

from services.api.app import create_app
from services.api.command_lane import CommandLane
from services.operating.config import Settings
from services.store.keys import game_keys
from services.store.tokens import digest_of
from services.table.commands import GameCommands
from services.telemetry import metrics
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only, unsigned
from tests.support.waiting import wait_until

COMMANDS = "/games/{game_id}/commands"


@pytest.fixture
def answered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The statuses of the answers the lane gave itself, in order."""
    statuses: list[int] = []
    send = CommandLane._send

    async def counted(self: CommandLane, exchange: Any, status: int, body: bytes, extra: Any = ()) -> None:
        statuses.append(status)
        await send(self, exchange, status, body, extra)

    monkeypatch.setattr(CommandLane, "_send", counted)
    return statuses


def first_placement(api: Api, game_id: str, seat: int) -> dict[str, Any]:
    legal: list[dict[str, Any]] = api.view(game_id, seat)["legal"]
    return legal[0]


def guarded_headers(response: Any) -> dict[str, str]:
    """An answer's headers but those that differ between two answers of the same kind."""
    return {k: v for k, v in response.headers.items() if k not in ("date", "content-length", "x-request-id")}


def test_a_command_from_a_remembered_token_is_answered_ahead_of_the_app_as_the_route_answers_it(
    fake_api: Api, answered: list[int]
) -> None:
    game_id = fake_api.started("skull", 3)
    body = {"command_id": "first", "command": first_placement(fake_api, game_id, 0)}
    tokens = fake_api.client.app.state.context.callers._tokens  # type: ignore[attr-defined]
    tokens.forget(game_id, digest_of(fake_api.tokens[game_id][0]))  # as a process that never saw it
    by_route = fake_api.client.post(
        f"/games/{game_id}/commands", json=body, headers=fake_api.auth(game_id, 0)
    )
    assert by_route.status_code == 200, by_route.text
    assert answered == [], "a token not yet remembered is identified by the route"
    cookie = {"Cookie": f"ts_seat_{game_id}={fake_api.tokens[game_id][0]}"}
    replayed = fake_api.client.post(f"/games/{game_id}/commands", json=body, headers=cookie)
    assert answered == [200], "a remembered token's command is the lane's, a browser's cookie too"
    assert unsigned(replayed.json()) == unsigned(by_route.json())
    assert guarded_headers(replayed) == guarded_headers(by_route)
    requests = metrics.metrics().requests.labels(COMMANDS, "POST", "2xx")
    counted = requests._value.get()
    second = first_placement(fake_api, game_id, 1)
    fake_api.view(game_id, 1)
    moved = fake_api.send(game_id, 1, second)
    assert moved.status_code == 200, moved.text
    assert set(moved.json()) == {"version", "events", "receipt"}
    assert moved.json()["version"] == by_route.json()["version"] + 1
    assert requests._value.get() >= counted + 1
    echoed = fake_api.client.post(
        f"/games/{game_id}/commands",
        json={"command_id": uuid.uuid4().hex, "command": first_placement(fake_api, game_id, 2)},
        headers={**fake_api.auth(game_id, 2), "X-Request-ID": "lane-1"},
    )
    assert echoed.status_code == 200 and echoed.headers["x-request-id"] == "lane-1"
    secure = fake_api.client.post(
        f"https://testserver/games/{game_id}/commands",
        json=body,
        headers=fake_api.auth(game_id, 0),
    )
    assert secure.status_code == 200 and secure.headers["strict-transport-security"].startswith("max-age=")


def test_the_lanes_refusals_are_the_routes_in_status_code_and_words(
    fake_api: Api, answered: list[int]
) -> None:
    game_id = fake_api.started("skull", 3)
    fake_api.view(game_id, 0)  # the token is remembered from here on
    auth = fake_api.auth(game_id, 0)
    url = f"/games/{game_id}/commands"
    cases: list[tuple[dict[str, Any], int, str]] = [
        (
            {"content": b"{not json", "headers": {**auth, "Content-Type": "application/json"}},
            400,
            "malformed_json",
        ),
        ({"json": {"command_id": "x"}}, 422, "invalid_request"),
        (
            {"content": b"{}", "headers": {**auth, "Content-Type": "text/plain"}},
            415,
            "unsupported_media_type",
        ),
        ({"json": {"command_id": "x", "command": {"type": "bid", "amount": 99}}}, 422, "invalid_command"),
        ({"json": {"command_id": "y", "command": {"type": "bid", "amount": 1}}}, 422, "invalid_command"),
        (
            {
                "json": {
                    "command_id": "z",
                    "command": first_placement(fake_api, game_id, 0),
                    "expected_version": 1,
                }
            },
            409,
            "version_conflict",
        ),
    ]
    for sent, status, code in cases:
        sent.setdefault("headers", auth)
        response = fake_api.client.post(url, **sent)
        assert response.status_code == status, (sent, response.text)
        assert response.json()["error"]["code"] == code, response.text
        assert response.json()["error"]["message"], "a sentence, not only a code"
        assert response.headers["x-content-type-options"] == "nosniff"
    wrong_seat = fake_api.send(game_id, 1, first_placement(fake_api, game_id, 1))  # seat 1's token, first use
    assert wrong_seat.status_code == 200
    assert 422 in answered and 409 in answered, "rule refusals and conflicts are answered by the lane"
    assert 400 not in answered and 415 not in answered, "bodies the route refuses go to the route"


def test_a_revoked_token_assumed_from_memory_is_refused_and_nothing_is_written(fake_api: Api) -> None:
    game_id = fake_api.started("skull", 3)
    command = first_placement(fake_api, game_id, 0)
    stale = fake_api.tokens[game_id][0]
    left = fake_api.client.post(f"/games/{game_id}/leave", json={}, headers=fake_api.auth(game_id, 0))
    assert left.status_code == 200, left.text
    head = fake_api.sync.xlen(game_keys(game_id).events)
    refused = fake_api.client.post(
        f"/games/{game_id}/commands",
        json={"command_id": uuid.uuid4().hex, "command": command},
        headers={"Authorization": f"Bearer {stale}"},
    )
    assert refused.status_code == 401, refused.text
    assert fake_api.sync.xlen(game_keys(game_id).events) == head


def test_a_cross_site_command_is_refused_whatever_token_it_carries(
    fake_api: Api, answered: list[int]
) -> None:
    game_id = fake_api.started("skull", 3)
    fake_api.view(game_id, 0)
    refused = fake_api.client.post(
        f"/games/{game_id}/commands",
        json={"command_id": uuid.uuid4().hex, "command": first_placement(fake_api, game_id, 0)},
        headers={**fake_api.auth(game_id, 0), "Origin": "https://elsewhere.example"},
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "cross_origin"
    assert answered == []


@pytest.fixture
def draining() -> Iterator[tuple[TestClient, Api]]:
    server = fakeredis.FakeServer()
    settings = Settings(admin_token=ADMIN_TOKEN, shutdown_seconds=0.8, **UNLIMITED)
    app = create_app(
        settings, lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server))
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, Api(bearer_only(client), fakeredis.FakeRedis(server=server))


def test_a_lane_command_still_running_when_the_drain_deadline_passes_is_answered_503(
    draining: tuple[TestClient, Api], answered: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, api = draining
    game_id = api.started("skull", 3)
    api.view(game_id, 0)
    entered = threading.Event()

    async def stuck(self: GameCommands, *args: Any, **kwargs: Any) -> Any:
        entered.set()
        import asyncio

        await asyncio.Event().wait()  # a store that never answers

    monkeypatch.setattr(GameCommands, "command", stuck)
    answers: list[Any] = []
    sender = threading.Thread(
        target=lambda: answers.append(api.send(game_id, 0, {"type": "place", "disc": "flower"})), daemon=True
    )
    sender.start()
    assert entered.wait(10), "the command never reached the store"
    client.app.state.begin_shutdown()  # type: ignore[attr-defined]
    wait_until(lambda: bool(answers), 10, "the lane's answer after the drain's deadline")
    (answer,) = answers
    assert answer.status_code == 503 and answer.headers["retry-after"] == "1"
    assert answer.json()["error"]["code"] == "shutting_down"
    assert answered == [503]
