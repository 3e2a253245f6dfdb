"""Checkpoints (C2SP tlog-checkpoint as signed notes) and witnesses' cosignatures (tlog-cosignature)."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.fairness.signing import KeyRing, raw_public
from services.fairness.transparency import checkpoint as cp
from services.fairness.transparency import merkle
from services.fairness.transparency.log import TransparencyLog, note_loggable
from services.store.event_store import SyncEventStore
from tests.services.fairness.transparency.support import finished_game, store_entries

T0 = 1_800_000_000


@pytest.fixture
def tlog(fake_redis) -> TransparencyLog:
    return TransparencyLog(SyncEventStore(fake_redis))


def test_a_checkpoint_is_origin_size_base64_root_and_timestamp_signed_by_the_current_key() -> None:
    ring = KeyRing.generate(T0, "tables.example/log")
    root = merkle.root(0, {})
    note = cp.sign_checkpoint(ring, 0, root, T0 + 5)
    text, _, signature = note.partition("\n\n")
    assert text + "\n" == f"tables.example/log\n0\n{base64.b64encode(root).decode()}\ntimestamp {T0 + 5}\n"
    assert signature.startswith("— tables.example/log ")
    checkpoint, key = cp.open_checkpoint(note, ring.public_keys())
    assert (checkpoint.size, checkpoint.root, key.key_id) == (0, root, ring.current.key_id)


def test_a_checkpoint_signed_by_a_key_the_verifier_does_not_know_is_refused() -> None:
    ring, stranger = KeyRing.generate(T0, "tables.example"), KeyRing.generate(T0, "tables.example")
    note = cp.sign_checkpoint(stranger, 3, b"\x01" * 32, T0)
    with pytest.raises(cp.CheckpointError) as refused:
        cp.open_checkpoint(note, ring.public_keys())
    assert refused.value.code == "checkpoint_key_unknown"


def test_a_checkpoint_signed_by_a_key_outside_its_validity_period_is_refused() -> None:
    ring = KeyRing.generate(T0, "tables.example")
    rotated = ring.rotate(T0 + 1000, overlap=60)  # the first key is valid until T0 + 1060
    old = KeyRing((rotated.keys[0],))
    late = cp.sign_checkpoint(old, 3, b"\x01" * 32, T0 + 2000)
    with pytest.raises(cp.CheckpointError) as refused:
        cp.open_checkpoint(late, rotated.public_keys())
    assert refused.value.code == "checkpoint_key_expired"
    in_time = cp.sign_checkpoint(old, 3, b"\x01" * 32, T0 + 500)
    assert cp.open_checkpoint(in_time, rotated.public_keys())[0].size == 3


def test_a_checkpoint_whose_text_was_changed_after_signing_is_refused() -> None:
    ring = KeyRing.generate(T0, "tables.example")
    note = cp.sign_checkpoint(ring, 3, b"\x01" * 32, T0)
    with pytest.raises(cp.CheckpointError) as refused:
        cp.open_checkpoint(note.replace("\n3\n", "\n4\n", 1), ring.public_keys())
    assert refused.value.code == "checkpoint_forged"


def test_a_cosignature_is_the_c2sp_v1_line_over_time_and_the_checkpoint_text() -> None:
    witness = Ed25519PrivateKey.generate()
    text = "tables.example\n3\n" + base64.b64encode(b"\x01" * 32).decode() + f"\ntimestamp {T0}\n"
    line = cp.cosign(text, "witness.example/w1", witness, T0 + 7)
    parsed = cp.parse_cosignature(line)
    key = cp.witness_key("witness.example/w1", raw_public(witness.public_key()))
    assert parsed.timestamp == T0 + 7 and parsed.key_id == key.key_id
    assert cp.parse_witness_vkey(key.vkey) == key
    assert cp.verify_cosignature(text, parsed, key)
    witness.public_key().verify(parsed.signature, f"cosignature/v1\ntime {T0 + 7}\n{text}".encode())
    assert not cp.verify_cosignature(text.replace("\n3\n", "\n4\n"), parsed, key)


def test_the_log_publishes_checkpoints_that_never_go_back_and_keeps_witness_cosignatures(
    tlog, fake_redis
) -> None:
    ring = KeyRing.generate(T0, "tables.example")
    empty = tlog.publish(ring, T0)
    assert cp.open_checkpoint(empty, ring.public_keys())[0].size == 0
    game_id, g = finished_game(11)
    store_entries(fake_redis, game_id, g.entries)
    note_loggable(fake_redis, game_id, g.entries[-1].version)
    tlog.append_pending()
    note = tlog.publish(ring, T0 + 10)
    checkpoint, _ = cp.open_checkpoint(note, ring.public_keys())
    assert checkpoint.size == tlog.size() and checkpoint.root == tlog.root(checkpoint.size)
    assert tlog.publish(ring, T0 + 20) == note  # nothing new: the same checkpoint
    old_root = cp.open_checkpoint(empty, ring.public_keys())[0].root
    assert merkle.verify_consistency(
        0, checkpoint.size, tlog.consistency(0, checkpoint.size), old_root, checkpoint.root
    )

    known_key, stranger_key = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    known = cp.witness_key("w.example/one", raw_public(known_key.public_key()))
    stranger = cp.witness_key("w.example/two", raw_public(stranger_key.public_key()))
    line = cp.cosign(checkpoint.text, known.name, known_key, T0 + 30)
    assert tlog.add_cosignature(note, line, [known])["known"] is True
    other = cp.cosign(checkpoint.text, stranger.name, stranger_key, T0 + 31)
    with pytest.raises(cp.CheckpointError) as refused:
        tlog.add_cosignature(note, other, [known])
    assert refused.value.code == "cosignature_invalid"  # an unknown witness must send its key
    assert tlog.add_cosignature(note, other, [known], vkey=stranger.vkey)["known"] is False
    forged = cp.cosign(checkpoint.text.replace("timestamp", "timestamp 1"), known.name, known_key, T0)
    with pytest.raises(cp.CheckpointError):
        tlog.add_cosignature(note, forged, [known])
    assert [d["witness"] for d in tlog.cosignatures(note)] == [known.name, stranger.name]
    unpublished = cp.sign_checkpoint(ring, 99, b"\x02" * 32, T0)
    with pytest.raises(cp.CheckpointError) as refused:
        tlog.add_cosignature(
            unpublished, cp.cosign(unpublished.split("\n\n")[0] + "\n", known.name, known_key, T0), [known]
        )
    assert refused.value.code == "checkpoint_unknown"
    proofs = tlog.proofs_for_game(game_id)
    assert proofs["checkpoint"].endswith(line + "\n") and proofs["size"] == checkpoint.size
    assert [leaf["version"] for leaf in proofs["leaves"]] == [h.version for _, h in tlog.leaves_of(game_id)]
