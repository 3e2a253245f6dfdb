"""Schemathesis over every route of ``/openapi.json``, in process on fakeredis, bounded in time.

Each generated request is sent as generated (mostly unknown games) and, for routes of one game,
once more against a started table with a seat's token, so the answers of a real game are checked
too: never a 5xx, every status, content type, header and body as the schema documents them.
Failures print hypothesis's replay blob (``tests/conftest.py`` profiles).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from services.api.app import create_app
from services.config import Settings

SERVER = fakeredis.FakeServer()
# No worker runs here, so the table's projection never catches up: /healthz would turn 503
# ("projections_lagging") once this module ran longer than the readiness bound, which a loaded
# machine reaches. The lag rule has its own tests (tests/services/hardening/test_limits_and_readiness.py).
APP = create_app(
    Settings(admin_token="schemathesis-operator-token", ready_max_lag_seconds=24 * 3600.0),
    lambda: (fakeredis.FakeAsyncRedis(server=SERVER), fakeredis.FakeRedis(server=SERVER)),
)
# /live streams until the client leaves: its answers are covered by tests/api/test_live.py.
schema = schemathesis.openapi.from_asgi("/openapi.json", APP).exclude(path_regex="/live$")
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[str, str]]:
    """A started Skull table and seat 0's token."""
    with TestClient(APP) as client:
        game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        tokens = [
            client.post(f"/games/{game_id}/players", json={"name": f"P{seat}"}).json()["token"]
            for seat in range(3)
        ]
        yield game_id, tokens[0]


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_route_answers_generated_requests_as_documented_and_never_with_a_5xx(
    case: Any, table: tuple[str, str]
) -> None:
    case.headers = {**(case.headers or {}), "X-Request-ID": f"st-{uuid.uuid4().hex[:8]}"}
    case.call_and_validate(checks=CHECKS)
    if case.path_parameters and "game_id" in case.path_parameters:
        game_id, token = table
        case.path_parameters = {**case.path_parameters, "game_id": game_id}
        case.call_and_validate(checks=CHECKS, headers={"Authorization": f"Bearer {token}"})
