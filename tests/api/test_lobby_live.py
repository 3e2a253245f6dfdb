"""The live lobby (``GET /lobby/live``): the whole lobby first, then each table whose summary changed,
on fakeredis, a real server, a real stack (uvicorn, a worker process, the embedded Redis) and a
Redis Cluster deployment (the lobby's channel on the queue's server beside it)."""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import redis
from starlette.testclient import TestClient

from services.cli.demo import local_stack
from services.store.embedded import EmbeddedRedis
from services.store.keys import LOBBY_CHANNEL
from tests.api.conftest import Api
from tests.api.test_cluster import api_on_cluster
from tests.support.cluster import LocalCluster

DEADLINE = 20.0
Event = tuple[str, dict[str, Any]]


class Listener:
    """Reads a lobby stream in a thread: each (event name, decoded data) on a queue."""

    def __init__(self, open_stream: Callable[[], Any]) -> None:
        self.events: queue.Queue[Event] = queue.Queue()
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(open_stream,), daemon=True)
        self._thread.start()

    def _run(self, open_stream: Callable[[], Any]) -> None:
        try:
            with open_stream() as response:
                self.status, self.headers = response.status_code, dict(response.headers)
                name, data = "message", None
                for line in response.iter_lines():
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: "):
                        data = line[6:]
                    elif line == "" and data is not None:
                        self.events.put((name, json.loads(data)))
                        name, data = "message", None
        except httpx.HTTPError:
            pass  # the server went away with the stream open
        finally:
            self.ended.set()

    def next(self, wanted: Callable[[str, dict[str, Any]], bool], what: str) -> Event:
        """The next event ``wanted`` accepts (others are skipped), within the deadline."""
        until = time.monotonic() + DEADLINE
        while True:
            try:
                name, data = self.events.get(timeout=max(0.0, until - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"no lobby event: {what}") from None
            if wanted(name, data):
                return name, data


def whole(name: str, data: dict[str, Any]) -> bool:
    return name == "lobby"


def table(game_id: str, **fields: Any) -> Callable[[str, dict[str, Any]], bool]:
    def wanted(name: str, data: dict[str, Any]) -> bool:
        return name == "table" and data["game_id"] == game_id and all(data[k] == v for k, v in fields.items())

    return wanted


@contextmanager
def listening(client: TestClient) -> Iterator[Listener]:
    listener = Listener(lambda: client.stream("GET", "/lobby/live"))
    try:
        yield listener
    finally:
        client.app.state.begin_shutdown()  # type: ignore[attr-defined]  # ends every stream at once
        assert listener.ended.wait(DEADLINE)


def test_the_lobby_stream_sends_the_whole_lobby_then_a_new_table_and_each_seat_taken(api: Api) -> None:
    before = api.create("skull", 3)
    api.project()
    with listening(api.client) as lobby:
        _, first = lobby.next(whole, "the whole lobby")
        assert lobby.status == 200 and lobby.headers["content-type"].startswith("text/event-stream")
        assert "content-encoding" not in lobby.headers
        assert [g["game_id"] for g in first["games"]] == [before]
        game_id = api.create("six-nimmt", 2)
        api.project()
        _, created = lobby.next(table(game_id), "the new table")
        assert created | {"version": 0} == {
            "game_id": game_id,
            "game": "six-nimmt",
            "seats": 2,
            "seats_taken": 0,
            "status": "waiting",
            "practice": False,
            "version": 0,
        }
        api.join(game_id, "Ada")
        api.project()
        lobby.next(table(game_id, seats_taken=1, status="waiting"), "a seat taken")
        api.join(game_id, "Bo")
        api.project()
        lobby.next(table(game_id, seats_taken=2, status="playing"), "the table full and started")


def test_a_move_changes_no_lobby_entry_and_announces_nothing(api: Api) -> None:
    game_id = api.started("skull", 3)
    api.project()
    pubsub = api.sync.pubsub()
    pubsub.subscribe(LOBBY_CHANNEL)
    assert pubsub.get_message(timeout=5)["type"] == "subscribe"  # type: ignore[index]
    for seat in range(3):  # moves: each seat places its first disc
        placed = api.send(game_id, seat, {"type": "place_disc", "disc": "flower"})
        assert placed.status_code == 200, placed.text
    api.project()
    marker = api.create("skull", 3)  # announced after the moves' projections, on the same channel
    api.project()
    message = pubsub.get_message(timeout=5)
    assert message is not None and json.loads(message["data"])["game_id"] == marker
    pubsub.close()


def test_a_lobby_stream_takes_one_of_the_clients_stream_slots(api: Api) -> None:
    slots = api.client.app.state.context.stream_slots  # type: ignore[attr-defined]
    slots.per_client = 1
    with listening(api.client) as lobby:
        lobby.next(whole, "the whole lobby")
        refused = api.client.get("/lobby/live")
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "too_many_streams"
        assert api.client.app.state.lobby.stream_count == 1  # type: ignore[attr-defined]
    hub = api.client.app.state.lobby  # type: ignore[attr-defined]
    until = time.monotonic() + DEADLINE  # given back as the ended stream's response finishes
    while slots.open or hub.stream_count:
        assert time.monotonic() < until, "the ended stream kept its slot or its feed"
        time.sleep(0.01)


def test_shutting_down_refuses_a_new_lobby_stream(api: Api) -> None:
    api.client.app.state.begin_shutdown()  # type: ignore[attr-defined]
    deadline = time.monotonic() + DEADLINE
    while (refused := api.client.get("/lobby/live")).status_code != 503:
        assert time.monotonic() < deadline
    assert refused.json()["error"]["code"] == "shutting_down" and refused.headers["retry-after"] == "1"


@pytest.mark.redis
@pytest.mark.parametrize("api", ["redis"], indirect=True)
def test_a_lost_subscriber_has_every_stream_read_the_whole_lobby_again(api: Api) -> None:
    with listening(api.client) as lobby:
        lobby.next(whole, "the whole lobby")
        game_id = api.create("skull", 3)
        assert api.sync.client_kill_filter(_type="pubsub") >= 1  # the hub's subscriber among them
        lobby.next(whole, "the whole lobby after the loss")
        api.project()  # announced around the new subscription: in a change, or in a whole lobby after it

        def seen(name: str, data: dict[str, Any]) -> bool:
            return table(game_id)(name, data) or any(g["game_id"] == game_id for g in data.get("games", []))

        lobby.next(seen, "the table created while the subscriber was lost")


# -- a real stack: uvicorn, a worker process, the embedded Redis -------------------------------------


@pytest.fixture(scope="module")
def stack() -> Iterator[str]:
    with local_stack() as url:
        yield url


@pytest.mark.redis
def test_a_browser_lobby_stream_on_the_real_stack_sees_a_table_created_and_joined(stack: str) -> None:
    with httpx.Client(base_url=stack, timeout=DEADLINE) as client:
        lobby = Listener(lambda: httpx.Client(base_url=stack, timeout=DEADLINE).stream("GET", "/lobby/live"))
        lobby.next(whole, "the whole lobby")
        game_id = client.post("/games", json={"game": "skull-king", "players": 2}).json()["game_id"]
        lobby.next(table(game_id, seats_taken=0), "the new table, projected by the worker process")
        client.post(f"/games/{game_id}/players", json={"name": "Ada"})
        lobby.next(table(game_id, seats_taken=1), "the seat taken")
        client.post(f"/games/{game_id}/players", json={"name": "Bo"})
        lobby.next(table(game_id, seats_taken=2, status="playing"), "the table started")


# -- a Redis Cluster deployment --------------------------------------------------------------------


@pytest.mark.redis
def test_the_lobby_stream_works_with_the_store_on_a_cluster(
    real_cluster: LocalCluster,
    redis_server: EmbeddedRedis,
    real_redis: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with api_on_cluster(real_cluster, redis_server, monkeypatch) as client:
        api = Api(client, real_redis)
        with listening(client) as lobby:
            lobby.next(whole, "the whole lobby")
            game_ids = [api.create("skull", 3) for _ in range(4)]  # on several primaries
            api.project()
            for game_id in game_ids:
                lobby.next(table(game_id, seats_taken=0), "each new table")
            api.join(game_ids[-1], "Ada")
            api.project()
            lobby.next(table(game_ids[-1], seats_taken=1), "a seat taken")
        assert real_cluster.client().keys("ts:lobby*") == []  # the lobby stays beside the queue
