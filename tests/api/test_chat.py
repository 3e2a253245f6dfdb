"""Table chat (services.people.chat, services.api.chat_routes): channels, limits with their documented
codes, the host's switch, reports, live delivery beside the game, and the export's chat section.
The game's own stream never holds a chat record."""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import fakeredis
import pytest
from starlette.testclient import TestClient

from bots import choose
from services.api.app import create_app
from services.api.live_chat import LiveChat
from services.cli.verify import main as verify_main
from services.history.chat_export import chat_problems
from services.history.verify import verify_export
from services.operating.config import Settings
from services.store.chat import REPORTS
from services.store.keys import game_keys
from tests.api.conftest import ADMIN_TOKEN, UNLIMITED, Api, bearer_only, practice

RAIL = {"Cookie": "ts_rail=" + "ab" * 16}
OTHER_RAIL = {"Cookie": "ts_rail=" + "cd" * 16}


@contextmanager
def chat_app(**settings: Any) -> Iterator[Api]:
    """The app on fakeredis with the chat settings of the test (and no other rate limit)."""
    server = fakeredis.FakeServer()
    app = create_app(
        Settings(admin_token=ADMIN_TOKEN, **{**UNLIMITED, "chat_after_end_seconds": 0.0, **settings}),
        lambda: (fakeredis.FakeAsyncRedis(server=server), fakeredis.FakeRedis(server=server)),
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Api(bearer_only(client), fakeredis.FakeRedis(server=server))


@pytest.fixture
def chat() -> Iterator[Api]:
    with chat_app(chat_rate="100000/second", chat_speaker_rate="100000/second") as api:
        yield api


def say(
    api: Api, game_id: str, seat: int | None = None, headers: dict[str, str] | None = None, **body: Any
) -> Any:
    sent = dict(headers or {})
    if seat is not None:
        sent.update(api.auth(game_id, seat))
    return api.client.post(f"/games/{game_id}/chat", json=body, headers=sent)


def read(api: Api, game_id: str, seat: int | None = None, **params: Any) -> dict[str, Any]:
    headers = api.auth(game_id, seat) if seat is not None else {}
    response = api.client.get(f"/games/{game_id}/chat", headers=headers, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def host(api: Api, game_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.hosts[game_id]}"}


def finish(api: Api, game_id: str, seed: int = 0) -> None:
    api.play_until(game_id, lambda view: view["status"] == "finished", seed=seed)


def error(response: Any) -> str:
    code: str = response.json()["error"]["code"]
    return code


def test_a_seat_speaks_in_the_table_channel_under_its_name_and_a_spectator_on_the_rail(chat: Api) -> None:
    game_id = chat.started()
    seat = say(chat, game_id, 1, text="  I have a flower, honest  ")
    rail = say(chat, game_id, headers=RAIL, reaction="gl")

    assert seat.status_code == 201, seat.text
    assert seat.json()["message"] | {"at": 0} == {
        "n": 1, "kind": "message", "channel": "table", "from": "seat:1", "name": "P1", "seat": 1,
        "text": "I have a flower, honest", "version": chat.head(game_id), "at": 0, "numbering": "table",
    }  # fmt: skip
    assert rail.status_code == 201, rail.text
    assert rail.json()["message"]["channel"] == "rail"
    assert rail.json()["message"]["reaction"] == "gl"
    assert rail.json()["message"]["from"].startswith("rail:")
    assert "ab" * 16 not in rail.text  # the browser's id is never shown, only a digest of it


def test_a_spectator_without_a_rail_cookie_gets_one_and_keeps_its_tag(chat: Api) -> None:
    game_id = chat.started()
    client = chat.client
    client.event_hooks["response"].clear()  # keep cookies: this is a browser
    client.cookies.clear()
    first = client.post(f"/games/{game_id}/chat", json={"text": "hi"})
    cookie = first.cookies.get("ts_rail")
    second = client.post(f"/games/{game_id}/chat", json={"text": "again"})

    assert cookie is not None and len(cookie) == 32
    assert "HttpOnly" in first.headers["set-cookie"]
    assert "ts_rail" not in second.headers.get("set-cookie", "")
    assert first.json()["message"]["from"] == second.json()["message"]["from"]


def test_seats_never_read_rail_messages_while_the_game_runs_and_everyone_reads_all_after_the_end(
    chat: Api,
) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 3))
    say(chat, game_id, 0, text="good luck all")
    say(chat, game_id, headers=RAIL, text="seat 2 is bluffing!")
    answer = say(chat, game_id, 2, reaction="gl").json()["message"]

    seen = read(chat, game_id, 1)
    # numbered by what the seat sees: nothing in the numbers counts the rail message between
    assert [(m["n"], m.get("reaction")) for m in seen["messages"]] == [(1, None), (2, "gl")]
    assert seen["next"] == 2 and answer["n"] == 2 and answer["numbering"] == "table"
    assert read(chat, game_id, 1, after=1)["messages"][0]["reaction"] == "gl"
    assert [m["n"] for m in read(chat, game_id)["messages"]] == [1, 2, 3]  # a spectator's: by record
    assert seen["merged"] is False

    finish(chat, game_id)
    assert [m["n"] for m in read(chat, game_id, 1)["messages"]] == [1, 2, 3]
    assert read(chat, game_id, 1)["merged"] is True


