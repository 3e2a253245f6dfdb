"""The public log of game heads in Redis: queued by the projection workers, appended in batches by
the log appender, read for proofs (keys: ``services.store.keys.TLOG``, one Redis Cluster slot).

Off the command path: a projection that sees something worth logging (a table created, a round's
seed revealed, the game over) only records the game in ``pending`` (``note_loggable``, ZADD GT of
the version it saw). The appender (``TransparencyLog.append_pending``, run by the worker pool's
transparency thread, ``workers.transparency``) takes a batch of those games, reads each stream after
the version it last scanned, picks the heads to log (``services.fairness.transparency.leaves``) and
the chat as it stood at each (``leaves.chat_head_at``: the chat's leaves at the game's earlier heads
too, the first time), computes the new leaf and subtree hashes in Python (Lua has no SHA-256) and
hands them to one script (``lua/tlog_append.lua``) which appends them only if the tree still has the
size they were computed against. A leaf's identity is its content (``leafset``) and a game has one
head per version (``heads``): a candidate already in either is dropped before the batch is built,
and the size check makes the whole batch land at most once. An appender killed at any point leaves
either nothing or the whole batch; the games stay pending until a script has recorded them as
scanned.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import structlog

from services.fairness.signing import KeyRing, parse_note
from services.fairness.transparency import leaves as leaf_format
from services.fairness.transparency import merkle
from services.fairness.transparency.checkpoint import (
    CheckpointError,
    WitnessKey,
    open_checkpoint,
    parse_cosignature,
    parse_text,
    parse_witness_vkey,
    sign_checkpoint,
    text_digest,
    verify_cosignature,
)
from services.fairness.transparency.leaves import Head
from services.fairness.transparency.published import PublishedCheckpoint
from services.history.folding import Folded
from services.store.chat import stored_bytes as chat_stored_bytes
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG, tlog_cosignatures_key, tlog_cosigners_key
from services.store.requests import Call, Operation, Pipelined

log = structlog.get_logger("tablestream.transparency")

APPEND_BATCH = 100  # games per append
MAX_RACES = 20
_LUA = Path(__file__).parents[2] / "store" / "lua"
_SCRIPT = (_LUA / "tlog_append.lua").read_text(encoding="utf-8")
_PUBLISH = (_LUA / "tlog_checkpoint.lua").read_text(encoding="utf-8")
PROOFS_FORMAT = "tablestream-log-proofs/1"
MAX_UNKNOWN_COSIGNATURES = 16  # per checkpoint, from witnesses the service is not configured with


def node_field(node: merkle.Node) -> str:
    return f"{node[0]}:{node[1]}"


def note_loggable(client: Any, game_id: str, version: int) -> None:
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


# -- reads, as store operations (the API runs them on its async store, the workers on the sync one) --


def _text(raw: bytes | str | None) -> str | None:
    return raw.decode() if isinstance(raw, bytes) else raw


def size_op() -> Operation[int]:
    return int((yield Call(("LLEN", TLOG.leaves))))


def nodes_op(needed: Iterable[merkle.Node]) -> Operation[dict[merkle.Node, bytes]]:
    wanted = list(dict.fromkeys(needed))
    if not wanted:
        return {}
    values = yield Call(("HMGET", TLOG.nodes, *[node_field(n) for n in wanted]))
    return {node: value for node, value in zip(wanted, values, strict=True) if value is not None}


def root_op(size: int) -> Operation[bytes]:
    return merkle.root(size, (yield from nodes_op(merkle.needed_root(size))))


def inclusion_op(index: int, size: int) -> Operation[list[bytes]]:
    nodes = yield from nodes_op(merkle.needed_inclusion(index, size))
    return merkle.inclusion_proof(index, size, nodes)


def consistency_op(old: int, new: int) -> Operation[list[bytes]]:
    nodes = yield from nodes_op(merkle.needed_consistency(old, new))
    return merkle.consistency_proof(old, new, nodes)


def leaves_of_op(game_id: str) -> Operation[list[tuple[int, Head]]]:
    """The game's leaves, in the order logged, with their indexes."""
    raw = _text((yield Call(("HGET", TLOG.games, game_id))))
    indexes = [int(i) for i in raw.split()] if raw else []
    if not indexes:
        return []
    datas = yield Pipelined(tuple(Call(("LINDEX", TLOG.leaves, i)) for i in indexes))
    return [(index, leaf_format.decode(data)) for index, data in zip(indexes, datas, strict=True)]


