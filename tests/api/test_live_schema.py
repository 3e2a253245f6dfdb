"""The live streams answer as ``/openapi.json`` documents them: every event of ``/games/{id}/live``
(a seat's, a spectator's, with and without chat), ``/lobby/live`` and ``/me/live`` over a played game,
read by schemathesis's own response validation (each event against the route's event schema) and
each event's JSON data against the ``contentSchema`` of its event name.

Before the events were documented the streams' schema was ``{"type": "string"}``, and a conformance
tool reading the events found every one of them a mismatch."""

from __future__ import annotations

import datetime
import functools
import json
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import jsonschema_rs
import pytest
import schemathesis
from starlette.testclient import TestClient

from bots import choose
from services.api.openapi import openapi_document
from tests.api.conftest import Api
from tests.api.test_chat import RAIL, chat_app, say
from tests.api.test_your_tables import bearer, register, seated_with
from tests.support.waiting import wait_until


@functools.cache
def documented() -> tuple[dict[str, Any], Any]:
    """The OpenAPI document and schemathesis's schema of it, built once by the first test that reads
    them (not while pytest collects, in every worker)."""
    document = openapi_document()
    return document, schemathesis.openapi.from_dict(document)


SEEDS = [3, 17]
DEADLINE = 20.0


@pytest.fixture
def live_api() -> Iterator[Api]:
    """The chat tests' app (chat streams end with the game); a quiet stream sends its keep-alive
    comment at every poll (a comment is no event, and the documents must say so)."""
    with chat_app(
        chat_rate="100000/second",
        chat_speaker_rate="100000/second",
        live_poll_seconds=0.05,
        live_heartbeat_seconds=0.0,
    ) as api:
        yield api


class Capture:
    """The raw bytes of a stream that does not end by itself, read in a thread until the server
    shuts down; ``response()`` is the whole answer as a client received it."""

    def __init__(self, client: TestClient, path: str, headers: dict[str, str] | None = None) -> None:
        self.chunks: list[bytes] = []
        self.status = 0
        self.headers: httpx.Headers = httpx.Headers()
        self.request: httpx.Request | None = None
        self.ended = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(client, path, headers or {}), daemon=True)
        self._thread.start()

    def _read(self, client: TestClient, path: str, headers: dict[str, str]) -> None:
        try:
            with client.stream("GET", path, headers=headers) as response:
                self.status, self.headers, self.request = (
                    response.status_code,
                    response.headers,
                    response.request,
                )
                for chunk in response.iter_raw():
                    self.chunks.append(chunk)
        finally:
            self.ended.set()

    def names(self) -> list[str]:
        """The names of the whole events received so far (a chunk may end inside one)."""
        raw = b"".join(self.chunks)
        return [name for name, _ in events(raw[: raw.rfind(b"\n\n") + 2])]

    def response(self) -> httpx.Response:
        assert self.ended.wait(30), "the stream did not end when the server shut down"
        return received(self.status, self.headers, b"".join(self.chunks), self.request)


def received(
    status: int, headers: httpx.Headers | dict[str, str], content: bytes, request: httpx.Request | None
) -> httpx.Response:
    """An answer as a client read it (with the time it took, which schemathesis reads)."""
    response = httpx.Response(status, headers=headers, content=content, request=request)
    response.elapsed = datetime.timedelta(0)
    return response