def test_reading_the_chat_is_paged_by_record_number(chat: Api) -> None:
    game_id = chat.started()
    for i in range(5):
        say(chat, game_id, i % 3, text=f"line {i}")

    first = read(chat, game_id, limit=2)
    rest = read(chat, game_id, after=first["next"], limit=10)

    assert [m["text"] for m in first["messages"]] == ["line 0", "line 1"]
    assert first["more"] is True
    assert [m["text"] for m in rest["messages"]] == ["line 2", "line 3", "line 4"]
    assert rest["more"] is False


def test_a_message_past_the_length_limit_answers_413_chat_message_too_long_and_stores_nothing(
    chat: Api,
) -> None:
    game_id = chat.started()
    refused = say(chat, game_id, 0, text="x" * 281)
    kept = say(chat, game_id, 0, text="x" * 280)

    assert refused.status_code == 413
    assert error(refused) == "chat_message_too_long"
    assert kept.status_code == 201
    assert [len(m["text"]) for m in read(chat, game_id)["messages"]] == [280]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"text": "   "}, "chat_message_empty"),
        ({"text": "bell\u0007"}, "chat_control_characters"),
        ({"text": "two\nlines"}, "chat_control_characters"),
        ({"text": "evil \u202eeman"}, "chat_control_characters"),
        ({"text": "both", "reaction": "gg"}, "invalid_request"),
        ({}, "invalid_request"),
        ({"reaction": "rude"}, "invalid_request"),
        ({"text": "hi", "channel": "table"}, "invalid_request"),
    ],
)
def test_a_malformed_message_answers_422_with_its_code(chat: Api, body: dict[str, Any], code: str) -> None:
    game_id = chat.started()
    refused = say(chat, game_id, 0, **body)

    assert refused.status_code == 422, refused.text
    assert error(refused) == code
    assert read(chat, game_id)["messages"] == []


def test_the_per_speaker_rate_limit_answers_429_chat_rate_limited_with_retry_after() -> None:
    with chat_app(chat_rate="100/minute", chat_speaker_rate="3/minute") as api:
        game_id = api.started()
        answers = [say(api, game_id, 0, text=f"spam {i}").status_code for i in range(4)]
        limited = say(api, game_id, 0, text="more")
        other_seat = say(api, game_id, 1, text="my turn to talk")

    assert answers == [201, 201, 201, 429]
    assert error(limited) == "chat_rate_limited"
    assert 1 <= int(limited.headers["Retry-After"]) <= 60
    assert other_seat.status_code == 201


