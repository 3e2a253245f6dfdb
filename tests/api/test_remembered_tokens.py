"""Each API process remembers the roles of the tokens it has seen, so that a view or a command needs
no round trip of its own for the token; the role is read again in the same round trip as the view
or the command's load, and a token revoked or rebound by another process is never honoured from
memory (``services.table.callers``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
from starlette.testclient import TestClient

from services.api.app import create_app
from services.operating.config import Settings
from services.store.keys import game_keys
from services.store.requests import SCRIPTS
from services.store.tokens import TokenStore, digest_of
from services.table.callers import Callers, TokenChanged, TokenCheck, verify
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only, unsigned


@pytest.fixture
def two_processes() -> Iterator[tuple[Api, Api]]:
    """Two API apps (two processes' memories) on one Redis."""
    server = fakeredis.FakeServer()

    def app() -> Any:
        return create_app(
            Settings(admin_token=ADMIN_TOKEN, **UNLIMITED),
            lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
        )

    with (
        TestClient(app(), raise_server_exceptions=False) as a,
        TestClient(app(), raise_server_exceptions=False) as b,
    ):
        sync = fakeredis.FakeRedis(server=server)
        yield Api(bearer_only(a), sync), Api(bearer_only(b), sync)


def command_of(view: dict[str, Any]) -> dict[str, Any]:
    command: dict[str, Any] = view["legal"][0]
    return command


def test_a_token_revoked_by_another_process_is_refused_by_one_that_remembers_it(
    two_processes: tuple[Api, Api],
) -> None:
    first, second = two_processes
    game_id = first.started("skull", 3, turn_seconds=20)
    second.tokens[game_id] = first.tokens[game_id]
    auth = first.auth(game_id, 1)
    assert first.view(game_id, 1)["seat"] == 1  # the first process now remembers seat 1's token

    response = second.client.post(f"/games/{game_id}/leave", json={}, headers=auth)
    assert response.status_code == 200
    head = first.head(game_id)

    view = first.client.get(f"/games/{game_id}/view", headers=auth)
    assert view.status_code == 401 and view.json()["error"]["code"] == "unauthorized"
    assert "hand" not in view.text and "discs" not in view.text
    body = {"command_id": uuid.uuid4().hex, "command": {"type": "place_disc", "disc": "flower"}}
    command = first.client.post(f"/games/{game_id}/commands", json=body, headers=auth)
    assert command.status_code == 401
    assert first.head(game_id) == head  # nothing appended for the revoked token


def test_a_token_rebound_to_another_seat_shows_that_seat_never_the_remembered_one(
    two_processes: tuple[Api, Api],
) -> None:
    first, _ = two_processes
    game_id = first.started("skull-king", 3)
    token = first.tokens[game_id][0]
    for _ in range(3):  # remembered, and its view perhaps kept (services.api.view_cache)
        assert first.view(game_id, 0)["seat"] == 0
    # what a join that lost its race does to its token in another process (TokenStore.bind): bound to
    # another seat, announced on the game's channel
    keys = game_keys(game_id)
    first.sync.eval(SCRIPTS["set_token"], 1, keys.tokens, keys.live, digest_of(token), "2")

    view = first.client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"}).json()
    assert view["seat"] == 2
    assert {**view, "clock": None} == {**first.view(game_id, 2), "clock": None}


def test_a_remembered_seat_sends_commands_that_are_applied_once(two_processes: tuple[Api, Api]) -> None:
    first, _ = two_processes
    game_id = first.started("skull-king", 3)
    for _ in range(6):
        view = first.view(game_id)
        seat = view["to_act"][0]
        own = first.view(game_id, seat)
        command_id = uuid.uuid4().hex
        sent = first.send(game_id, seat, command_of(own), command_id=command_id)
        again = first.send(game_id, seat, command_of(own), command_id=command_id)
        assert sent.status_code == 200 and unsigned(again.json()) == unsigned(sent.json())
        assert first.view(game_id, seat)["version"] == sent.json()["version"]


class CountingRedis:
    """A Redis stand-in that answers ``hget`` from a dict and counts the calls (it writes nothing)."""

    def __init__(self, roles: dict[str, str]) -> None:
        self.roles = roles
        self.calls = 0

    def register_script(self, source: str) -> object:
        return None

    async def hget(self, key: str, field: str) -> bytes | None:
        self.calls += 1
        role = self.roles.get(field)
        return role.encode() if role is not None else None


@pytest.mark.anyio
async def test_a_remembered_token_is_assumed_without_a_round_trip_and_carries_its_check() -> None:
    redis = CountingRedis({digest_of("seat-token"): "1"})
    callers = Callers(TokenStore(redis), admin_token=None)  # type: ignore[arg-type]

    first = await callers.identify("g1", "seat-token", assume=True)  # not remembered yet: read
    assumed = await callers.identify("g1", "seat-token", assume=True)

    assert redis.calls == 1
    assert first.check is None and first.seat == 1
    assert assumed.seat == 1 and assumed.check == TokenCheck("g1", digest_of("seat-token"), "1")
    verify(assumed.check, "1")
    with pytest.raises(TokenChanged):
        verify(assumed.check, None)
    with pytest.raises(TokenChanged):
        verify(assumed.check, "2")


@pytest.mark.anyio
async def test_a_forgotten_or_other_games_token_is_read_again() -> None:
    redis = CountingRedis({digest_of("seat-token"): "0"})
    callers = Callers(TokenStore(redis), admin_token=None)  # type: ignore[arg-type]
    await callers.identify("g1", "seat-token")
    other_game = await callers.identify("g2", "seat-token", assume=True)
    assert other_game.check is None  # remembered per game: read from Redis
    assumed = await callers.identify("g1", "seat-token", assume=True)
    assert assumed.check is not None
    callers.forget(assumed.check)
    assert (await callers.identify("g1", "seat-token", assume=True)).check is None
    assert redis.calls == 3