def latest_checkpoint_op() -> Operation[str | None]:
    return _text((yield Call(("HGET", TLOG.checkpoint, "note"))))


def checkpoint_at_op(size: int) -> Operation[str | None]:
    """The first checkpoint published at ``size`` (``None``: none was)."""
    return _text((yield Call(("HGET", TLOG.checkpoints, size))))


def cosignatures_op(note: str) -> Operation[list[dict[str, Any]]]:
    """The cosignatures received for checkpoint ``note`` (configured witnesses first)."""
    text, _ = parse_note(note)
    raw = yield Call(("HGETALL", tlog_cosignatures_key(text_digest(text))))
    docs = [json.loads(value) for value in (raw.values() if isinstance(raw, dict) else raw[1::2])]
    return sorted(docs, key=lambda d: (not d["known"], d["witness"]))


def cosigned_op(note: str) -> Operation[str]:
    """``note`` with the cosignature lines of the configured witnesses that cosigned it."""
    docs = yield from cosignatures_op(note)
    return note + "".join(doc["line"] + "\n" for doc in docs if doc["known"])


def proof_document(index: int, head: Head, proof: Sequence[bytes]) -> dict[str, Any]:
    return {
        "index": index,
        "version": head.version,
        "hash": head.hash,
        "leaf": base64.b64encode(leaf_format.encode(head)).decode(),
        "proof": [base64.b64encode(p).decode() for p in proof],
    }


def proofs_for_game_op(game_id: str, size: int | None = None) -> Operation[dict[str, Any]]:
    """The inclusion proofs of the game's leaves against the latest checkpoint (or the one first
    published at ``size``): what exports and dispute bundles carry (``FORMAT``). Leaves appended
    after that checkpoint are listed under ``pending`` (versions only), without a proof yet. Where the
    log holds the game's chat (``leaves.chat_head_at``), its proven leaves are under ``chat`` and the
    versions of the others under ``chat_pending``; a game logged before chat was has neither.
    ``checkpoint`` is ``None`` while the log has published none."""
    note = (yield from latest_checkpoint_op()) if size is None else (yield from checkpoint_at_op(size))
    leaves = yield from leaves_of_op(game_id)
    if note is None:
        return {
            "format": PROOFS_FORMAT,
            "checkpoint": None,
            "size": 0,
            "leaves": [],
            "pending": [h.version for _, h in leaves],
        }
    checkpoint = parse_text(parse_note(note)[0])
    cosigned = yield from cosigned_op(note)
    proven, pending, chat = [], [], []
    for index, head in leaves:
        if index < checkpoint.size:
            proven.append(proof_document(index, head, (yield from inclusion_op(index, checkpoint.size))))
        else:
            pending.append(head.version)
    chat_pending = []
    chat_leaves = yield from leaves_of_op(leaf_format.chat_stream(game_id))
    for index, head in chat_leaves:
        if index < checkpoint.size:
            chat.append(proof_document(index, head, (yield from inclusion_op(index, checkpoint.size))))
        else:
            chat_pending.append(head.version)
    section = {
        "format": PROOFS_FORMAT,
        "checkpoint": cosigned,
        "size": checkpoint.size,
        "leaves": proven,
        "pending": pending,
    }
    return {**section, "chat": chat, "chat_pending": chat_pending} if chat_leaves else section


def next_checkpoint_due(now_ms: int, checkpoint_seconds: float, append_seconds: float) -> int:
    """When (unix seconds) a checkpoint holding every head queued by ``now_ms`` is due at the latest:
    the appender takes a queued head within a pass (``append_seconds``), and the publisher, which runs
    in those passes, signs one every ``checkpoint_seconds`` (``workers.transparency``)."""
    return math.ceil(now_ms / 1000 + checkpoint_seconds + 2 * append_seconds)