def test_the_per_client_rate_limit_answers_429_chat_rate_limited_across_seats() -> None:
    with chat_app(chat_rate="4/minute", chat_speaker_rate="100/minute") as api:
        game_id = api.started()
        answers = [say(api, game_id, i % 3, text=f"hello {i}").status_code for i in range(5)]
        limited = say(api, game_id, headers=RAIL, text="from the rail")

    assert answers == [201, 201, 201, 201, 429]
    assert error(limited) == "chat_rate_limited"
    assert "Retry-After" in limited.headers


def test_a_full_chat_answers_409_chat_full_and_the_host_switch_still_works() -> None:
    with chat_app(chat_rate="1000/minute", chat_speaker_rate="1000/minute", chat_max_messages=3) as api:
        game_id = api.started()
        answers = [say(api, game_id, 0, reaction="gg").status_code for _ in range(3)]
        full = say(api, game_id, 1, text="one more")
        switched = api.client.post(
            f"/games/{game_id}/chat/settings", json={"enabled": False}, headers=host(api, game_id)
        )

    assert answers == [201, 201, 201]
    assert full.status_code == 409
    assert error(full) == "chat_full"
    assert switched.status_code == 200


def test_the_host_turns_chat_off_403_chat_off_and_on_again(chat: Api) -> None:
    game_id = chat.started()
    by_seat = chat.client.post(
        f"/games/{game_id}/chat/settings", json={"enabled": False}, headers=chat.auth(game_id, 0)
    )
    off = chat.client.post(
        f"/games/{game_id}/chat/settings", json={"enabled": False}, headers=host(chat, game_id)
    )
    refused = say(chat, game_id, 0, text="hello?")
    state = read(chat, game_id)
    on = chat.client.post(
        f"/games/{game_id}/chat/settings", json={"enabled": True}, headers=host(chat, game_id)
    )
    allowed = say(chat, game_id, 0, text="hello!")

    assert by_seat.status_code == 403 and error(by_seat) == "not_the_host"
    assert off.json() == {"enabled": False, "n": 1}
    assert refused.status_code == 403 and error(refused) == "chat_off"
    assert state["enabled"] is False
    assert state["messages"] == [state["messages"][0]]
    assert state["messages"][0]["kind"] == "settings"
    assert on.json() == {"enabled": True, "n": 2}
    assert allowed.status_code == 201


def test_a_report_is_recorded_for_operators_with_the_message_ids(chat: Api) -> None:
    game_id = chat.started()
    say(chat, game_id, 0, text="you are all idiots")
    say(chat, game_id, headers=RAIL, text="rail talk")
    reported = chat.client.post(
        f"/games/{game_id}/chat/report",
        json={"messages": [1], "reason": "abuse"},
        headers=chat.auth(game_id, 1),
    )
    hidden = chat.client.post(
        f"/games/{game_id}/chat/report",
        json={"messages": [2], "reason": "spam"},
        headers=chat.auth(game_id, 1),
    )

    assert reported.status_code == 201, reported.text
    assert hidden.status_code == 404 and error(hidden) == "chat_message_not_found"
    entries: Any = chat.sync.xrange(REPORTS)
    assert len(entries) == 1
    fields = {k.decode(): v.decode() for k, v in entries[0][1].items()}
    assert fields["game_id"] == game_id
    assert fields["messages"] == "1"
    assert fields["reason"] == "abuse"
    assert fields["reporter"] == "seat:1"
    assert fields["senders"] == "seat:0"


