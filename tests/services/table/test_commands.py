"""Command handling against the store: races, retries, replays, and the canonical log line."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import structlog

from services.errors import AppError
from services.store import operations as ops
from services.store.event_store import EventStore
from services.store.operations import Handover
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from tests.conftest import Clients, IndexClients

pytestmark = pytest.mark.anyio
FLOWER = {"type": "place_disc", "disc": "flower"}


async def no_poke(game_id: str, handover: Handover) -> None:
    return None


def handler_on(clients: Clients, index: IndexClients = None) -> GameCommands:
    """A handler with its own cache, as a separate API process would have (its indexes on ``index``
    when given: beside the queue of a cluster deployment)."""
    async_client = clients[1]
    store = EventStore(async_client, index[1] if index else None)
    return GameCommands(store, TokenStore(async_client), no_poke)


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


async def test_every_command_puts_its_id_seat_and_outcome_on_the_requests_one_log_line(
    store_backend: Clients,
) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    bound = []
    structlog.contextvars.bind_contextvars(request_id="req-1")
    try:
        with structlog.testing.capture_logs() as logs:
            await handler.command(game_id, 0, "cmd-1", FLOWER, None)
            bound.append(structlog.contextvars.get_contextvars())
            with pytest.raises(AppError):
                await handler.command(game_id, 0, "cmd-2", FLOWER, None)
            bound.append(structlog.contextvars.get_contextvars())
    finally:
        structlog.contextvars.clear_contextvars()
    assert [entry for entry in logs if entry["event"] == "command"] == []  # no line of its own
    assert [(b["command_id"], b["outcome"]) for b in bound] == [("cmd-1", "ok"), ("cmd-2", "rejected")]
    for context in bound:
        assert context["request_id"] == "req-1"
        assert context["game_id"] == game_id
        assert context["seat"] == 0
        assert context["command_ms"] >= 0


async def test_a_failed_projection_poke_does_not_fail_a_stored_command(store_backend: Clients) -> None:
    async def broken_poke(game_id: str, poke: bool) -> None:
        raise ConnectionError("the queue is unreachable")

    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    handler.notify = broken_poke
    outcome = await handler.command(game_id, 0, "stored", FLOWER, None)
    assert (await handler.load(game_id)).version == outcome.version


@pytest.mark.redis
@pytest.mark.parametrize("expected", [False, True], ids=["without-expected-version", "with-expected-version"])
async def test_an_identical_retry_racing_its_original_always_gets_the_original_answer(
    real_redis: Any, real_redis_async: Any, expected: bool
) -> None:
    """Two API processes (separate clients and caches) get the same command id and body at once,
    over many tables on a real server: both answer with the one appended batch, never a 422 or 409."""
    clients: Clients = (real_redis, real_redis_async)
    setup = handler_on(clients)
    for iteration in range(60):
        game_id = await started_table(setup, 3)
        version = (await setup.load(game_id)).version
        original, retry = handler_on(clients), handler_on(clients)
        await asyncio.gather(original.load(game_id), retry.load(game_id))
        expected_version = version if expected else None
        a, b = await asyncio.gather(
            original.command(game_id, 0, "c1", FLOWER, expected_version),
            retry.command(game_id, 0, "c1", FLOWER, expected_version),
        )
        assert (a.first, a.version, a.hash) == (b.first, b.version, b.hash), iteration
        assert sorted([a.duplicate, b.duplicate]) == [False, True], iteration
        assert (await setup.load(game_id)).version == version + 1 == a.version


async def test_two_seats_may_send_the_same_command_id_and_neither_learns_of_the_other(
    store_backend: Clients,
) -> None:
    handler = handler_on(store_backend)
    game_id = await started_table(handler, 3)
    first = await handler.command(game_id, 0, "c1", FLOWER, None)
    second = await handler.command(game_id, 1, "c1", {"type": "place_disc", "disc": "skull"}, None)
    assert not first.duplicate and not second.duplicate
    assert second.first == first.version + 1
    again = await handler.command(game_id, 1, "c1", {"type": "place_disc", "disc": "skull"}, None)
    assert again.duplicate and again.hash == second.hash


async def test_a_process_keeps_the_seeds_of_the_games_played_lately_and_reads_a_dropped_ones_again(
    store_backend: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The secret seeds (with the draws derived from them) are kept per game in a bounded LRU, as
    the folded tables are: a process that saw 100,000 games must not hold 100,000 seeds."""
    monkeypatch.setattr("services.table.commands.SEEDS_KEPT", 2)
    handler = handler_on(store_backend)
    games = [await started_table(handler, 3) for _ in range(3)]
    read: list[str] = []
    secret, command_load = handler.store.secret, handler.store.command_load

    async def counted(game_id: str) -> Any:
        read.append(game_id)
        return await secret(game_id)

    async def counted_with_load(game_id: str, *args: Any) -> Any:
        load = await command_load(game_id, *args)
        if load.secret is not None:  # a command's load reads the secret beside the head when not kept
            read.append(game_id)
        return load

    monkeypatch.setattr(handler.store, "secret", counted)
    monkeypatch.setattr(handler.store, "command_load", counted_with_load)
    first = await handler.seeds(games[2])
    assert await handler.seeds(games[2]) is first and await handler.seeds(games[1]) is not None
    assert read == []  # the two played last are kept
    again = await handler.seeds(games[0])  # dropped when the third game came: read again
    assert read == [games[0]]
    assert again.chain_commitment(0) == (await handler_on(store_backend).seeds(games[0])).chain_commitment(0)
    await handler.seeds(games[2])  # dropped when games[0] came back: read again, and games[1] goes
    assert read == [games[0], games[2]]
    played = await handler.command(games[0], 0, "c1", FLOWER, None)
    assert played.version > 0 and read == [games[0], games[2]]  # games[0] is kept: no read
    await handler.command(games[1], 0, "c1", FLOWER, None)
    assert read == [games[0], games[2], games[1]]


async def test_a_retry_whose_load_reads_its_originals_events_also_reads_its_record(
    store_backend: Clients, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command's load reads the stream's tail before the command id's records, and reads them again
    when the tail took more pages: the append writes events and record in one step, so a load that
    holds the original's events holds its record too, and the retry answers as the original did
    instead of being refused by the state the original made. Here the original lands between the
    load's first page and the next, as it would in a race."""
    monkeypatch.setattr(ops, "PAGE", 2)  # a cold load of this table takes several pages
    setup = handler_on(store_backend)
    game_id = await started_table(setup, 3)
    retry = handler_on(store_backend)
    load = ops.command_load(game_id, 0, "c1", retry.cache)
    request = next(load)
    reply = await retry.store._execute(request)  # the first page and the records: none yet
    original = await setup.command(game_id, 0, "c1", FLOWER, None)
    with pytest.raises(StopIteration) as done:
        while True:
            request = load.send(reply)
            reply = await retry.store._execute(request)
    loaded = done.value.value
    assert loaded.folded.version == original.version  # the original's events were read ...
    assert loaded.record == (loaded.record[0], original.first, original.version)  # ... with its record
    answer = await retry.command(game_id, 0, "c1", FLOWER, None)
    assert answer.duplicate and answer.hash == original.hash
