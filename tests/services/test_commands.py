"""Command handling against the store: races, retries, replays, and the canonical log line."""

from __future__ import annotations

import asyncio

import pytest
import structlog

from services.commands import GameCommands
from services.errors import AppError
from services.store.event_store import EventStore
from services.store.tokens import TokenStore
from tests.conftest import Clients

pytestmark = pytest.mark.anyio
FLOWER = {"type": "place_disc", "disc": "flower"}


async def no_poke(game_id: str) -> None:
    return None


def handler_on(clients: Clients) -> GameCommands:
    """A handler with its own cache, as a separate API process would have."""
    async_client = clients[1]
    return GameCommands(EventStore(async_client), TokenStore(async_client), no_poke)


async def started_table(handler: GameCommands, players: int) -> str:
    game_id, _ = await handler.create("skull", players, {"two_sets": players > 6})
    for seat in range(players):
        await handler.join(game_id, f"P{seat}", "")
    return game_id


async def test_eight_concurrent_writers_at_one_expected_version_exactly_one_wins(
    store_backend: Clients,
) -> None:
    setup = handler_on(store_backend)
    game_id = await started_table(setup, 8)
    version = (await setup.load(game_id)).version
    writers = [handler_on(store_backend) for _ in range(8)]
    for writer in writers:
        await writer.load(game_id)  # every writer holds the same version before the race

    async def write(seat: int) -> int | str:
        try:
            return (await writers[seat].command(game_id, seat, f"c{seat}", FLOWER, version)).version
        except AppError as error:
            return error.code

    results = await asyncio.gather(*(write(seat) for seat in range(8)))
    winners = [r for r in results if isinstance(r, int)]
    assert len(winners) == 1
    assert sorted(r for r in results if isinstance(r, str)) == ["version_conflict"] * 7
    assert (await setup.load(game_id)).version == winners[0]


async def test_without_expected_version_every_concurrent_writer_is_applied_in_turn(
    store_backend: Clients,
) -> None:
    setup = handler_on(store_backend)
    game_id = await started_table(setup, 8)
    before = (await setup.load(game_id)).version
    writers = [handler_on(store_backend) for _ in range(8)]
    outcomes = await asyncio.gather(
        *(writers[seat].command(game_id, seat, f"c{seat}", FLOWER, None) for seat in range(8))
    )
    assert len({o.version for o in outcomes}) == 8
    folded = await setup.load(game_id)
    assert folded.version >= before + 8
    assert folded.table.rules.phase(folded.state.game_state) != "placement"  # all eight discs are down


async def test_a_retried_command_id_appends_nothing_even_from_another_process(store_backend: Clients) -> None:
    first, second = handler_on(store_backend), handler_on(store_backend)
    game_id = await started_table(first, 3)
    original = await first.command(game_id, 0, "retry-me", FLOWER, None)
    replay = await second.command(game_id, 0, "retry-me", FLOWER, None)
    assert (replay.first, replay.version, replay.hash) == (original.first, original.version, original.hash)
    assert replay.duplicate
    assert (await first.load(game_id)).version == original.version
    with pytest.raises(AppError) as reused:
        await second.command(game_id, 0, "retry-me", {"type": "place_disc", "disc": "skull"}, None)
    assert reused.value.code == "command_id_reused"


async def test_every_command_leaves_one_canonical_log_line(store_backend: Clients) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    structlog.contextvars.bind_contextvars(request_id="req-1")
    try:
        with structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
            await handler.command(game_id, 0, "cmd-1", FLOWER, None)
            with pytest.raises(AppError):
                await handler.command(game_id, 0, "cmd-2", FLOWER, None)
    finally:
        structlog.contextvars.clear_contextvars()
    lines = [entry for entry in logs if entry["event"] == "command"]
    assert [line["outcome"] for line in lines] == ["ok", "rejected"]
    for line in lines:
        assert line["request_id"] == "req-1"
        assert line["game_id"] == game_id
        assert line["command_id"] in {"cmd-1", "cmd-2"}
        assert line["duration_ms"] >= 0


async def test_a_failed_projection_poke_does_not_fail_a_stored_command(store_backend: Clients) -> None:
    async def broken_poke(game_id: str) -> None:
        raise ConnectionError("the queue is unreachable")

    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    handler.notify = broken_poke
    outcome = await handler.command(game_id, 0, "stored", FLOWER, None)
    assert (await handler.load(game_id)).version == outcome.version
