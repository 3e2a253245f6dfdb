"""The log on a real Redis Cluster: its keys share one slot, so the append script, the proofs'
pipelines and the checkpoint script run there as on one server."""

from __future__ import annotations

import pytest

from services.fairness.signing import KeyRing
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import leaves, merkle
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from tests.services.fairness.transparency.support import finished_game, store_entries

pytestmark = pytest.mark.redis

T0 = 1_800_000_000


def test_the_log_appends_proves_and_checkpoints_on_a_cluster(cluster_client) -> None:
    slots = {cluster_client.keyslot(key) for key in TLOG}
    assert len(slots) == 1
    tlog = TransparencyLog(SyncEventStore(cluster_client))
    ring = KeyRing.generate(T0, "tables.example")
    games = [finished_game(seed) for seed in (1, 2, 3)]
    for game_id, g in games:
        store_entries(cluster_client, game_id, g.entries)
        note_loggable(cluster_client, game_id, g.entries[-1].version)
    tlog.append_pending()
    checkpoint, _ = cp.open_checkpoint(tlog.publish(ring, T0), ring.public_keys())
    for game_id, g in games:
        proofs = tlog.proofs_for_game(game_id)
        assert [leaf["version"] for leaf in proofs["leaves"]] == [
            h.version for h in leaves.heads_of_stream(game_id, g.entries)
        ]
        for leaf, (index, head) in zip(proofs["leaves"], tlog.leaves_of(game_id), strict=True):
            assert leaf["index"] == index
            proof = tlog.inclusion(index, checkpoint.size)
            assert merkle.verify_inclusion(
                merkle.leaf_hash(leaves.encode(head)), index, checkpoint.size, proof, checkpoint.root
            )
