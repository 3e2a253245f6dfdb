"""A real Redis, appender processes killed with SIGKILL while they append: no leaf is lost, none is
appended twice, and every checkpoint they published is consistent with every later one."""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from domain.games import game_names
from services.fairness.receipts import load_keys
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import leaves, merkle
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.store.embedded import EmbeddedRedis
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from tests.services.fairness.transparency.appender_process import PUBLISHED
from tests.services.fairness.transparency.support import batch_ends, chat_leaves, finished_game, store_entries
from tests.support.waiting import wait_until

pytestmark = pytest.mark.redis

ROOT = Path(__file__).resolve().parents[4]


def appender(url: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.services.fairness.transparency.appender_process", url],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_appenders_killed_mid_append_lose_no_leaf_duplicate_none_and_stay_consistent(
    real_redis, redis_server: EmbeddedRedis
) -> None:
    rng = random.Random(2512)  # the kill schedule, replayable
    games = [
        finished_game(seed, game)
        for seed, game in zip(range(20, 26), itertools.cycle(game_names()), strict=False)
    ]
    cuts = {game_id: batch_ends(g.entries) for game_id, g in games}
    stored = dict.fromkeys(cuts, 0)  # batches of each game in its stream so far
    tlog = TransparencyLog(SyncEventStore(real_redis))
    kills = 0
    running = [appender(redis_server.url), appender(redis_server.url)]
    try:
        while any(stored[g] < len(cuts[g]) for g in cuts):
            for game_id, g in games:  # the games go on: a few batches each, queued as the projector does
                if stored[game_id] < len(cuts[game_id]):
                    stored[game_id] = min(len(cuts[game_id]), stored[game_id] + rng.randint(4, 24))
                    end = cuts[game_id][stored[game_id] - 1]
                    store_entries(real_redis, game_id, g.entries[:end])
                    note_loggable(real_redis, game_id, end)
            before = tlog.size()
            wait_until(
                lambda b=before: tlog.size() > b or not real_redis.zcard(TLOG.pending), 60, "an append"
            )
            time.sleep(rng.uniform(0, 0.01))  # somewhere in the next append: the kill's moment, not a wait
            victim = running.pop(rng.randrange(len(running)))
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            kills += 1
            running.append(appender(redis_server.url))
        wait_until(lambda: not real_redis.zcard(TLOG.pending), 120, "every game appended")
    finally:
        for process in running:
            process.send_signal(signal.SIGKILL)
            process.wait()
    assert kills >= 3

    expected = {game_id: leaves.heads_of_stream(game_id, g.entries) for game_id, g in games}
    for game_id, heads in expected.items():
        assert [head for _, head in tlog.leaves_of(game_id)] == heads  # none lost, none twice
        chat = sorted(head for _, head in tlog.leaves_of(leaves.chat_stream(game_id)))
        assert chat == chat_leaves(game_id, dict(games)[game_id].entries)  # the chat's at each, once
    size = tlog.size()
    assert (
        size
        == 2 * sum(map(len, expected.values()))
        == real_redis.hlen(TLOG.leafset)
        == real_redis.hlen(TLOG.heads)
    )

    ring = SyncEventStore(real_redis).run(load_keys())
    assert ring is not None
    published = [
        cp.open_checkpoint(n.decode(), ring.public_keys())[0] for n in real_redis.lrange(PUBLISHED, 0, -1)
    ]
    assert published
    final_root = tlog.root(size)
    for checkpoint in published:
        proof = tlog.consistency(checkpoint.size, size)
        assert merkle.verify_consistency(checkpoint.size, size, proof, checkpoint.root, final_root)
    print(f"\n{kills} appender kills, {size} leaves, {len(published)} checkpoints, all consistent")