def with_next_checkpoint(proofs: dict[str, Any], due: int) -> dict[str, Any]:
    """``proofs`` saying when the next checkpoint is due (``next_checkpoint``, unix seconds): what a
    reader of a head not yet in a checkpoint is told to wait for before asking again."""
    return {**proofs, "next_checkpoint": due}


def log_complete(proofs: dict[str, Any], head: int) -> bool:
    """Whether ``proofs`` prove every logged head of the game up to its final ``head`` version."""
    return (
        proofs["checkpoint"] is not None
        and not proofs["pending"]
        and any(leaf["version"] == head for leaf in proofs["leaves"])
    )


def proofs_for_game(store: SyncEventStore | Any, game_id: str, size: int | None = None) -> Any:
    """``proofs_for_game_op`` on ``store`` (a ``SyncEventStore``: the dict; an async ``EventStore``:
    an awaitable of it)."""
    return store.run(proofs_for_game_op(game_id, size))


def add_cosignature_op(
    note: str, line: str, witnesses: Sequence[WitnessKey], vkey: str | None = None, network: str = ""
) -> Operation[dict[str, Any]]:
    """Record a witness's cosignature of a checkpoint this log published. A configured witness's
    is verified against its key; another's against the ``vkey`` it sends, and kept marked
    ``known: false``: at most ``MAX_UNKNOWN_COSIGNATURES`` per checkpoint, and one unknown witness
    per client ``network`` (``services.api.http.network_of``; kept as a digest), so that one client
    cannot take every place with keys it made up. ``CheckpointError`` otherwise (its code names the
    reason)."""
    try:
        text = parse_note(note)[0] if "\n\n" in note else note
    except ValueError:
        raise CheckpointError("checkpoint_malformed", "The checkpoint is not a signed note.") from None
    checkpoint = parse_text(text)
    published = yield from checkpoint_at_op(checkpoint.size)
    latest = yield from latest_checkpoint_op()
    if not any(n is not None and parse_note(n)[0] == text for n in (published, latest)):
        raise CheckpointError("checkpoint_unknown", "This log never published that checkpoint.")
    cosignature = parse_cosignature(line)
    known = {(w.name, w.key_id): w for w in witnesses}
    key = known.get((cosignature.name, cosignature.key_id))
    is_known = key is not None
    if key is None:
        if vkey is None:
            raise CheckpointError(
                "cosignature_invalid", "An unknown witness sends its key (vkey) with its cosignature."
            )
        key = parse_witness_vkey(vkey)
    if not verify_cosignature(text, cosignature, key):
        raise CheckpointError(
            "cosignature_invalid", "The cosignature does not verify with the witness's key."
        )
    digest = text_digest(text)
    hash_key = tlog_cosignatures_key(digest)
    field = f"{key.name} {key.key_id:08x}"
    calls: list[Call] = []
    if not is_known:
        from_network = hashlib.sha256(f"tablestream-cosigner:{network}".encode()).hexdigest()[:32]
        present, count, added = yield Pipelined(
            (
                Call(("HEXISTS", hash_key, field)),
                Call(("HLEN", hash_key)),
                Call(("HGET", tlog_cosigners_key(digest), from_network)),
            )
        )
        if not present and int(count) >= MAX_UNKNOWN_COSIGNATURES:
            raise CheckpointError(
                "cosignatures_full",
                "This checkpoint holds as many unknown witnesses' cosignatures as it keeps.",
            )
        if added is not None and _text(added) != field:
            raise CheckpointError(
                "cosignature_from_network_taken",
                "Your network already added an unknown witness's cosignature to this checkpoint; "
                "a witness the service is configured with is not limited so.",
            )
        calls.append(Call(("HSET", tlog_cosigners_key(digest), from_network, field)))
    doc = {
        "witness": key.name,
        "line": cosignature.line,
        "known": is_known,
        "vkey": key.vkey,
        "timestamp": cosignature.timestamp,
    }
    yield Pipelined((Call(("HSET", hash_key, field, json.dumps(doc))), *calls))
    return doc


