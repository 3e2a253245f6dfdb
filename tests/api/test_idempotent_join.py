"""``POST /games/{id}/players`` with an ``Idempotency-Key``: a retry returns the same seat and token
(also after the first try appended its join and was answered 503 ``not_replicated``), another body
is a 409, and concurrent requests with one key seat one player; ``POST /games`` likewise answers a
retry after a 503 ``not_replicated`` with the table the first try created."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from services.errors import ConflictError
from services.store.connection import NotReplicated
from services.store.keys import IDEMPOTENCY_PREFIX
from services.table.commands import GameCommands
from tests.api.conftest import Api

BODY = {"game": "skull", "players": 3, "options": {}}


def key() -> str:
    return uuid.uuid4().hex


def commands_of(api: Api) -> GameCommands:
    commands: GameCommands = api.client.app.state.context.commands  # type: ignore[attr-defined]
    return commands


def seats_taken(api: Api, game_id: str) -> int:
    return sum(1 for player in api.view(game_id)["players"] if player.get("name"))


def unconfirmed_once(monkeypatch: pytest.MonkeyPatch, target: object, name: str) -> list[str]:
    """``target.name`` writes as usual, then raises ``NotReplicated`` once (its replicas did not
    confirm in time: the write is on the primary); the list records each such failure."""
    original: Callable[..., Awaitable[Any]] = getattr(target, name)
    failed: list[str] = []

    async def write_then_fail(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        if not failed:
            failed.append(name)
            raise NotReplicated(f"{name} reached [1, 0] of ('WAITAOF', 1, 1, 500)")
        return result

    monkeypatch.setattr(target, name, write_then_fail)
    return failed


def test_the_same_key_and_body_answer_with_the_same_seat_and_token_and_seat_nobody_again(api: Api) -> None:
    game_id = api.create()
    headers = {"Idempotency-Key": key()}
    first = api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers)
    assert first.status_code == 201, first.text
    again = api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers)
    assert again.status_code == 201, again.text
    assert again.json() == first.json()
    api.project()
    assert seats_taken(api, game_id) == 1
    own = api.client.get(
        f"/games/{game_id}/view", headers={"Authorization": f"Bearer {again.json()['token']}"}
    )
    assert own.status_code == 200 and own.json()["seat"] == first.json()["seat"]


def test_a_join_answered_503_not_replicated_is_retried_to_the_same_seat_and_token(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = api.create()
    api.join(game_id, "First")
    failed = unconfirmed_once(monkeypatch, commands_of(api).store, "append")
    headers = {"Idempotency-Key": key()}
    refused = api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers)
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "not_replicated"
    assert failed == ["append"]
    retried = api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers)
    assert retried.status_code == 201, retried.text
    assert retried.json()["seat"] == 1  # the seat the first try took, not a second one
    token = retried.json()["token"]
    assert api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers).json() == {
        "seat": 1,
        "token": token,
    }
    api.project()
    assert seats_taken(api, game_id) == 2
    assert api.client.post(f"/games/{game_id}/players", json={"name": "Third"}).status_code == 201  # not full
    own = api.client.get(f"/games/{game_id}/view", headers={"Authorization": f"Bearer {token}"})
    assert own.status_code == 200 and own.json()["seat"] == 1


def test_the_same_join_key_with_another_body_or_game_is_a_409_and_reveals_no_seat(api: Api) -> None:
    game_id, other_game = api.create(), api.create()
    headers = {"Idempotency-Key": key()}
    first = api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers)
    assert first.status_code == 201
    for path, body in (
        (f"/games/{game_id}/players", {"name": "Bob"}),
        (f"/games/{game_id}/players", {"name": "Ada", "client_seed": "x"}),
        (f"/games/{other_game}/players", {"name": "Ada"}),
    ):
        other = api.client.post(path, json=body, headers=headers)
        assert other.status_code == 409, other.text
        assert other.json()["error"]["code"] == "idempotency_key_reused"
        assert first.json()["token"] not in other.text
    api.project()
    assert seats_taken(api, game_id) == 1 and seats_taken(api, other_game) == 0


def test_a_refused_join_leaves_its_key_for_a_retry_that_seats_once(api: Api) -> None:
    game_id = api.create(players=3)
    headers = {"Idempotency-Key": key()}
    bad = api.client.post(f"/games/{game_id}/players", json={"name": ""}, headers=headers)
    assert bad.status_code == 422  # the body is checked before the key is looked at
    assert (
        api.client.post(f"/games/{game_id}/players", json={"name": "Ada"}, headers=headers).status_code == 201
    )
    assert api.sync.keys(IDEMPOTENCY_PREFIX + "join:*")  # its record, under the key's digest
    assert all(headers["Idempotency-Key"].encode() not in name for name in api.sync.keys("*"))


def test_concurrent_joins_with_one_key_seat_one_player(fake_api: Api) -> None:
    game_id = fake_api.create(players=5)
    commands = commands_of(fake_api)
    portal_call = fake_api.client.portal.call  # type: ignore[union-attr]
    the_key = key()

    async def racing() -> list[tuple[int, str] | str]:
        async def one() -> tuple[int, str] | str:
            try:
                return await commands.join(game_id, "Ada", "", None, idempotency_key=the_key)
            except ConflictError as conflict:
                return conflict.code

        return list(await asyncio.gather(*(one() for _ in range(6))))

    answers = portal_call(racing)
    seated = {answer for answer in answers if isinstance(answer, tuple)}
    assert len(seated) == 1, answers  # every request that went ahead got the one seat and token
    assert set(answers) - seated <= {"idempotency_key_in_use"}, answers
    fake_api.project()
    assert seats_taken(fake_api, game_id) == 1
    assert portal_call(commands.join, game_id, "Ada", "", None, the_key) in seated


def test_a_create_answered_503_not_replicated_is_retried_to_the_same_table(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed = unconfirmed_once(monkeypatch, commands_of(api).store, "create")
    headers = {"Idempotency-Key": key()}
    refused = api.client.post("/games", json=BODY, headers=headers)
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "not_replicated"
    assert failed == ["create"]
    streams = len(api.sync.keys("*:events"))
    retried = api.client.post("/games", json=BODY, headers=headers)
    assert retried.status_code == 201, retried.text
    assert len(api.sync.keys("*:events")) == streams == 1  # no second table
    host = {"Authorization": f"Bearer {retried.json()['host_token']}"}
    assert api.client.get(f"/games/{retried.json()['game_id']}/view", headers=host).status_code == 200
