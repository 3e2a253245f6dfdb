"""The log never contradicts itself: the newest checkpoint it published is kept outside Redis, and a
tree restored from an older snapshot is signed nothing that does not extend it (C2SP
tlog-checkpoint's MUST), with words that say how an operator recovers."""

from __future__ import annotations

from pathlib import Path

import fakeredis
import pytest
from structlog.testing import capture_logs

from services.fairness.receipts import ensure_keys
from services.fairness.signing import KeyRing, parse_note
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.fairness.transparency.published import LogContradiction, PublishedCheckpoint
from services.store.event_store import SyncEventStore
from services.store.signing_keys import SIGNING_KEYS
from tests.services.fairness.transparency.support import T0, finished_game, store_entries
from workers.transparency import TransparencyLoop

NAME = "tables.example"


def a_log() -> TransparencyLog:
    """A log on a Redis of its own (one server: the store as a snapshot would bring it back)."""
    return TransparencyLog(SyncEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer())))


def logged(tlog: TransparencyLog, *seeds: int) -> None:
    """The finished games of ``seeds`` stored and their heads appended to the log."""
    for seed in seeds:
        game_id, g = finished_game(seed)
        store_entries(tlog.redis, game_id, g.entries)
        note_loggable(tlog.redis, game_id, g.entries[-1].version)
    tlog.append_pending()


def size_of(note: str) -> int:
    return cp.parse_text(parse_note(note)[0]).size


@pytest.fixture
def ring() -> KeyRing:
    return KeyRing.generate(T0, NAME)


def test_each_checkpoint_published_is_kept_outside_redis_and_only_a_larger_one_replaces_it(
    tmp_path: Path, ring: KeyRing
) -> None:
    kept = PublishedCheckpoint.of(tmp_path, ring)
    tlog = a_log()
    logged(tlog, 1)
    first = tlog.publish(ring, T0, tmp_path)
    assert kept.path.read_text() == first
    logged(tlog, 2)
    second = tlog.publish(ring, T0 + 10, tmp_path)
    assert size_of(second) > size_of(first) and kept.path.read_text() == second
    kept.keep(first)  # an older note never replaces a newer one
    assert kept.path.read_text() == second


def test_a_log_restored_from_an_older_snapshot_signs_nothing_until_it_extends_what_it_published(
    tmp_path: Path, ring: KeyRing
) -> None:
    kept = PublishedCheckpoint.of(tmp_path, ring)
    before = a_log()
    logged(before, 1)
    before.publish(ring, T0, tmp_path)
    logged(before, 2)
    published = before.publish(ring, T0 + 10, tmp_path)

    restored = a_log()  # the snapshot was taken after game 1 was logged, before game 2
    logged(restored, 1)
    with pytest.raises(LogContradiction) as behind:
        restored.publish(ring, T0 + 20, tmp_path)
    assert f"but it published a checkpoint of {size_of(published)} leaves" in str(behind.value)
    assert "restored from an older snapshot" in str(behind.value)
    assert "tablestream import-all" in str(behind.value)

    logged(restored, 3)  # the appender logs another game first: the same size, another tree
    logged(restored, 2)
    assert restored.size() >= size_of(published)
    with pytest.raises(LogContradiction) as forked:
        restored.publish(ring, T0 + 30, tmp_path)
    assert "Signing would show every witness a fork" in str(forked.value)
    assert restored.latest_checkpoint() is None  # nothing was signed
    assert kept.path.read_text() == published

    healed = a_log()  # restored from the newest backup: the same leaves, then more
    logged(healed, 1)
    logged(healed, 2)
    logged(healed, 3)
    assert size_of(healed.publish(ring, T0 + 40, tmp_path)) > size_of(published)
    another = a_log()  # another store's log beside it (its own key ring) keeps a file of its own
    logged(another, 4)
    assert size_of(another.publish(KeyRing.generate(T0, NAME), T0 + 50, tmp_path)) < size_of(published)


def test_an_unreadable_kept_checkpoint_stops_the_signing_with_a_sentence(
    tmp_path: Path, ring: KeyRing
) -> None:
    PublishedCheckpoint.of(tmp_path, ring).path.write_text("not a note")
    tlog = a_log()
    logged(tlog, 1)
    with pytest.raises(LogContradiction, match=r"cannot be read .*the log signs nothing until it can"):
        tlog.publish(ring, T0, tmp_path)
    assert tlog.latest_checkpoint() is None


def test_the_worker_pool_s_publisher_logs_its_refusal_and_signs_nothing(tmp_path: Path) -> None:
    now = [T0 * 1000]
    first = a_log()
    logged(first, 1, 2)
    ring = first.store.run(ensure_keys(T0, NAME))
    first.publish(ring, T0, tmp_path)
    restored = a_log()
    restored.redis.set(SIGNING_KEYS, first.redis.get(SIGNING_KEYS))  # a restore brings the key ring back
    logged(restored, 1)
    loop = TransparencyLoop(
        restored.store, NAME, append_seconds=0.001, clock=lambda: now[0], kept_in=tmp_path
    )
    with pytest.raises(LogContradiction):
        loop.pass_once()
    with capture_logs() as logs:
        loop.start()
        try:
            for _ in range(2000):  # wait on the refusal, with a deadline
                if any(e["event"] == "log_checkpoint_refused" for e in logs):
                    break
                loop.join(0.005)
        finally:
            loop.stop()
            loop.join(5)
    refusals = [e for e in logs if e["event"] == "log_checkpoint_refused"]
    assert refusals and refusals[0]["log_level"] == "error"
    assert "restored from an older snapshot" in refusals[0]["reason"]
    assert restored.latest_checkpoint() is None