class TransparencyLog:
    """The log over one synchronous store (its Redis client holds the ``{tlog}`` slot): the
    appender, the checkpoint publisher, and the reads above run at once."""

    def __init__(self, store: SyncEventStore) -> None:
        self.store = store
        self.redis = store.redis
        self._append = self.redis.register_script(_SCRIPT)
        self._publish = self.redis.register_script(_PUBLISH)

    def size(self) -> int:
        return self.store.run(size_op())

    def nodes(self, needed: Iterable[merkle.Node]) -> dict[merkle.Node, bytes]:
        return self.store.run(nodes_op(needed))

    def root(self, size: int) -> bytes:
        return self.store.run(root_op(size))

    def inclusion(self, index: int, size: int) -> list[bytes]:
        return self.store.run(inclusion_op(index, size))

    def consistency(self, old: int, new: int) -> list[bytes]:
        return self.store.run(consistency_op(old, new))

    def leaves_of(self, game_id: str) -> list[tuple[int, Head]]:
        return self.store.run(leaves_of_op(game_id))

    def latest_checkpoint(self) -> str | None:
        return self.store.run(latest_checkpoint_op())

    def checkpoint_at(self, size: int) -> str | None:
        return self.store.run(checkpoint_at_op(size))

    def add_cosignature(
        self, note: str, line: str, witnesses: Sequence[WitnessKey], vkey: str | None = None
    ) -> dict[str, Any]:
        return self.store.run(add_cosignature_op(note, line, witnesses, vkey))

    def cosignatures(self, note: str) -> list[dict[str, Any]]:
        return self.store.run(cosignatures_op(note))

    def proofs_for_game(self, game_id: str, size: int | None = None) -> dict[str, Any]:
        return self.store.run(proofs_for_game_op(game_id, size))

    # -- appending -------------------------------------------------------------------------------

    def append_pending(self, batch: int = APPEND_BATCH) -> int:
        """Append the heads of up to ``batch`` pending games; returns how many leaves it appended.
        Games still pending after this (more than ``batch``) wait for the next call."""
        for _ in range(MAX_RACES):
            taken = self.redis.zrange(TLOG.pending, 0, batch - 1)
            games = [g.decode() if isinstance(g, bytes) else g for g in taken]
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
            if heads:  # the chat as it stood at each head (services.fairness.transparency.leaves)
                candidates += self._chat_heads(game_id, heads)
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

    def _chat_heads(self, game_id: str, heads: Sequence[Head]) -> list[Head]:
        """The chat's leaves at ``heads`` and at the game's heads logged before (those logged before the
        chat was are completed so: a verifier asks for one beside every head it proves)."""
        records = leaf_format.chat_records(self.store.run(chat_stored_bytes(game_id)))
        versions = sorted(
            {*(head.version for _, head in self.leaves_of(game_id)), *(h.version for h in heads)}
        )
        return [leaf_format.chat_head_at(game_id, records, version) for version in versions]

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

    # -- checkpoints ---------------------------------------------------------------------------

    def publish(self, ring: KeyRing, now: int, kept_in: Path | None = None) -> str:
        """Sign a checkpoint of the current tree (unless the latest is of this size and by the current
        key) and make it the latest (never going back to a smaller size); returns the latest note.
        ``kept_in``: the directory where the newest checkpoint published is kept, outside Redis
        (``PublishedCheckpoint``); a tree that does not extend it is signed nothing
        (``LogContradiction``), and each new latest is kept there."""
        published = PublishedCheckpoint.of(kept_in, ring) if kept_in is not None else None
        size = self.size()
        if published is not None:
            published.check(size, self.root)
        latest = self.redis.hmget(TLOG.checkpoint, ["size", "note"])
        note = None
        if latest[0] is not None and int(latest[0]) == size and latest[1] is not None:
            note = latest[1].decode()
            try:
                open_checkpoint(note, [ring.current.public])
            except CheckpointError:
                note = None  # signed by an older key: sign it again with the current one
        if note is None:
            note = sign_checkpoint(ring, size, self.root(size), now)
            self._publish(keys=[TLOG.checkpoint, TLOG.checkpoints], args=[size, note])
            note = self.latest_checkpoint() or note
        if published is not None:
            published.keep(note)
        return note
