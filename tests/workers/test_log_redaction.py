"""Log lines never render exception locals: a failing projection's line shows no hidden hand."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

import workers.projector
from services.store.event_store import SyncEventStore
from services.telemetry.structured_logging import configure_logging
from tests.conftest import Clients
from tests.services.table.test_commands import handler_on
from workers.projector import Projector

pytestmark = pytest.mark.anyio


@pytest.fixture
def restored_logging() -> Iterator[None]:
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


async def failing_projection(clients: Clients, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A started 6 nimmt! table whose projection fails with every hand in a local variable of the
    failing frame; returns the game id and seat 0's hidden hand as Python prints it."""
    handler = handler_on(clients)
    game_id, _ = await handler.create("six-nimmt", 3, {})
    for seat in range(3):
        await handler.join(game_id, f"P{seat}", "")
    folded = await handler.load(game_id)
    hand = folded.state.game_state.hands[0]
    assert len(hand) == 10

    def broken_materialise(state: Any, version: int) -> dict[str, bytes]:
        hands = state.game_state.hands  # noqa: F841 - the local a traceback with locals would print
        raise ValueError("the projection broke")

    monkeypatch.setattr(workers.projector, "materialise", broken_materialise)
    return game_id, repr(hand)[1:-1]


def failed_lines(err: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    return [line for line in lines if line.get("event") == "projection_failed"]


async def test_a_failing_projection_logs_its_traceback_without_locals_or_a_hidden_hand(
    fake_redis: Any,
    fake_redis_async: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    restored_logging: None,
) -> None:
    game_id, hand = await failing_projection((fake_redis, fake_redis_async), monkeypatch)
    configure_logging(cache=False)
    assert Projector(SyncEventStore(fake_redis)).catch_up_all([game_id]) == [game_id]
    (line,) = failed_lines(capsys.readouterr().err)
    raw = json.dumps(line)
    frames = [frame for trace in line["exception"] for frame in trace["frames"]]
    assert any(frame["name"] == "broken_materialise" for frame in frames)  # the traceback is there
    assert line["exception"][-1]["exc_value"] == "the projection broke"
    assert all("locals" not in frame for frame in frames)
    assert hand not in raw and "hands" not in raw


async def test_structlogs_default_dict_tracebacks_would_print_the_hand_this_set_up_hides(
    fake_redis: Any,
    fake_redis_async: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    restored_logging: None,
) -> None:
    """The defect this guards against, reproduced: structlog's own ``dict_tracebacks`` shows locals."""
    game_id, hand = await failing_projection((fake_redis, fake_redis_async), monkeypatch)
    structlog.configure(
        processors=[structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()],
        logger_factory=structlog.PrintLoggerFactory(),
        cache_logger_on_first_use=False,
    )
    Projector(SyncEventStore(fake_redis)).catch_up_all([game_id])
    (line,) = failed_lines(capsys.readouterr().out)
    assert hand in json.dumps(line)


def test_the_console_renderer_prints_plain_tracebacks_without_locals(
    capsys: pytest.CaptureFixture[str], restored_logging: None
) -> None:
    configure_logging(json=False, cache=False)
    secret_hand = (7, 21, 38, 54, 66, 71, 80, 92, 99, 103)

    def fail() -> None:
        hidden = secret_hand  # noqa: F841
        raise ValueError("broke")

    try:
        fail()
    except ValueError:
        structlog.get_logger("test").exception("projection_failed")
    err = capsys.readouterr().err
    assert "ValueError: broke" in err
    assert "7, 21, 38" not in err
