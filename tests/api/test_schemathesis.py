"""Schemathesis over every route of ``/openapi.json``, in process on fakeredis, bounded in time.

Each generated request is sent as generated (mostly unknown games) and, for routes of one game,
once more against a started table with a seat's token, so the answers of a real game are checked
too: never a 5xx, every status, content type, header and body as the schema documents them, and
no schema-valid request refused for its shape (``no_schema_valid_refusal``: a 400 or 422 to a body
or query the schema calls valid). Runs are derandomized (the same examples each run); failures
print hypothesis's replay blob (``tests/conftest.py`` profiles).

Two tests share these checks: the generated (fuzzing) cases, through schemathesis's pytest
integration, and the coverage phase's boundary and invalid cases of each operation, built when that
operation's test runs. (Schemathesis's integration builds the coverage cases while pytest collects:
27 s of CPU in every pytest-xdist worker, four times a run, for tests one worker runs.)
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.generation.drivers import CoverageGenerator
from schemathesis.generation.feedback import FeedbackSources
from schemathesis.generation.overrides import Override
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from services.api.app import create_app
from services.operating.config import Settings

SERVER = fakeredis.FakeServer()
# No worker runs here, so the tables' projections never catch up: /healthz does not read them
# (tests/services/hardening/test_limits_and_readiness.py), and stays 200 however long this module runs.
APP = create_app(
    Settings(admin_token="schemathesis-operator-token"),
    lambda: (fakeredis.FakeAsyncRedis(server=SERVER), fakeredis.FakeRedis(server=SERVER)),
)
# A live stream runs until the client leaves: every event of the three is checked against its
# documented item schema over played games in tests/api/test_live_schema.py.
schema = schemathesis.openapi.from_asgi("/openapi.json", APP).exclude(path_regex="/live$")
# The coverage cases are built as each operation's test runs (see the module's docstring).
schema.config.phases.coverage.enabled = False
OPERATIONS = [result.ok() for result in schema.get_all_operations()]
COVERAGE_PARTS = {"POST /games": 4}
"""Operations with many coverage cases, sent by this many tests, each its share: ``POST /games`` has
4,630 (every option at its bounds and past them), 45 s in one test on a quiet machine."""
COVERAGE_SHARES = [
    pytest.param(
        operation, part, parts, id=operation.label if parts == 1 else f"{operation.label} {part + 1}/{parts}"
    )
    for operation in OPERATIONS
    for parts in [COVERAGE_PARTS.get(operation.label, 1)]
    for part in range(parts)
]
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
STATE_REFUSAL_CODES = {
    # The command union holds every game's commands: the table's game, phase and turn decide which
    # one it takes (a rule violation is a 422 with the rule's code, docs/api.md), as a 409 would.
    ("POST", "/games/{game_id}/commands"): None,
    # 'at' past the table's head: the head is the table's state
    ("GET", "/games/{game_id}/view"): {"invalid_query"},
    ("GET", "/games/{game_id}/replay"): {"invalid_query"},
    # a seat past the table's seats: how many there are is the table's state
    ("GET", "/games/{game_id}/review"): {"invalid_query"},
    # a round not begun yet at this table; a seat other than the caller's own (a player disputes theirs)
    ("POST", "/games/{game_id}/disputes"): {"invalid_round", "invalid_party"},
    # receipts evidence is JSON inside the content string (a shape no schema of a string states);
    # evidence only from the dispute's opener
    ("POST", "/games/{game_id}/disputes/{dispute_id}/evidence"): {"invalid_evidence", "not_disputant"},
    # sizes past the log's size, or from > to: the log's size is stored state
    ("GET", "/log/consistency"): {"log_size_invalid"},
    # a cosignature is checked against the checkpoints published and the witness's key (strings the
    # schema cannot tell from a well-formed note, line or key)
    ("POST", "/log/cosignatures"): {
        "checkpoint_malformed",
        "cosignature_malformed",
        "cosignature_invalid",
        "witness_key_malformed",
    },
}
"""Refusals of schema-valid requests that depend on stored state, not on the request's shape:
(method, path) -> the codes allowed (``None``: any but ``invalid_request``, a body's shape). A name
that looks like a registered one (``name_confusable``) is one everywhere."""


def no_schema_valid_refusal(ctx: Any, response: Any, case: Any) -> bool | None:
    """A request generated as valid by the schema is never refused for its shape (400 or 422);
    only the state refusals above are."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code not in (400, 422):
        return None
    code = response.json()["error"]["code"]
    allowed = STATE_REFUSAL_CODES.get((case.method.upper(), case.path), set())
    if code == "name_confusable" or (allowed is None and code != "invalid_request"):
        return None
    if allowed is not None and code in allowed:
        return None
    raise AssertionError(
        f"a schema-valid request was refused: {response.status_code} {code}: {response.text}"
    )


CHECKS.append(no_schema_valid_refusal)


@pytest.fixture(scope="module")
def table() -> Iterator[tuple[str, str]]:
    """A started Skull table and seat 0's token, made through schemathesis's own in-process client:
    the same event loop and the same run of the app's lifespan as every generated request, as one
    server process has. (Made in a loop of its own, the table's lifespan ended in that loop while
    the live hub's reader, started by a generated view request, ran in schemathesis's.)"""
    with asgi.get_client(APP) as client:
        game_id = client.post("/games", json={"game": "skull", "players": 3}).json()["game_id"]
        tokens = [
            client.post(f"/games/{game_id}/players", json={"name": f"P{seat}"}).json()["token"]
            for seat in range(3)
        ]
        yield game_id, tokens[0]


def answered_as_documented(case: Any, table: tuple[str, str]) -> None:
    """``case`` sent as generated, and for a route of one game once more at the started table with
    its seat's token, every answer checked."""
    case.headers = {**(case.headers or {}), "X-Request-ID": f"st-{uuid.uuid4().hex[:8]}"}
    case.call_and_validate(checks=CHECKS)
    if case.path_parameters and "game_id" in case.path_parameters:
        game_id, token = table
        case.path_parameters = {**case.path_parameters, "game_id": game_id}
        case.call_and_validate(checks=CHECKS, headers={"Authorization": f"Bearer {token}"})


@pytest.mark.thorough
@schema.parametrize()
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_every_route_answers_generated_requests_as_documented_and_never_with_a_5xx(
    case: Any, table: tuple[str, str]
) -> None:
    answered_as_documented(case, table)


@pytest.mark.thorough
@pytest.mark.parametrize(("operation", "part", "parts"), COVERAGE_SHARES)
def test_every_route_answers_its_coverage_cases_as_documented_and_never_with_a_5xx(
    operation: Any, part: int, parts: int, table: tuple[str, str]
) -> None:
    """The coverage phase's cases of one operation: each documented boundary (lengths, ranges,
    enums, formats) and each way to break one (a missing field, a wrong type, a value past a bound),
    deterministic, as schemathesis's own run builds them; ``part`` of ``parts``: every parts-th case
    from the part-th (the cases come in the same order in every process)."""
    generation = schema.config.generation_for(operation=operation, phase="coverage")
    cases = CoverageGenerator(
        operation=operation,
        generation_modes=generation.modes,
        generation_config=generation,
        auth_storage=None,
        override=Override(),
        feedback=FeedbackSources(),
    )
    sent = 0
    for case in itertools.islice(cases, part, None, parts):
        answered_as_documented(case, table)
        sent += 1
    assert sent > 0, f"no coverage case for {operation.label}"
