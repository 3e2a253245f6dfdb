"""The log in Redis (fakeredis): which heads a game logs, batches, idempotence, proofs."""

from __future__ import annotations

import pytest

from services.fairness.transparency import leaves, merkle
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from tests.services.fairness.transparency.support import batch_ends, chat_leaves, finished_game, store_entries


@pytest.fixture
def tlog(fake_redis) -> TransparencyLog:
    return TransparencyLog(SyncEventStore(fake_redis))


def test_a_leaf_encodes_and_decodes_its_game_version_and_head() -> None:
    head = leaves.Head("g-1", 42, "ab" * 32)
    assert leaves.decode(leaves.encode(head)) == head
    assert leaves.encode(head).startswith(b"tablestream-head/v1\x00")


def test_a_finished_game_logs_its_creation_every_round_end_and_its_final_head(tlog, fake_redis) -> None:
    game_id, g = finished_game(3)
    store_entries(fake_redis, game_id, g.entries)
    note_loggable(fake_redis, game_id, g.entries[-1].version)
    appended = tlog.append_pending()
    logged = [head for _, head in tlog.leaves_of(game_id)]
    chat = [head for _, head in tlog.leaves_of(leaves.chat_stream(game_id))]
    assert appended == len(logged) + len(chat) and len(logged) >= 3
    assert logged == leaves.heads_of_stream(game_id, g.entries)
    assert chat == chat_leaves(game_id, g.entries)  # the (empty) chat as it stood at each head
    assert logged[0].version == batch_ends(g.entries)[0]  # the creation batch, with the commitment
    assert logged[-1] == leaves.Head(game_id, g.entries[-1].version, g.entries[-1].hash)
    assert fake_redis.zcard(TLOG.pending) == 0
    size = tlog.size()
    root = tlog.root(size)
    for index, head in tlog.leaves_of(game_id):
        proof = tlog.inclusion(index, size)
        assert merkle.verify_inclusion(merkle.leaf_hash(leaves.encode(head)), index, size, proof, root)


def test_a_game_logged_as_it_is_played_logs_the_same_heads_once(tlog, fake_redis) -> None:
    games = [finished_game(seed) for seed in (5, 6)]
    cuts = {game_id: batch_ends(g.entries) for game_id, g in games}
    step = 0
    while any(step < len(c) for c in cuts.values()):
        for game_id, g in games:
            if step < len(cuts[game_id]):
                store_entries(fake_redis, game_id, g.entries[: cuts[game_id][step]])
                note_loggable(fake_redis, game_id, cuts[game_id][step])
        if step % 3 == 0:
            tlog.append_pending()
        step += 1
    tlog.append_pending()
    tlog.append_pending()
    for game_id, g in games:
        assert [head for _, head in tlog.leaves_of(game_id)] == leaves.heads_of_stream(game_id, g.entries)
        assert sorted(h for _, h in tlog.leaves_of(leaves.chat_stream(game_id))) == chat_leaves(
            game_id, g.entries
        )
    total = sum(2 * len(leaves.heads_of_stream(game_id, g.entries)) for game_id, g in games)  # and the chat's
    assert tlog.size() == total == fake_redis.hlen(TLOG.leafset)


def test_a_second_different_head_for_a_logged_version_is_never_appended(tlog, fake_redis) -> None:
    game_id, g = finished_game(7)
    store_entries(fake_redis, game_id, g.entries)
    note_loggable(fake_redis, game_id, g.entries[-1].version)
    tlog.append_pending()
    size = tlog.size()
    final = g.entries[-1]
    other = leaves.Head(game_id, final.version, "ee" * 32)
    assert tlog._fresh([other, leaves.Head(game_id, final.version, final.hash)]) == []
    assert tlog.size() == size


def test_an_appender_that_lost_the_race_for_the_size_computes_again(tlog, fake_redis) -> None:
    first, g1 = finished_game(8)
    second, g2 = finished_game(9)
    store_entries(fake_redis, first, g1.entries)
    store_entries(fake_redis, second, g2.entries)
    note_loggable(fake_redis, first, g1.entries[-1].version)
    rival = TransparencyLog(SyncEventStore(fake_redis))
    original = tlog._fresh

    def slow_fresh(candidates):
        fresh = original(candidates)
        if not rival.size():  # another appender lands a batch between our read and our script
            note_loggable(fake_redis, second, g2.entries[-1].version)
            rival.append_pending()
        return fresh

    tlog._fresh = slow_fresh
    tlog.append_pending()
    tlog.append_pending()
    expected = leaves.heads_of_stream(first, g1.entries) + leaves.heads_of_stream(second, g2.entries)
    chat = chat_leaves(first, g1.entries) + chat_leaves(second, g2.entries)
    assert tlog.size() == len(expected) + len(chat) == fake_redis.hlen(TLOG.leafset)
