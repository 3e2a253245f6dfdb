"""The public log's cost (docs/benchmarks.md, "Transparency log"), printed, never asserted: Redis bytes
and appender CPU per finished game, and the bytes the proofs add to an export. A real Redis; games are
recorded random games of the three titles (replayable seeds).

Run: ``PYTHONPATH=$PWD python -m pytest tests/benchmarks/test_tlog_cost.py -s -p no:randomly``."""

from __future__ import annotations

import json
import time

import pytest

from domain.games import game_names
from services.fairness.signing import KeyRing
from services.fairness.transparency.leaves import chat_stream
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.history.export import build_export
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG, TLOG_TAG
from tests.services.fairness.transparency.support import finished_game, store_entries

pytestmark = pytest.mark.redis

GAMES = 60


def log_bytes(client) -> int:
    return sum(int(client.memory_usage(key) or 0) for key in client.scan_iter(match=f"{TLOG_TAG}:*"))


def test_the_log_costs_per_finished_game_are_printed(real_redis) -> None:
    tlog = TransparencyLog(SyncEventStore(real_redis))
    ring = KeyRing.generate(int(time.time()), "tables.example")
    titles = game_names()
    games = [finished_game(seed, titles[seed % len(titles)]) for seed in range(GAMES)]
    for game_id, g in games:
        store_entries(real_redis, game_id, g.entries)
    before = log_bytes(real_redis)
    cpu = 0.0
    for game_id, g in games:  # as the projector queues them: one game at a time, appended at once
        note_loggable(real_redis, game_id, g.entries[-1].version)
        start = time.process_time()
        tlog.append_pending()
        cpu += time.process_time() - start
    start = time.process_time()
    note = tlog.publish(ring, int(time.time()))
    sign_cpu = time.process_time() - start
    real_redis.delete(TLOG.pending)
    after = log_bytes(real_redis)
    leaves = tlog.size()
    export_sizes, proof_sizes = [], []
    for game_id, g in games[:12]:
        proofs = tlog.proofs_for_game(game_id)
        plain = len(json.dumps(build_export(g.entries, ring.public_document())))
        export_sizes.append(plain)
        proof_sizes.append(len(json.dumps(build_export(g.entries, ring.public_document(), proofs))) - plain)
    logged = sum(
        len(tlog.leaves_of(game_id)) + len(tlog.leaves_of(chat_stream(game_id))) for game_id, _ in games
    )
    assert leaves == logged and note  # each head, and the chat as it stood at it
    print(
        f"\ntransparency log, {GAMES} finished games, {leaves} leaves ({leaves / GAMES:.1f} per game, "
        "half of them the chat's):"
        f"\n  Redis: {(after - before) / GAMES:,.0f} bytes per game "
        f"({(after - before) / leaves:,.0f} per leaf)"
        f"\n  appender CPU: {cpu / GAMES * 1e3:.2f} ms per game (read the stream, hash, one script)"
        f"\n  checkpoint signing: {sign_cpu * 1e3:.2f} ms per checkpoint"
        f"\n  export: +{sum(proof_sizes) / len(proof_sizes):,.0f} bytes of proofs and checkpoint "
        f"on {sum(export_sizes) / len(export_sizes):,.0f} bytes "
        f"({100 * sum(proof_sizes) / sum(export_sizes):.1f} %), tree of {leaves} leaves"
    )
