"""Live updates from a real server (uvicorn, the embedded Redis, a worker process): a waiting
subscriber learns of each new version as it happens, and a reconnect resumes without gaps."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest

from services.cli.demo import local_stack

pytestmark = pytest.mark.redis
DEADLINE = 20.0


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with local_stack() as url:
        yield url


def started(client: httpx.Client) -> tuple[str, list[str]]:
    game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
    tokens = [client.post(f"/games/{game_id}/players", json={"name": n}).json()["token"] for n in "ABC"]
    return game_id, tokens


def listen(base: str, game_id: str, headers: dict[str, str], out: queue.Queue[Any]) -> threading.Thread:
    """Read the SSE stream in a thread, putting each (id, view) on ``out``."""

    def run() -> None:
        try:
            with (
                httpx.Client(base_url=base, timeout=DEADLINE) as client,
                client.stream("GET", f"/games/{game_id}/live", headers=headers) as response,
            ):
                event_id = None
                for line in response.iter_lines():
                    if line.startswith("id: "):
                        event_id = int(line[4:])
                    elif line.startswith("data: "):
                        out.put((event_id, msgspec.json.decode(line[6:])))
        except httpx.HTTPError:
            return  # the stack shuts down with this stream open (a running game's never ends)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_subscriber_receives_every_new_version_with_its_own_view(base: str) -> None:
    with httpx.Client(base_url=base) as client:
        game_id, tokens = started(client)
        head = client.get(f"/games/{game_id}/events").json()["version"]
        messages: queue.Queue[Any] = queue.Queue()
        listen(base, game_id, {"Authorization": f"Bearer {tokens[0]}"}, messages)
        first_id, first_view = messages.get(timeout=DEADLINE)
        assert first_id == head and first_view["seat"] == 0
        auth = {"Authorization": f"Bearer {tokens[1]}"}
        body = {"command_id": "c1", "command": {"type": "place_disc", "disc": "skull"}}
        version = client.post(f"/games/{game_id}/commands", json=body, headers=auth).json()["version"]
        ids = []
        while not ids or ids[-1] < version:
            event_id, view = messages.get(timeout=DEADLINE)
            ids.append(event_id)
            assert view["seat"] == 0 and view["version"] == event_id
        assert ids == list(range(head + 1, version + 1))


def test_a_reconnect_with_last_event_id_resumes_exactly_after_it(base: str) -> None:
    with httpx.Client(base_url=base) as client:
        game_id, tokens = started(client)
        for seat in (0, 1):
            body = {"command_id": f"c{seat}", "command": {"type": "place_disc", "disc": "flower"}}
            client.post(
                f"/games/{game_id}/commands", json=body, headers={"Authorization": f"Bearer {tokens[seat]}"}
            )
        head = client.get(f"/games/{game_id}/events").json()["version"]
        messages: queue.Queue[Any] = queue.Queue()
        listen(base, game_id, {"Last-Event-ID": str(head - 2)}, messages)
        received = [messages.get(timeout=DEADLINE)[0] for _ in range(2)]
        assert received == [head - 1, head]
        assert messages.empty()


def test_a_seat_that_leaves_has_its_stream_ended_before_anyone_else_holds_the_seat(base: str) -> None:
    with httpx.Client(base_url=base) as client:
        game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        leaver = client.post(f"/games/{game_id}/players", json={"name": "Ada"}).json()
        messages: queue.Queue[Any] = queue.Queue()
        stream = listen(base, game_id, {"Authorization": f"Bearer {leaver['token']}"}, messages)
        first_id, _ = messages.get(timeout=DEADLINE)
        auth = {"Authorization": f"Bearer {leaver['token']}"}
        assert client.post(f"/games/{game_id}/leave", json={}, headers=auth).json() == {"seat": 0}
        left_at = client.get(f"/games/{game_id}/events").json()["version"]
        newcomers = [client.post(f"/games/{game_id}/players", json={"name": n}).json() for n in "BCD"]
        assert newcomers[0]["seat"] == leaver["seat"]  # the freed seat is someone else's now
        stream.join(timeout=DEADLINE)
        assert not stream.is_alive()  # the server ended it
        received = [first_id]
        while not messages.empty():
            received.append(messages.get_nowait()[0])
        assert max(received) < left_at  # nothing from the version it left at on: not the newcomer's hand


def test_a_seat_resuming_from_before_its_join_gets_the_history_then_the_live_versions(base: str) -> None:
    with httpx.Client(base_url=base) as client:
        game_id, tokens = started(client)
        head = client.get(f"/games/{game_id}/events").json()["version"]
        messages: queue.Queue[Any] = queue.Queue()
        listen(base, game_id, {"Authorization": f"Bearer {tokens[2]}", "Last-Event-ID": "0"}, messages)
        history = [messages.get(timeout=DEADLINE) for _ in range(head)]
        assert [event_id for event_id, _ in history] == list(range(1, head + 1))
        assert history[0][1]["seat"] is None and history[-1][1]["seat"] == 2  # a spectator until it sat down
        body = {"command_id": "c1", "command": {"type": "place_disc", "disc": "skull"}}
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        version = client.post(f"/games/{game_id}/commands", json=body, headers=auth).json()["version"]
        live = []
        while not live or live[-1][0] < version:
            live.append(messages.get(timeout=DEADLINE))
        assert [event_id for event_id, _ in live] == list(range(head + 1, version + 1))
        assert all(view["seat"] == 2 for _, view in live)
