"""Every error a dying Redis node's connection raises becomes a 503 ``unavailable`` with
``Retry-After``, never a 500: redis-py's own (a cluster's included), the socket's, and the event
loop's for a write on a connection the node closed (uvloop's ``RuntimeError("handler is closed")``)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from redis.exceptions import (
    ClusterDownError,
    ClusterError,
    MasterDownError,
    MaxConnectionsError,
    ReadOnlyError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bots import choose
from services.store.connection import is_unavailable
from tests.api.conftest import Api

DYING_NODE = [
    RedisConnectionError("Connection closed by server."),
    RedisTimeoutError("Timeout reading from socket"),
    MaxConnectionsError("Too many connections"),
    ClusterDownError("CLUSTERDOWN The cluster is down"),
    MasterDownError("MASTERDOWN Link with MASTER is down"),
    ClusterError("TTL exhausted."),
    TryAgainError("TRYAGAIN"),
    SlotNotCoveredError("Slot 1234 is not covered by the cluster."),
    ReadOnlyError("You can't write against a read only replica."),
    ConnectionResetError(104, "Connection reset by peer"),
    BrokenPipeError(32, "Broken pipe"),
    ConnectionRefusedError(111, "Connection refused"),
    TimeoutError(),
    RuntimeError("handler is closed"),
    RuntimeError(
        "unable to perform operation on <TCPTransport closed=True reading=False>; handler is closed"
    ),
    ExceptionGroup("reads", [RedisConnectionError("gone"), RuntimeError("handler is closed")]),
]


@pytest.mark.parametrize("error", DYING_NODE, ids=lambda error: type(error).__name__ + ":" + str(error)[:24])
def test_a_dying_nodes_connection_error_is_a_503_with_a_code_never_a_500(
    fake_api: Api, monkeypatch: pytest.MonkeyPatch, error: BaseException
) -> None:
    queries = fake_api.client.app.state.context.queries  # type: ignore[attr-defined]

    async def dying(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr(queries, "lobby", dying)
    response = fake_api.client.get("/games")
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "unavailable"
    assert response.headers["Retry-After"]


def test_a_command_whose_node_dies_mid_write_is_a_503(fake_api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    game_id = fake_api.started()
    store = fake_api.client.app.state.context.commands.store  # type: ignore[attr-defined]

    async def dying(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("handler is closed")

    monkeypatch.setattr(store, "append", dying)
    seat = fake_api.view(game_id)["to_act"][0]
    own = fake_api.view(game_id, seat)
    answer = fake_api.send(game_id, seat, choose("skull", own, random.Random(3)))
    assert answer.status_code == 503 and answer.json()["error"]["code"] == "unavailable"


def test_other_runtime_errors_stay_internal_errors() -> None:
    assert not is_unavailable(RuntimeError("dictionary changed size during iteration"))
    assert not is_unavailable(ValueError("bad"))
    assert not is_unavailable(ExceptionGroup("mixed", [RedisConnectionError("gone"), KeyError("x")]))
    assert all(is_unavailable(error) for error in DYING_NODE)