def events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event name, decoded data) of each event of a stream, as an EventSource dispatches them."""
    out = []
    for block in raw.decode().split("\n\n"):
        fields = [line.partition(": ") for line in block.split("\n") if line and not line.startswith(":")]
        data = [value for name, _, value in fields if name == "data"]
        if data:
            name = next((value for key, _, value in fields if key == "event"), "message")
            out.append((name, json.loads("\n".join(data))))
    return out


def conforms(path: str, response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """Asserts ``response`` is as the document says (schemathesis) and each event's data matches the
    content schema of its name; returns the events."""
    assert response.status_code == 200, response.text
    document, schema = documented()
    schema[path]["GET"].validate_response(response)
    items = document["paths"][path]["get"]["responses"]["200"]["content"]["text/event-stream"]["schema"]
    by_name = {
        item["properties"]["event"]["const"]: item["properties"]["data"]["contentSchema"]
        for item in items.get("oneOf", [items])
    }
    received = events(response.content)
    assert received, f"{path} sent no event"
    for name, data in received:
        assert name in by_name, f"{path} sent an undocumented event {name!r}"
        content = {**by_name[name], "components": document["components"]}
        errors = [error.message for error in jsonschema_rs.Draft202012Validator(content).iter_errors(data)]
        assert not errors, f"{path}: event {name!r} breaks its documented data: {errors}: {data}"
    return received


def play_out(api: Api, game_id: str, seed: int) -> None:
    """Bots play every seat to the end, the projections kept up after each move (the lobby announces
    a table's changes from its projection, and every view read is the head's)."""
    rng = random.Random(seed)
    while (view := api.view(game_id))["status"] == "playing":
        own = api.view(game_id, view["to_act"][0])
        sent = api.send(game_id, own["seat"], choose(own["game"], own, rng), expected_version=own["version"])
        assert sent.status_code == 200, sent.text
        api.project()


@contextmanager
def shutting_down(api: Api) -> Iterator[None]:
    try:
        yield
    finally:
        api.client.app.state.begin_shutdown()  # type: ignore[attr-defined]  # ends every stream at once


@pytest.mark.parametrize("seed", SEEDS)
def test_every_event_of_the_game_lobby_and_your_tables_streams_is_as_the_openapi_document_says(
    live_api: Api, seed: int
) -> None:
    api = live_api
    ada = register(api, "Ada")
    with shutting_down(api):
        lobby = Capture(api.client, "/lobby/live")
        wait_until(lambda: "lobby" in lobby.names(), DEADLINE, "the whole lobby")
        game_id, seat = seated_with(api, ada, "skull")  # a table the lobby lists (not a practice one)
        api.project()
        wait_until(lambda: "table" in lobby.names(), DEADLINE, "the new table in the lobby")
        yours = Capture(api.client, "/me/live", bearer(ada))
        wait_until(lambda: "tables" in yours.names(), DEADLINE, "the account's tables")
        say(api, game_id, seat, text="good luck, all")
        say(api, game_id, headers=RAIL, text="watching from the rail")
        say(api, game_id, 1, reaction="gg")
        play_out(api, game_id, seed)
        wait_until(lambda: lobby.names().count("table") >= 2, DEADLINE, "the finished table in the lobby")

        # A finished game's streams end by themselves: each read whole, from the first version on.
        path = f"/games/{game_id}/live"
        streams = {
            "the seat's, with chat": api.client.get(
                path, headers=bearer(api.tokens[game_id][seat]), params={"chat": 1, "last_event_id": "0.0"}
            ),
            "a spectator's, with chat": api.client.get(
                path, headers=RAIL, params={"chat": 1, "last_event_id": 0}
            ),
            "a spectator's": api.client.get(path, params={"last_event_id": 0}),
            "the last version's": api.client.get(path, headers=bearer(api.tokens[game_id][2])),
        }
        head = api.head(game_id)
        for which, response in streams.items():
            received = conforms("/games/{game_id}/live", response)
            views = [data["version"] for name, data in received if name == "view"]
            assert views == (list(range(1, head + 1)) if "last" not in which else [head]), which
        chats = [data for name, data in events(streams["a spectator's, with chat"].content) if name == "chat"]
        assert [c.get("text") or c.get("reaction") for c in chats] == [
            "good luck, all",
            "watching from the rail",
            "gg",
        ]
    assert {name for name, _ in conforms("/lobby/live", lobby.response())} == {"lobby", "table"}
    assert {name for name, _ in conforms("/me/live", yours.response())} == {"tables"}


def test_an_undocumented_event_shape_is_caught_by_the_checks(live_api: Api) -> None:
    """The conformance check is not vacuous: a view event missing its version, or an event of a name
    the document does not list, is a violation of the documented stream."""
    game_id = live_api.started("skull", 3)
    response = live_api.client.get(f"/games/{game_id}/view")
    view = response.json()
    del view["version"]
    for body in (
        b"id: 1\nevent: view\ndata: %s\n\n" % json.dumps(view).encode(),
        b'id: 1\nevent: gossip\ndata: {"who": "seat 0"}\n\n',
    ):
        forged = received(200, {"content-type": "text/event-stream; charset=utf-8"}, body, response.request)
        with pytest.raises(AssertionError, match="SSE event violates schema"):
            documented()[1]["/games/{game_id}/live"]["GET"].validate_response(forged)