def test_a_tables_chat_takes_its_cap_of_reports_then_answers_409_chat_reports_full_and_records_nothing() -> (
    None
):
    with chat_app(chat_max_reports=3) as api:
        game_id, other = api.started(), api.started()
        say(api, game_id, 0, text="you are all idiots")
        say(api, other, 0, text="so are you")

        def report(table: str) -> Any:
            body = {"messages": [1], "reason": "abuse"}
            return api.client.post(f"/games/{table}/chat/report", json=body, headers=api.auth(table, 1))

        assert [report(game_id).status_code for _ in range(3)] == [201, 201, 201]
        refused = report(game_id)
        assert refused.status_code == 409 and error(refused) == "chat_reports_full"
        assert "3 times" in refused.json()["error"]["message"]
        assert report(other).status_code == 201  # another table's chat has a cap of its own
        assert api.sync.xlen(REPORTS) == 4


@pytest.mark.thorough
def test_chat_never_appears_in_the_game_stream_nor_its_events(chat: Api) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 7))
    events_key = game_keys(game_id).events
    before = chat.sync.xrange(events_key)
    events_before = chat.client.get(f"/games/{game_id}/events", params={"limit": 1000}).json()
    say(chat, game_id, 0, text="CHAT-MARKER table")
    say(chat, game_id, headers=RAIL, text="CHAT-MARKER rail")
    say(chat, game_id, 1, reaction="oops")

    assert chat.sync.xrange(events_key) == before  # the same entries, bytes and hashes
    assert chat.client.get(f"/games/{game_id}/events", params={"limit": 1000}).json() == events_before
    finish(chat, game_id)
    stored: Any = chat.sync.xrange(events_key)
    stream = b"".join(data for _, entry in stored for data in entry.values())
    assert b"CHAT-MARKER" not in stream
    assert b"oops" not in stream
    events = chat.client.get(f"/games/{game_id}/events", params={"limit": 1000}).text
    assert "CHAT-MARKER" not in events
    export = chat.client.get(f"/games/{game_id}/export").text
    assert "CHAT-MARKER" not in export


def parse_chat_sse(lines: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for line in lines:
        if not line:
            if current:
                messages.append(current)
            current = {}
        elif line.startswith("id: "):
            current["id"] = line[4:]
        elif line.startswith("event: "):
            current["event"] = line[7:]
        elif line.startswith("data: "):
            current["data"] = json.loads(line[6:])
    return messages


def live(api: Api, game_id: str, headers: dict[str, str], **params: Any) -> list[dict[str, Any]]:
    with api.client.stream("GET", f"/games/{game_id}/live", headers=headers, params=params) as response:
        assert response.status_code == 200, response.read()
        return parse_chat_sse(response.iter_lines())


def test_a_seats_live_stream_carries_table_chat_but_no_rail_message_while_the_game_runs(chat: Api) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 9))
    say(chat, game_id, headers=RAIL, text="psst, seat 0 has a skull")
    say(chat, game_id, 0, text="hello table")
    seen: list[dict[str, Any]] = []
    headers = chat.auth(game_id, 1)
    with chat.client.stream("GET", f"/games/{game_id}/live", headers=headers, params={"chat": 1}) as response:
        current: dict[str, Any] = {}
        for line in response.iter_lines():  # the stream stays open: read until the first chat record
            if line.startswith("event: "):
                current["event"] = line[7:]
            elif line.startswith("id: "):
                current["id"] = line[4:]
            elif line.startswith("data: "):
                current["data"] = json.loads(line[6:])
            elif not line and current:
                seen.append(current)
                current = {}
                if seen[-1]["event"] == "chat":
                    break

    head = chat.head(game_id)
    assert [m["event"] for m in seen] == ["view", "chat"]
    assert seen[0]["id"] == f"{head}.0"
    assert seen[1]["data"]["text"] == "hello table"  # record 2: record 1 (rail) was never sent
    assert seen[1]["data"]["n"] == 1 and seen[1]["id"] == f"{head}.1"  # numbered by what the seat sees


