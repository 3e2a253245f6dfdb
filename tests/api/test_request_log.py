"""The request log (``services.api.request_log``): one JSON line per request with the route template,
never the raw path, and no hidden state in any line of a whole game."""

from __future__ import annotations

import json
import logging
import random
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

from bots import choose
from services.api.request_log import address_class
from services.telemetry.structured_logging import configure_logging
from tests.api.conftest import Api, practice

FIELDS = {"event", "level", "timestamp", "method", "route", "status", "duration_ms", "client", "request_id"}
HIDDEN_KEYS = {
    "token",
    "host_token",
    "hand",
    "hands",
    "seed",
    "client_seed",
    "seeds",
    "body",
    "authorization",
    "cookie",
}


class CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of the write."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


@pytest.fixture
def json_logs(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """Log lines as the service writes them (JSON on stderr, level info); ``json_logs()`` reads the
    lines written since it was last called."""
    yield from captured_logs(capsys, logging.INFO)


@pytest.fixture
def debug_logs(capsys: pytest.CaptureFixture[str]) -> Iterator[Any]:
    """As ``json_logs``, at level debug."""
    yield from captured_logs(capsys, logging.DEBUG)


def captured_logs(capsys: pytest.CaptureFixture[str], level: int) -> Iterator[Any]:
    saved = structlog.get_config()
    configure_logging(json=True, level=level, cache=False)
    # the stderr of the test's call, not the one of this fixture's setup (pytest swaps them)
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(CurrentStderr()))  # type: ignore[arg-type]

    def read() -> list[dict[str, Any]]:
        err = capsys.readouterr().err
        return [{**json.loads(raw), "_raw": raw} for raw in err.splitlines() if raw.startswith("{")]

    try:
        yield read
    finally:
        structlog.configure(**saved)


def requests_of(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line["event"] == "request"]


