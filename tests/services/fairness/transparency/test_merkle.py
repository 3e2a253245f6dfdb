"""The Merkle tree against RFC 9162 section 2.1, written out literally over the leaf list.

Hypothesis draws sizes and indices (replay a failure with ``--hypothesis-seed`` or the printed blob);
the powers of two and their neighbours, where the RFC's recursion changes shape, are always tried."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from services.fairness.transparency import merkle

# -- RFC 9162 2.1.1, 2.1.3.1, 2.1.4.1 as written ---------------------------------------------------


def rfc_mth(leaves: list[bytes]) -> bytes:
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return hashlib.sha256(b"\x00" + leaves[0]).digest()
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + rfc_mth(leaves[:k]) + rfc_mth(leaves[k:])).digest()


def rfc_path(m: int, leaves: list[bytes]) -> list[bytes]:
    if len(leaves) == 1:
        return []
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    if m < k:
        return [*rfc_path(m, leaves[:k]), rfc_mth(leaves[k:])]
    return [*rfc_path(m - k, leaves[k:]), rfc_mth(leaves[:k])]


def rfc_subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [rfc_mth(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*rfc_subproof(m, leaves[:k], whole), rfc_mth(leaves[k:])]
    return [*rfc_subproof(m - k, leaves[k:], False), rfc_mth(leaves[:k])]


def data_of(i: int) -> bytes:
    return f"leaf {i}".encode()


def grown(size: int, steps: int = 3) -> dict[merkle.Node, bytes]:
    """A tree of ``size`` leaves appended in a few uneven batches, as the log appends them."""
    nodes: dict[merkle.Node, bytes] = {}
    done = 0
    while done < size:
        batch = min(size - done, max(1, size // steps) + done % 3)
        hashes = [merkle.leaf_hash(data_of(i)) for i in range(done, done + batch)]
        frontier = {n: nodes[n] for n in merkle.frontier(done)}
        nodes.update(merkle.append(done, frontier, hashes))
        done += batch
    return nodes


EDGES = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65]
sizes = st.one_of(st.sampled_from(EDGES), st.integers(1, 300))


@settings(max_examples=150, deadline=None)
@given(size=sizes)
@example(size=1)
@example(size=64)
def test_the_root_of_a_tree_grown_in_batches_is_the_rfc_merkle_tree_hash(size: int) -> None:
    nodes = grown(size)
    leaves = [data_of(i) for i in range(size)]
    assert merkle.root(size, nodes) == rfc_mth(leaves)
    for past in {1, size // 2 or 1, size - 1 or 1}:
        assert merkle.root(past, nodes) == rfc_mth(leaves[:past])


def test_the_empty_tree_has_the_hash_of_the_empty_string() -> None:
    assert merkle.root(0, {}) == rfc_mth([]) == hashlib.sha256(b"").digest()


@settings(max_examples=200, deadline=None)
@given(size=sizes, data=st.data())
@example(size=8, data=None)
def test_inclusion_proofs_are_the_rfc_path_and_verify_for_every_past_size(size: int, data) -> None:
    nodes = grown(size)
    leaves = [data_of(i) for i in range(size)]
    past = size if data is None else data.draw(st.integers(1, size), label="past size")
    index = past - 1 if data is None else data.draw(st.integers(0, past - 1), label="index")
    proof = merkle.inclusion_proof(index, past, nodes)
    assert proof == rfc_path(index, leaves[:past])
    assert set(merkle.needed_inclusion(index, past)) <= set(nodes)
    root = rfc_mth(leaves[:past])
    assert merkle.verify_inclusion(merkle.leaf_hash(leaves[index]), index, past, proof, root)
    assert not merkle.verify_inclusion(merkle.leaf_hash(b"another head"), index, past, proof, root)
    if past > 1:
        mine = merkle.leaf_hash(leaves[index])
        assert not merkle.verify_inclusion(mine, (index + 1) % past, past, proof, root)
        assert not merkle.verify_inclusion(mine, index, past, proof[:-1], root)


@settings(max_examples=200, deadline=None)
@given(new=sizes, data=st.data())
@example(new=16, data=None)
def test_consistency_proofs_are_the_rfc_proof_and_verify_between_any_two_sizes(new: int, data) -> None:
    nodes = grown(new)
    leaves = [data_of(i) for i in range(new)]
    old = 8 if data is None else data.draw(st.integers(1, new), label="old size")
    proof = merkle.consistency_proof(old, new, nodes)
    assert proof == (rfc_subproof(old, leaves, True) if old < new else [])
    old_root, new_root = rfc_mth(leaves[:old]), rfc_mth(leaves)
    assert merkle.verify_consistency(old, new, proof, old_root, new_root)
    if old < new:
        assert not merkle.verify_consistency(old, new, proof, old_root, rfc_mth([*leaves[:-1], b"x"]))
        assert not merkle.verify_consistency(old, new, proof[:-1], old_root, new_root)


@settings(max_examples=120, deadline=None)
@given(new=st.integers(2, 200), data=st.data())
def test_a_log_that_rewrote_an_old_leaf_is_not_consistent_with_its_earlier_checkpoint(new: int, data) -> None:
    old = data.draw(st.integers(1, new - 1), label="old size")
    rewritten = data.draw(st.integers(0, old - 1), label="rewritten leaf")
    leaves = [data_of(i) for i in range(new)]
    forked = list(leaves)
    forked[rewritten] = b"a different head"
    proof = rfc_subproof(old, forked, True)
    assert not merkle.verify_consistency(old, new, proof, rfc_mth(leaves[:old]), rfc_mth(forked))


@pytest.mark.parametrize("old,new", [(0, 0), (0, 5), (4, 4)])
def test_consistency_from_the_empty_tree_or_to_the_same_size_needs_no_proof(old: int, new: int) -> None:
    nodes = grown(new) if new else {}
    root = merkle.root(new, nodes)
    assert merkle.consistency_proof(old, new, nodes) == []
    assert merkle.verify_consistency(old, new, [], merkle.root(old, nodes), root)


def test_proofs_outside_the_tree_are_refused() -> None:
    nodes = grown(5)
    with pytest.raises(ValueError):
        merkle.inclusion_proof(5, 5, nodes)
    with pytest.raises(ValueError):
        merkle.consistency_proof(6, 5, nodes)
    assert not merkle.verify_inclusion(merkle.leaf_hash(data_of(0)), 5, 5, [], merkle.root(5, nodes))
    assert not merkle.verify_consistency(3, 2, [], merkle.root(3, nodes), merkle.root(2, nodes))