@pytest.mark.thorough
def test_a_chat_stream_resumes_both_positions_and_a_seat_gets_the_rail_once_the_game_ended(chat: Api) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 11))
    say(chat, game_id, 0, text="one")
    say(chat, game_id, headers=RAIL, text="two, from the rail")
    finish(chat, game_id)
    say(chat, game_id, 1, reaction="gg")
    head = chat.head(game_id)

    seat = live(chat, game_id, chat.auth(game_id, 1), chat=1, last_event_id=f"{head - 1}.1")
    plain = live(chat, game_id, chat.auth(game_id, 1), last_event_id=str(head - 1))

    assert [(m["event"], m["id"]) for m in seat] == [
        ("view", f"{head}.1"),
        ("chat", f"{head}.2"),
        ("chat", f"{head}.3"),
    ]
    assert [m["data"].get("text") or m["data"].get("reaction") for m in seat[1:]] == [
        "two, from the rail",
        "gg",
    ]
    assert [(m["event"], m["id"]) for m in plain] == [("view", str(head))]  # no chat without chat=1


def first_chat_record(api: Api, game_id: str, headers: dict[str, str]) -> dict[str, Any] | None:
    """The first chat record a live stream opened with ``headers`` sends; ``None`` when the stream is
    refused (401: the live stream takes no account token as its bearer)."""
    with api.client.stream("GET", f"/games/{game_id}/live", headers=headers, params={"chat": 1}) as response:
        if response.status_code == 401:
            return None
        assert response.status_code == 200, response.read()
        current: dict[str, Any] = {}
        for line in response.iter_lines():  # the stream stays open: read until the first chat record
            if line.startswith("event: "):
                current["event"] = line[7:]
            elif line.startswith("data: "):
                current["data"] = json.loads(line[6:])
            elif not line and current:
                if current.get("event") == "chat":
                    record: dict[str, Any] = current["data"]
                    return record
                current = {}
    raise AssertionError("the stream ended before a chat record")


def test_the_rail_is_hidden_from_every_credential_of_a_person_at_the_table_while_the_game_runs(
    chat: Api,
) -> None:
    ada = chat.client.post("/accounts", json={"name": "Ada Rail"}).json()["token"]
    other = chat.client.post("/accounts", json={"name": "Bo Watcher"}).json()["token"]
    game_id = chat.create("skull", 3)
    joined = chat.client.post(
        f"/games/{game_id}/players", json={}, headers={"Authorization": f"Bearer {ada}"}
    )
    assert joined.status_code == 201, joined.text
    chat.tokens[game_id].append(joined.json()["token"])
    chat.join(game_id, "P1", "seed-1")
    chat.join(game_id, "P2", "seed-2")
    assert say(chat, game_id, headers=RAIL, text="psst, Ada has a skull").status_code == 201
    assert say(chat, game_id, 1, text="good luck").status_code == 201
    seat_token, host_token = chat.tokens[game_id][0], chat.hosts[game_id]
    at_the_table = {
        "the seat's token": {"Authorization": f"Bearer {seat_token}"},
        "the seat's cookie": {"Cookie": f"ts_seat_{game_id}={seat_token}"},
        "the host's token": {"Authorization": f"Bearer {host_token}"},
        "the host's cookie": {"Cookie": f"ts_host_{game_id}={host_token}"},
        "the seated account's token": {"Authorization": f"Bearer {ada}"},
        "the seated account's login cookie": {"Cookie": f"ts_account={ada}"},
    }
    for credential, headers in at_the_table.items():
        response = chat.client.get(f"/games/{game_id}/chat", headers=headers)
        assert response.status_code == 200, (credential, response.text)
        assert [m["channel"] for m in response.json()["messages"]] == ["table"], credential
        record = first_chat_record(chat, game_id, headers)
        assert record is None or record["channel"] == "table", credential
        report = chat.client.post(
            f"/games/{game_id}/chat/report", json={"messages": [2], "reason": "spam"}, headers=headers
        )  # the seat sees one message (numbered 1): there is no 2 to name, the rail's included
        assert (report.status_code, error(report)) == (404, "chat_message_not_found"), credential
        assert "2" in report.json()["error"]["message"], credential
    for credential in ("the host's token", "the seated account's token"):  # speakers on the rail
        refused = say(chat, game_id, headers=at_the_table[credential], text="psst")
        assert (refused.status_code, error(refused)) == (403, "rail_closed_at_table"), credential
    for spectator in ({}, {"Cookie": f"ts_account={other}"}, RAIL):
        response = chat.client.get(f"/games/{game_id}/chat", headers=spectator)
        assert [m["channel"] for m in response.json()["messages"]] == ["rail", "table"], spectator
        assert (first_chat_record(chat, game_id, spectator) or {}).get("channel") == "rail", spectator

    reported = chat.client.post(
        f"/games/{game_id}/chat/report",
        json={"messages": [1], "reason": "spam"},
        headers=chat.auth(game_id, 2),
    )
    assert reported.status_code == 201, reported.text
    fields = {k.decode(): v.decode() for k, v in chat.sync.xrange(REPORTS)[-1][1].items()}  # type: ignore[index]
    assert (fields["messages"], fields["senders"]) == ("2", "seat:1")  # for operators: by record number
    switched = chat.client.post(
        f"/games/{game_id}/chat/settings", json={"enabled": False}, headers=at_the_table["the host's token"]
    )
    assert switched.json() == {"enabled": False, "n": 2}  # the host's numbering: the rail's not counted

    finish(chat, game_id)
    for credential, headers in at_the_table.items():
        response = chat.client.get(f"/games/{game_id}/chat", headers=headers)
        assert [m.get("channel") for m in response.json()["messages"]] == ["rail", "table", None], credential


