"""RFC 9162 Merkle trees (section 2.1): hashes, inclusion and consistency proofs and their checks.

Written here rather than taken from PyPI: pymerkle (the one maintained RFC 9162 library) computes a
proof from the leaves themselves (a past root reads every leaf below it), keeps its own proof format
and pins its dependency exactly; the log here keeps the hash of every complete subtree
(``nodes``: ``(level, index)`` -> hash, the subtree over leaves ``[index * 2**level,
(index + 1) * 2**level)``), so a root, an inclusion proof or a consistency proof at any past size
reads O(log n) stored hashes in one round trip. The proofs are the RFC's PATH and PROOF, as lists of
32-byte hashes, and the checks are the RFC's verification algorithms (2.1.3.2, 2.1.4.2).

Pure: no I/O. Every function that reads the tree takes a ``Nodes`` mapping; ``needed_*`` name the
stored hashes a computation reads, so a store fetches exactly those first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence

Node = tuple[int, int]  # (level, index)
Nodes = Mapping[Node, bytes]

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (``n`` > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def _perfect(lo: int, hi: int) -> Node | None:
    width = hi - lo
    if width & (width - 1) == 0 and lo % width == 0:
        level = width.bit_length() - 1
        return level, lo >> level
    return None


def _mth(lo: int, hi: int, get: Callable[[Node], bytes]) -> bytes:
    """MTH(D[lo:hi]) from stored complete subtrees (``lo`` is aligned as in the RFC's recursion)."""
    perfect = _perfect(lo, hi)
    if perfect is not None:
        return get(perfect)
    k = _split(hi - lo)
    return node_hash(_mth(lo, lo + k, get), _mth(lo + k, hi, get))


def _path(m: int, lo: int, hi: int, get: Callable[[Node], bytes]) -> list[bytes]:
    if hi - lo == 1:
        return []
    k = _split(hi - lo)
    if m < k:
        return [*_path(m, lo, lo + k, get), _mth(lo + k, hi, get)]
    return [*_path(m - k, lo + k, hi, get), _mth(lo, lo + k, get)]


def _subproof(m: int, lo: int, hi: int, whole: bool, get: Callable[[Node], bytes]) -> list[bytes]:
    n = hi - lo
    if m == n:
        return [] if whole else [_mth(lo, hi, get)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, lo, lo + k, whole, get), _mth(lo + k, hi, get)]
    return [*_subproof(m - k, lo + k, hi, False, get), _mth(lo, lo + k, get)]


def _recorded(run: Callable[[Callable[[Node], bytes]], object]) -> list[Node]:
    """The stored hashes ``run`` reads (its shape never depends on the hash values)."""
    seen: dict[Node, None] = {}

    def get(node: Node) -> bytes:
        seen[node] = None
        return EMPTY_ROOT

    run(get)
    return list(seen)


def _getter(nodes: Nodes) -> Callable[[Node], bytes]:
    def get(node: Node) -> bytes:
        try:
            return nodes[node]
        except KeyError:
            raise LookupError(f"the tree has no stored hash at level {node[0]}, index {node[1]}") from None

    return get


def needed_root(size: int) -> list[Node]:
    return [] if size == 0 else _recorded(lambda get: _mth(0, size, get))


def root(size: int, nodes: Nodes) -> bytes:
    """MTH of the first ``size`` leaves."""
    return EMPTY_ROOT if size == 0 else _mth(0, size, _getter(nodes))


def _check_index(index: int, size: int) -> None:
    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size} leaves")


def needed_inclusion(index: int, size: int) -> list[Node]:
    _check_index(index, size)
    return _recorded(lambda get: _path(index, 0, size, get))


def inclusion_proof(index: int, size: int, nodes: Nodes) -> list[bytes]:
    """PATH(index, D[size])."""
    _check_index(index, size)
    return _path(index, 0, size, _getter(nodes))


def _check_sizes(old: int, new: int) -> None:
    if not 0 <= old <= new:
        raise ValueError(f"no consistency proof from size {old} to size {new}")


def needed_consistency(old: int, new: int) -> list[Node]:
    _check_sizes(old, new)
    if old in (0, new):
        return []
    return _recorded(lambda get: _subproof(old, 0, new, True, get))


def consistency_proof(old: int, new: int, nodes: Nodes) -> list[bytes]:
    """PROOF(old, D[new]); empty when ``old`` is 0 or ``new`` (nothing to prove)."""
    _check_sizes(old, new)
    if old in (0, new):
        return []
    return _subproof(old, 0, new, True, _getter(nodes))


def frontier(size: int) -> list[Node]:
    """The complete subtrees left of the next leaf: what ``append`` needs of a tree of ``size``."""
    nodes = []
    start = 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size & (1 << level):
            nodes.append((level, start >> level))
            start += 1 << level
    return nodes


def append(size: int, nodes: Nodes, leaf_hashes: Iterable[bytes]) -> dict[Node, bytes]:
    """The complete subtrees that appending ``leaf_hashes`` to a tree of ``size`` creates, given at
    least ``frontier(size)`` in ``nodes``."""
    known = dict(nodes)
    created: dict[Node, bytes] = {}
    for index, digest in enumerate(leaf_hashes, start=size):
        level, at, current = 0, index, digest
        created[(0, at)] = known[(0, at)] = current
        while at & 1:
            current = node_hash(known[(level, at - 1)], current)
            level, at = level + 1, at >> 1
            created[(level, at)] = known[(level, at)] = current
    return created


# -- verification (RFC 9162 2.1.3.2 and 2.1.4.2): no tree at hand, only hashes -----------------------


def verify_inclusion(
    leaf: bytes, index: int, size: int, proof: Sequence[bytes], expected_root: bytes
) -> bool:
    """True when ``proof`` shows the leaf hash ``leaf`` at ``index`` in the tree of ``size`` leaves
    with root ``expected_root``."""
    if not 0 <= index < size:
        return False
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == expected_root


def verify_consistency(
    old_size: int, new_size: int, proof: Sequence[bytes], old_root: bytes, new_root: bytes
) -> bool:
    """True when ``proof`` shows that the tree of ``new_size`` leaves with root ``new_root`` extends
    the tree of ``old_size`` leaves with root ``old_root`` (an append-only log, no fork)."""
    if not 0 <= old_size <= new_size:
        return False
    if old_size == new_size:
        return not proof and old_root == new_root
    if old_size == 0:
        return not proof  # the empty tree is a prefix of every tree
    if not proof:
        return False
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is the first subtree
        path.insert(0, old_root)
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn & 1 == 0 and fn != 0:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return sn == 0 and fr == old_root and sr == new_root
