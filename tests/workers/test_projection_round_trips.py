"""The projector's round trips per batch of games, counted (not timed): with the indexes on the
store's server, a batch of handed-over games costs two round trips however many games it holds (one
pipeline clears the pending flags and reads every game's checkpoint, timer and new events; one
script call per game, all in one pipeline, writes the views with compare-and-set and brings the
indexes up to date). On a cluster, whose indexes live beside the queue, the indexes follow in round
trips of their own."""

from __future__ import annotations

import pytest

from services.history.folding import StateCache
from services.store.event_store import SyncEventStore
from services.store.keys import DIRTY
from services.telemetry import metrics
from tests.conftest import Clients, IndexClients
from tests.services.table.test_commands import FLOWER, handler_on
from workers.projector import Projector

pytestmark = pytest.mark.anyio


class Trips:
    """Counts the store's round trips (``metrics.round_trip``: one per request run alone, or one per
    round of a lockstep batch)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        counted = metrics.round_trip

        def count(failed: bool = False) -> None:
            self.count += 1
            counted(failed)

        monkeypatch.setattr(metrics, "round_trip", count)


async def started_tables(clients: Clients, index: IndexClients, tables: int) -> list[str]:
    """Tables of three without turn timers (nothing pending after a move: the dirty mark clears)."""
    handler = handler_on(clients, index)
    games = []
    for _ in range(tables):
        game_id, _ = await handler.create("skull", 3, {"turn_seconds": 0})
        for seat in range(3):
            await handler.join(game_id, f"P{seat}", "")
        games.append(game_id)
    return games


@pytest.mark.parametrize("tables", [1, 5])
async def test_a_batch_of_games_is_projected_in_two_round_trips_however_many_it_holds(
    store_backend: Clients, index_backend: IndexClients, monkeypatch: pytest.MonkeyPatch, tables: int
) -> None:
    index = index_backend[0] if index_backend else None
    store = SyncEventStore(store_backend[0], index)
    projector = Projector(store, StateCache())
    games = await started_tables(store_backend, index_backend, tables)
    with monkeypatch.context() as patch:
        first = Trips(patch)  # new tables: a head for the public log, lobby entries placed and announced
        assert projector.catch_up_all(games) == []
    handler = handler_on(store_backend, index_backend)
    for game_id in games:  # a move in every game
        await handler.command(game_id, 0, "c0", FLOWER, None)
    moves = Trips(monkeypatch)
    assert projector.catch_up_all(games) == []
    if store.scripts_write_indexes:
        assert (first.count, moves.count) == (2, 2)
    else:  # a cluster: + the log's note, the indexes, the lobby's order and announcement, the head
        assert (first.count, moves.count) == (7, 4)
    for game_id in games:
        assert store.checkpoint(game_id) == store.head(game_id)
    assert (index or store_backend[0]).zcard(DIRTY) == 0
