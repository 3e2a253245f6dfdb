"""The public log of game heads in Redis: queued by the projection workers, appended in batches by
the log appender, read for proofs (keys: ``services.store.keys.TLOG``, one Redis Cluster slot).

Off the command path: a projection that sees something worth logging (a table created, a round's
seed revealed, the game over) only records the game in ``pending`` (``note_loggable``, ZADD GT of the
version it saw). The appender (``TransparencyLog.append_pending``, run by the worker pool's
transparency thread, ``workers.transparency``) takes a batch of those games, reads each stream after
the version it last scanned, picks the heads to log (``services.transparency.leaves``), computes the
new leaf and subtree hashes in Python (Lua has no SHA-256) and hands them to one script
(``lua/tlog_append.lua``) which appends them only if the tree still has the size they were computed
against. A leaf's identity is its content (``leafset``) and a game has one head per version
(``heads``): a candidate already in either is dropped before the batch is built, and the size check
makes the whole batch land at most once. An appender killed at any point leaves either nothing or
the whole batch; the games stay pending until a script has recorded them as scanned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import redis
import structlog

from services.history.folding import Folded
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG
from services.store.requests import Call, Operation
from services.transparency import leaves as leaf_format
from services.transparency import merkle
from services.transparency.leaves import Head

log = structlog.get_logger("tablestream.transparency")

APPEND_BATCH = 100  # games per append
MAX_RACES = 20
_SCRIPT = (Path(__file__).parent.parent / "store" / "lua" / "tlog_append.lua").read_text(encoding="utf-8")


def node_field(node: merkle.Node) -> str:
    return f"{node[0]}:{node[1]}"


def note_loggable(client: redis.Redis | redis.RedisCluster, game_id: str, version: int) -> None:
    """Queue ``game_id`` for the appender: something at or before ``version`` is worth logging."""
    client.zadd(TLOG.pending, {game_id: version}, gt=True)


def loggable(before: Folded | None, after: Folded) -> bool:
    """Whether the events from ``before`` (the projector's cached table, ``None``: unknown) to
    ``after`` may hold a head to log: a table seen for the first time, a round over, a round's seed
    revealed, a status changed (the game over). A stale ``before`` only makes this say yes more often."""
    if before is None:
        return True
    return before.state.status != after.state.status or len(before.state.revealed) != len(
        after.state.revealed
    )


def note_loggable_op(game_id: str, version: int) -> Operation[None]:
    """``note_loggable`` as a store operation (the projector's, before it writes the views: a
    projection that dies after the write has noted the game already)."""
    yield Call(("ZADD", TLOG.pending, "GT", version, game_id))


class LeafNotLogged(LookupError):
    """A game with no head in the log (yet): the API answers 404 ``log_leaf_not_found``."""


class TransparencyLog:
    """The log over one store (its Redis client holds the ``{tlog}`` slot)."""

    def __init__(self, store: SyncEventStore) -> None:
        self.store = store
        self.redis = store.redis
        self._append = self.redis.register_script(_SCRIPT)

    # -- reading ---------------------------------------------------------------------------------

    def size(self) -> int:
        return int(self.redis.llen(TLOG.leaves))

    def nodes(self, needed: Iterable[merkle.Node]) -> dict[merkle.Node, bytes]:
        wanted = list(dict.fromkeys(needed))
        if not wanted:
            return {}
        values = self.redis.hmget(TLOG.nodes, [node_field(n) for n in wanted])
        return {node: value for node, value in zip(wanted, values, strict=True) if value is not None}

    def root(self, size: int) -> bytes:
        return merkle.root(size, self.nodes(merkle.needed_root(size)))

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return merkle.inclusion_proof(index, size, self.nodes(merkle.needed_inclusion(index, size)))

    def consistency(self, old: int, new: int) -> list[bytes]:
        return merkle.consistency_proof(old, new, self.nodes(merkle.needed_consistency(old, new)))

    def leaf_indexes(self, game_id: str) -> list[int]:
        raw = self.redis.hget(TLOG.games, game_id)
        return [int(i) for i in raw.split()] if raw else []

    def leaves_of(self, game_id: str) -> list[tuple[int, Head]]:
        """The game's leaves, in the order logged, with their indexes."""
        indexes = self.leaf_indexes(game_id)
        pipe = self.redis.pipeline(transaction=False)
        for index in indexes:
            pipe.lindex(TLOG.leaves, index)
        return [
            (index, leaf_format.decode(data)) for index, data in zip(indexes, pipe.execute(), strict=True)
        ]

    # -- appending -------------------------------------------------------------------------------

    def append_pending(self, batch: int = APPEND_BATCH) -> int:
        """Append the heads of up to ``batch`` pending games; returns how many leaves it appended.
        Games still pending after this (more than ``batch``) wait for the next call."""
        for _ in range(MAX_RACES):
            games = [
                g.decode() if isinstance(g, bytes) else g
                for g in self.redis.zrange(TLOG.pending, 0, batch - 1)
            ]
            if not games:
                return 0
            outcome = self._append_games(sorted(games))
            if outcome is not None:
                return outcome
        raise RuntimeError("the log appender kept losing the race for the tree's size")

    def _append_games(self, games: Sequence[str]) -> int | None:
        size = self.size()  # read first: a batch computed against it lands only if no one appended since
        scanned_raw = self.redis.hmget(TLOG.scanned, list(games))
        candidates: list[Head] = []
        scanned: list[tuple[str, int]] = []
        for game_id, raw in zip(games, scanned_raw, strict=True):
            after = int(raw) if raw is not None else 0
            entries = self.store.read(game_id, after=after)
            if not entries:
                scanned.append((game_id, after))
                continue
            heads, _ended = leaf_format.logged_heads(game_id, entries)
            candidates += heads
            scanned.append((game_id, entries[-1].version))
        fresh = self._fresh(candidates)
        datas = [leaf_format.encode(head) for head in fresh]
        hashes = [merkle.leaf_hash(data) for data in datas]
        frontier = self.nodes(merkle.frontier(size))
        created = merkle.append(size, frontier, hashes)
        args: list[Any] = [size, len(fresh), len(created), len(scanned)]
        for head, data, digest in zip(fresh, datas, hashes, strict=True):
            args += [data, digest, f"{head.game_id}:{head.version}", head.game_id]
        for node, digest in created.items():
            args += [node_field(node), digest]
        for game_id, version in scanned:
            args += [game_id, version]
        keys = [TLOG.leaves, TLOG.nodes, TLOG.leafset, TLOG.heads, TLOG.games, TLOG.scanned, TLOG.pending]
        result = int(self._append(keys=keys, args=args))
        if result < 0:
            return None
        if fresh:
            log.info("log_appended", leaves=len(fresh), size=result)
        return len(fresh)

    def _fresh(self, candidates: Sequence[Head]) -> list[Head]:
        """The candidates not in the log: by content, and by game and version (a second, different
        head for a version already logged is refused and reported: it would be a fork)."""
        if not candidates:
            return []
        datas = [leaf_format.encode(h) for h in candidates]
        in_set = self.redis.hmget(TLOG.leafset, [merkle.leaf_hash(d) for d in datas])
        at_version = self.redis.hmget(TLOG.heads, [f"{h.game_id}:{h.version}" for h in candidates])
        fresh: list[Head] = []
        seen: set[tuple[str, int]] = set()
        for head, known, taken in zip(candidates, in_set, at_version, strict=True):
            if known is not None or (head.game_id, head.version) in seen:
                continue
            if taken is not None:
                log.error("log_head_conflict", game_id=head.game_id, version=head.version, leaf=int(taken))
                continue
            seen.add((head.game_id, head.version))
            fresh.append(head)
        return fresh
