"""A turn-based table's turn of a day, driven by a fake clock on a real Redis: its deadline is in
Redis (the game's timer and the global deadline index), not in a process's memory, so a timer loop
started afresh (a restarted worker) fires it; it fires at the deadline and not a millisecond before."""

from __future__ import annotations

import redis

from services.store.event_store import SyncEventStore
from services.store.queue import lifecycle_queue
from tests.workers.conftest import FakeClock
from tests.workers.test_lifecycle import accepted, drain, folded, records, table
from workers.lifecycle import tick

DAY = 86_400


def test_a_turn_based_table_with_a_day_per_turn_times_out_at_the_deadline_and_not_before(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_based=True, turn_seconds=DAY, takeover_after=2)
    store = SyncEventStore(sync)
    armed = store.read_timer(game_id)
    assert armed["kind"] == "turn" and armed["seats"] == "0,1"
    assert int(armed["deadline"]) == clock() + DAY * 1000
    clock.advance(DAY - 0.001)  # a millisecond short of a day
    assert tick(store, lifecycle_queue(sync), clock()) == []
    drain(sync)
    assert [r.kind for r in records(sync, game_id) if r.kind == "timeout"] == []
    assert folded(sync, clock, game_id).state.bots == frozenset()

    restarted = SyncEventStore(redis.Redis(connection_pool=redis.ConnectionPool(**_same_server(sync))))
    clock.advance(0.001)  # the deadline: a timer loop of a new process finds it in Redis
    assert tick(restarted, lifecycle_queue(sync), clock()) == [(game_id, int(armed["version"]))]
    drain(sync)
    timeouts = [(r.kind, r.seat) for r in records(sync, game_id) if r.kind == "timeout"]
    assert timeouts == [("timeout", 0), ("timeout", 1)]
    state = folded(sync, clock, game_id).state
    assert state.bots == frozenset() and state.streaks == (1, 1)  # takeover after 2: not yet
    again = store.read_timer(game_id)  # the next turn: a full day again from the timeout
    assert int(again["deadline"]) == clock() + DAY * 1000
    accepted(sync, game_id)  # the verifier re-runs every batch, the turn-based create included


def _same_server(sync: redis.Redis) -> dict[str, object]:
    kwargs = dict(sync.connection_pool.connection_kwargs)
    return {"connection_class": sync.connection_pool.connection_class, **kwargs}
