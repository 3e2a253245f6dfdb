"""The worker pool's transparency thread: appends what the projector queued, signs checkpoints at its
interval; the witnesses' keys are read from the settings."""

from __future__ import annotations

import pytest

from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.operating.config import Settings
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from tests.services.fairness.transparency.support import WITNESS_KEY, finished_game, store_entries
from workers.transparency import TransparencyLoop

T0_MS = 1_800_000_000_000


def test_a_pass_appends_the_queued_games_and_signs_a_checkpoint_once_per_interval(fake_redis) -> None:
    now = [T0_MS]
    store = SyncEventStore(fake_redis)
    loop = TransparencyLoop(store, "tables.example", checkpoint_seconds=10, clock=lambda: now[0])
    game_id, g = finished_game(1)
    store_entries(fake_redis, game_id, g.entries)
    note_loggable(fake_redis, game_id, g.entries[-1].version)
    loop.pass_once()
    tlog = TransparencyLog(store)
    first = cp.parse_text(tlog.latest_checkpoint().split("\n\n")[0] + "\n")
    assert fake_redis.zcard(TLOG.pending) == 0 and first.size == tlog.size() > 0
    other, g2 = finished_game(2)
    store_entries(fake_redis, other, g2.entries)
    note_loggable(fake_redis, other, g2.entries[-1].version)
    now[0] += 5_000
    loop.pass_once()  # appended at once, signed only when the interval is over
    assert (
        tlog.size() > first.size and cp.parse_text(tlog.latest_checkpoint().split("\n\n")[0] + "\n") == first
    )
    now[0] += 5_000
    loop.pass_once()
    assert cp.parse_text(tlog.latest_checkpoint().split("\n\n")[0] + "\n").size == tlog.size()


def test_the_settings_read_the_witnesses_keys_and_refuse_a_malformed_one() -> None:
    assert Settings(log_witnesses=f" {WITNESS_KEY.vkey} ,").witness_keys == (WITNESS_KEY,)
    with pytest.raises(ValueError, match="TABLESTREAM_LOG_WITNESSES"):
        Settings(log_witnesses="witness+00000000+AAAA")
    with pytest.raises(ValueError):
        Settings(log_checkpoint_seconds=0)