def test_a_command_leaves_one_debug_request_line_with_its_route_template_status_and_outcome(
    fake_api: Api, debug_logs: Any
) -> None:
    json_logs = debug_logs
    game_id = fake_api.started("skull", 3)
    seat = fake_api.view(game_id)["to_act"][0]
    own = fake_api.view(game_id, seat)
    json_logs()
    request_id = f"cmd-{uuid.uuid4().hex[:8]}"
    body = {
        "command_id": "c-1",
        "command": choose("skull", own, random.Random(0)),
        "expected_version": own["version"],
    }
    headers = {**fake_api.auth(game_id, seat), "X-Request-ID": request_id}
    response = fake_api.client.post(f"/games/{game_id}/commands", json=body, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["x-request-id"] == request_id
    lines = [line for line in json_logs() if line.get("request_id") == request_id]
    assert [line["event"] for line in lines] == ["request"], "one line for the request, no other"
    (line,) = lines
    assert set(line) >= FIELDS
    assert line["level"] == "debug"  # a hot route's success: counted by the metrics, logged at debug
    assert line["method"] == "POST"
    assert line["route"] == "/games/{game_id}/commands"
    assert line["status"] == 200
    assert isinstance(line["duration_ms"], float | int) and line["duration_ms"] >= 0
    assert line["client"] == "unknown"  # the test client's "testclient" is no address
    assert line["game_id"] == game_id
    assert (line["command_id"], line["seat"], line["outcome"]) == ("c-1", seat, "ok")
    assert "trace_id" not in line and "span_id" not in line  # tracing is off
    assert game_id not in line["route"]


def send_a_mix(fake_api: Api) -> None:
    game_id = fake_api.started("skull", 3)
    fake_api.client.get(f"/games/{game_id}/view", headers=fake_api.auth(game_id, 0))  # the kept views' lane
    fake_api.client.get(f"/games/{game_id}/events", params={"limit": 1})
    fake_api.client.get("/no/such/path/secret-looking-segment")
    fake_api.client.post(f"/games/{game_id}/commands", json={"command_id": "x", "command": {}})  # no token
    fake_api.client.get(f"/games/{game_id}/view", headers=fake_api.auth(game_id, 0))
    fake_api.client.get("/healthz")  # a probe: not logged


MIX = [
    ("GET", "/games/{game_id}/view", 200),
    ("GET", "/games/{game_id}/events", 200),
    ("GET", "unmatched", 404),
    ("POST", "/games/{game_id}/commands", 401),
    ("GET", "/games/{game_id}/view", 200),
]


def test_at_debug_every_request_is_logged_once_by_template_kept_views_unmatched_paths_and_refusals_included(
    fake_api: Api, debug_logs: Any
) -> None:
    send_a_mix(fake_api)
    lines = [line for line in requests_of(debug_logs()) if line["route"] != "/games"]  # the setup's
    lines = lines[-len(MIX) :]
    assert [(line["method"], line["route"], line["status"]) for line in lines] == MIX
    assert len({line["request_id"] for line in lines}) == len(MIX)
    assert not any("secret-looking-segment" in line["_raw"] for line in lines)


def test_at_info_the_hot_routes_successes_are_left_to_the_counters_and_everything_else_is_logged(
    fake_api: Api, json_logs: Any
) -> None:
    send_a_mix(fake_api)
    lines = [
        line
        for line in requests_of(json_logs())
        if line["route"] not in ("/games", "/games/{game_id}/players")
    ]
    assert [(line["method"], line["route"], line["status"]) for line in lines] == [
        ("GET", "/games/{game_id}/events", 200),
        ("GET", "unmatched", 404),
        ("POST", "/games/{game_id}/commands", 401),
    ]
    assert all(line["level"] == "info" for line in lines)


def test_a_request_id_that_is_not_a_plain_id_is_replaced_and_the_answer_echoes_the_replacement(
    fake_api: Api, json_logs: Any
) -> None:
    json_logs()
    response = fake_api.client.get("/games", headers={"X-Request-ID": "Bearer abc def {secret}"})
    assert response.status_code == 200
    echoed = response.headers["x-request-id"]
    assert echoed != "Bearer abc def {secret}"
    (line,) = requests_of(json_logs())
    assert line["request_id"] == echoed
    assert "secret" not in line["_raw"]


def test_with_tracing_on_the_request_line_carries_the_trace_and_span_ids_of_its_server_span(
    fake_api: Api, json_logs: Any
) -> None:
    pytest.importorskip("opentelemetry.sdk.trace", reason="the tracing extra is not installed")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from services.table import tracing

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        json_logs()
        assert fake_api.client.get("/games").status_code == 200
    finally:
        tracing.use_provider(None)
        provider.shutdown()
    (line,) = requests_of(json_logs())
    (span,) = exporter.get_finished_spans()
    assert span.name == "GET /games"
    assert line["trace_id"] == format(span.context.trace_id, "032x")
    assert line["span_id"] == format(span.context.span_id, "016x")


@pytest.mark.parametrize(
    ("host", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.7", "private"),
        ("fd00::5", "private"),
        ("169.254.1.1", "private"),
        ("8.8.8.8", "public"),
        ("2001:4860:4860::8888", "public"),
        ("testclient", "unknown"),
        (None, "unknown"),
    ],
)
def test_the_client_address_is_logged_as_its_class_only(host: str | None, kind: str) -> None:
    assert address_class(host) == kind


@pytest.mark.thorough
def test_no_log_line_of_a_whole_game_holds_a_token_a_seed_or_a_hidden_card(api: Api, debug_logs: Any) -> None:
    json_logs = debug_logs  # every line, the hot routes' debug lines included
    rng = random.Random(27)
    options = {**practice("six-nimmt", 27), "rounds": 1}
    created = api.client.post("/games", json={"game": "six-nimmt", "players": 3, "options": options})
    assert created.status_code == 201, created.text
    game_id, host_token = created.json()["game_id"], created.json()["host_token"]
    client_seeds = [f"client-seed-{uuid.uuid4().hex}" for _ in range(3)]
    tokens = []
    for seat in range(3):
        joined = api.client.post(
            f"/games/{game_id}/players", json={"name": f"P{seat}", "client_seed": client_seeds[seat]}
        )
        assert joined.status_code == 201, joined.text
        tokens.append(joined.json()["token"])
    api.tokens[game_id] = tokens
    hands: set[str] = set()
    while (view := api.view(game_id))["status"] == "playing":
        for seat in view["to_act"]:
            own = api.view(game_id, seat)
            if len(own.get("hand") or []) >= 2:
                hands.add(json.dumps(own["hand"]))
                hands.add(json.dumps(own["hand"], separators=(",", ":")))
            sent = api.send(game_id, seat, choose("six-nimmt", own, rng), expected_version=own["version"])
            assert sent.status_code in (200, 409), sent.text
    api.project()
    assert view["status"] == "finished"
    revealed = [seed for seed in view["fairness"]["revealed_seeds"].values() if seed]
    assert revealed, "the finished game reveals the server's seeds"
    assert hands

    lines = json_logs()
    assert len(requests_of(lines)) > 20
    secrets = [host_token, *tokens, *client_seeds, options["seed"], *revealed]
    for line in lines:
        raw = line["_raw"]
        assert not HIDDEN_KEYS & set(line), line
        for secret in secrets:
            assert secret not in raw, f"a hidden value in a log line: {raw}"
        for hand in hands:
            assert hand not in raw, f"a hidden hand in a log line: {raw}"