def test_a_chat_stream_refuses_a_malformed_resume_position(chat: Api) -> None:
    game_id = chat.started()
    response = chat.client.get(f"/games/{game_id}/live", params={"chat": 1, "last_event_id": "3.x"})
    assert response.status_code == 422
    assert error(response) == "invalid_last_event_id"


@pytest.mark.thorough
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_seats_never_receive_a_rail_message_before_the_end_over_random_games(chat: Api, seed: int) -> None:
    """A random game (seeded: replay with the seed) with chat from seats and from two spectators at
    random moments: every seat's live chat (the stream's own reader) and every read of the chat hold
    no rail record while the game runs, and after the end each seat has received every record."""
    rng = random.Random(seed)
    game_id = chat.started("skull", 3, **practice("skull", seed))
    context = chat.client.app.state.context  # type: ignore[attr-defined]
    portal = chat.client.portal
    assert portal is not None  # the client is open (a context manager)
    readers = {seat: LiveChat(context.store, game_id, 0, True) for seat in range(3)}  # each a seat's
    received: dict[int, set[int]] = {seat: set() for seat in range(3)}
    during: dict[int, list[int]] = {seat: [] for seat in range(3)}  # the numbers read while it runs
    rail_sent: set[int] = set()
    while True:
        cursor = portal.call(context.queries.load, game_id)
        running = cursor.state.status != "finished"
        for seat, reader in readers.items():
            for message in portal.call(reader.events, cursor):
                record = json.loads(message.split(b"data: ", 1)[1])
                if running:
                    assert record["channel"] != "rail", (seed, seat, record)
                    during[seat].append(record["n"])
                received[seat].add(record["n"])
            if running:
                assert all(m["channel"] != "rail" for m in read(chat, game_id, seat)["messages"])
        if not running:
            break
        roll = rng.random()
        if roll < 0.2:
            assert (
                say(chat, game_id, rng.randrange(3), text=f"seat talk {rng.random():.3f}").status_code == 201
            )
        elif roll < 0.35:
            sent = say(chat, game_id, headers=rng.choice([RAIL, OTHER_RAIL]), text="rail tip")
            assert sent.status_code == 201
            rail_sent.add(sent.json()["message"]["n"])
        else:
            view = chat.view(game_id)
            for seat in view["to_act"]:
                own = chat.view(game_id, seat)
                chat.send(game_id, seat, choose(own["game"], own, rng), expected_version=own["version"])
    everything = {m["n"] for m in read(chat, game_id)["messages"]}
    assert rail_sent <= everything
    for seat in range(3):
        assert received[seat] == everything, seed
        # numbered 1, 2, ... by what the seat saw: no gap in its numbers counts a rail message
        assert during[seat] == list(range(1, len(during[seat]) + 1)), (seed, seat)


