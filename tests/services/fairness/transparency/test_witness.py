"""``tablestream witness``: cosigns consistent checkpoints, refuses a log that forked or rewrote a leaf."""

from __future__ import annotations

import json

import httpx
import pytest

from services.cli.witness import BAD_SIGNATURE, FORK, Witness, WitnessRefusal, serve_evidence
from services.disputes.grounds import Trusted, consistency_ground
from services.fairness.receipts import ensure_keys
from services.fairness.signing import KeyRing
from services.fairness.transparency import checkpoint as cp
from services.store.keys import TLOG
from tests.services.fairness.transparency.support import T0, logged, publish, served_app


@pytest.fixture
def served():
    yield from served_app()


def test_a_witness_cosigns_each_new_consistent_checkpoint_and_the_service_serves_its_cosignature(
    served,
    tmp_path,
) -> None:
    client, tlog = served
    witness = Witness(tmp_path / "w", "witness.example/a", now=lambda: T0 + 50)
    logged(tlog, 1)
    publish(tlog, T0)
    first = witness.poll(client)
    assert first.cosigned
    assert witness.poll(client).cosigned is False  # nothing new: not cosigned twice
    logged(tlog, 2)
    publish(tlog, T0 + 10)
    second = witness.poll(client)
    assert second.cosigned and second.checkpoint.size > first.checkpoint.size
    docs = client.get("/log/cosignatures").json()["cosignatures"]
    assert [(d["witness"], d["known"]) for d in docs] == [("witness.example/a", False)]
    again = Witness(tmp_path / "w", "another name")  # its key and name are kept on disk
    assert again.key == witness.key


def test_a_witness_refuses_a_log_that_rewrote_an_old_leaf_and_keeps_the_evidence(served, tmp_path) -> None:
    client, tlog = served
    witness = Witness(tmp_path / "w", "witness.example/a")
    logged(tlog, 1)
    publish(tlog, T0)
    kept = witness.poll(client).checkpoint
    for key in (TLOG.leaves, TLOG.nodes, TLOG.leafset, TLOG.heads, TLOG.games, TLOG.scanned):
        tlog.redis.delete(key)  # the operator rebuilds the log with another history first
    logged(tlog, 2)
    logged(tlog, 1)
    publish(tlog, T0 + 10)
    with pytest.raises(WitnessRefusal) as refused:
        witness.poll(client)
    assert refused.value.code == FORK and "FORK" in refused.value.message
    assert open_kept(witness) == kept.text  # the old checkpoint stays
    (evidence,) = (tmp_path / "w" / "forks").iterdir()
    assert json.loads(evidence.read_text())["kept"].startswith(kept.text)


def test_a_witness_refuses_two_different_trees_of_one_size(served, tmp_path) -> None:
    client, tlog = served
    witness = Witness(tmp_path / "w", "witness.example/a")
    logged(tlog, 1)
    publish(tlog, T0)
    size = witness.poll(client).checkpoint.size
    ring = tlog.store.run(ensure_keys(T0, "tables.example"))
    forged = cp.sign_checkpoint(ring, size, b"\x07" * 32, T0 + 5)
    tlog.redis.hset(TLOG.checkpoint, mapping={"size": size, "note": forged})
    with pytest.raises(WitnessRefusal) as refused:
        witness.poll(client)
    assert refused.value.code == FORK and "two different trees" in refused.value.message


def test_a_witness_refuses_a_checkpoint_signed_by_a_key_the_service_does_not_publish(
    served, tmp_path
) -> None:
    client, tlog = served
    witness = Witness(tmp_path / "w", "witness.example/a")
    publish(tlog, T0)
    stranger = cp.sign_checkpoint(KeyRing.generate(T0, "tables.example"), 0, b"\x00" * 32, T0)
    tlog.redis.hset(TLOG.checkpoint, "note", stranger)
    with pytest.raises(WitnessRefusal) as refused:
        witness.poll(client)
    assert refused.value.code == BAD_SIGNATURE


def open_kept(witness: Witness) -> str:
    note = witness.kept_note
    assert note is not None
    return note.split("\n\n")[0] + "\n"


def test_a_witness_serves_the_checkpoint_it_kept_and_the_evidence_of_a_fork_which_proves_it_to_anyone(
    served, tmp_path, capsys
) -> None:
    client, tlog = served
    witness = Witness(tmp_path / "w", "witness.example/a")
    logged(tlog, 1)
    publish(tlog, T0)
    size = witness.poll(client).checkpoint.size
    ring = tlog.store.run(ensure_keys(T0, "tables.example"))
    forged = cp.sign_checkpoint(ring, size, b"\x07" * 32, T0 + 5)  # another tree of the same size
    tlog.redis.hset(TLOG.checkpoint, mapping={"size": size, "note": forged})
    with pytest.raises(WitnessRefusal):
        witness.poll(client)
    evidence = serve_evidence(tmp_path / "w", "127.0.0.1:0")
    try:
        base = f"http://127.0.0.1:{evidence.server_address[1]}"
        kept = httpx.get(f"{base}/checkpoint")
        assert kept.status_code == 200 and kept.text == witness.kept_note
        names = httpx.get(f"{base}/forks").json()["forks"]
        assert len(names) == 1
        fork = httpx.get(f"{base}/forks/{names[0]}").json()
        assert fork["kept"] == witness.kept_note and fork["served"] == forged
        assert httpx.get(f"{base}/forks/../key").status_code == 404  # nothing else of its state
    finally:
        evidence.shutdown()
        evidence.server_close()
    # anyone holding the two notes proves the fork: the verifier calls them two trees of one size
    proven = consistency_ground(
        {"log": {"checkpoint": fork["served"]}}, Trusted(fork["kept"]), ring.public_keys()
    )
    assert proven.outcome == "failed" and "the log signed two trees, a fork" in proven.sentence