def test_the_exports_chat_section_verifies_and_a_changed_message_is_caught_and_named(chat: Api) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 5))
    say(chat, game_id, 0, text="good luck")
    say(chat, game_id, headers=RAIL, reaction="wow")
    finish(chat, game_id)
    say(chat, game_id, 2, text="well played")

    without = chat.client.get(f"/games/{game_id}/export").json()
    document = chat.client.get(f"/games/{game_id}/export", params={"chat": 1}).json()
    report = verify_export(document)

    assert "chat" not in without
    assert {k: v for k, v in document.items() if k != "chat"} == without
    assert [json.loads(r["data"])["n"] for r in document["chat"]["records"]] == [1, 2, 3]
    assert report.ok, report.failures()
    assert "chat ok (3 chat records chained)" in report.render()

    altered = copy.deepcopy(document)
    record = json.loads(altered["chat"]["records"][0]["data"])
    record["text"] = "you all cheat"
    altered["chat"]["records"][0]["data"] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    failures = verify_export(altered).failures()
    assert len(failures) == 1
    assert "chat record 1 (from seat:0, at version" in failures[0]
    assert "was altered" in failures[0]

    removed = copy.deepcopy(document)
    del removed["chat"]["records"][1]
    assert any("chat record 2" in f for f in verify_export(removed).failures())


def test_the_chat_section_check_names_a_forged_head(chat: Api) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 6))
    say(chat, game_id, 0, text="hi")
    finish(chat, game_id)
    section = chat.client.get(f"/games/{game_id}/export", params={"chat": 1}).json()["chat"]
    section["head"]["n"] = 5

    good, problems = chat_problems(section)
    assert good == 1
    assert problems == ["the chat head 5 is not the chain's last record 1"]


def test_a_running_games_export_with_chat_is_refused_409_like_without(chat: Api) -> None:
    game_id = chat.started()
    say(chat, game_id, 0, text="hi")
    response = chat.client.get(f"/games/{game_id}/export", params={"chat": 1})
    assert response.status_code == 409
    assert error(response) == "game_not_finished"


def test_chat_at_an_unknown_game_is_404(chat: Api) -> None:
    missing = uuid.uuid4().hex[:16]
    assert error(chat.client.post(f"/games/{missing}/chat", json={"text": "hi"})) == "game_not_found"
    assert error(chat.client.get(f"/games/{missing}/chat")) == "game_not_found"


@pytest.mark.thorough
def test_tablestream_verify_passes_an_export_with_chat_and_fails_one_with_a_changed_message(
    chat: Api, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game_id = chat.started("skull", 3, **practice("skull", 8))
    say(chat, game_id, 1, text="I trust nobody")
    finish(chat, game_id)
    document = chat.client.get(f"/games/{game_id}/export", params={"chat": 1}).json()
    good = tmp_path / "good.json"
    good.write_text(json.dumps(document), encoding="utf-8")
    record = json.loads(document["chat"]["records"][0]["data"])
    record["text"] = "I trust everybody"
    document["chat"]["records"][0]["data"] = json.dumps(record, sort_keys=True, separators=(",", ":"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="utf-8")

    assert verify_main([str(good)]) == 0
    assert verify_main([str(bad)]) == 1
    out = capsys.readouterr().out
    assert "FAILED chat: chat record 1 (from seat:1, at version" in out
