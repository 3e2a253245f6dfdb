"""The public log of game heads in a backup (``services.fairness.transparency``): one ``tlog`` line
when the log holds anything; read it, check it against the target's log, restore it.

The record holds what cannot be derived: the leaves in order (base64 of their encoding,
``services.fairness.transparency.leaves``), every published checkpoint (``checkpoints``: size -> the first
note signed at that size, and ``latest``) and the witnesses' cosignatures (by checkpoint text digest,
then witness field, each document as stored). The tree's node hashes, the leaf set and the per-game
and per-head indexes are recomputed from the leaves at the restore: the recomputed tree must give
every backed-up checkpoint's root at its size, and each cosignature must verify with the witness key
it was stored with, or the restore is refused.

A restore into a target whose log is not empty goes ahead only when the two logs agree on every
leaf they both hold (one is a prefix of the other: a witness sees an append-only log); any other
target is a fork, refused with the first leaf where they differ, before anything is written. The
appender's ``scanned`` versions are not restored: every restored game is queued again and the
appender, rescanning its stream, drops the heads the log holds already (by content).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from services.fairness.signing import NoteError, parse_note
from services.fairness.transparency import leaves as leaf_format
from services.fairness.transparency import merkle
from services.fairness.transparency.checkpoint import (
    CheckpointError,
    parse_cosignature,
    parse_text,
    parse_witness_vkey,
    text_digest,
    verify_cosignature,
)
from services.fairness.transparency.leaves import Head
from services.store.keys import TLOG, tlog_cosignatures_key

PAGE = 1000
_LUA = Path(__file__).parents[2] / "services" / "store" / "lua"
_PUBLISH = (_LUA / "tlog_checkpoint.lua").read_text(encoding="utf-8")
CHANGED = "the target's public log changed during the import; run it with the workers stopped"


class LogRefused(Exception):
    """The backup's log cannot be restored into this target (the message says why)."""


def _text(raw: bytes | str) -> str:
    return raw.decode() if isinstance(raw, bytes) else raw


def _node_field(node: merkle.Node) -> str:
    return f"{node[0]}:{node[1]}"


def read_log(node: redis.Redis) -> dict[str, Any] | None:
    """The ``tlog`` record of the log on ``node`` (the one holding the ``{tlog}`` slot); ``None``
    when the log is empty and has published nothing. Leaves and checkpoints are read in one
    ``MULTI``; the cosignatures after (they are only ever added)."""
    pipe = node.pipeline(transaction=True)
    pipe.lrange(TLOG.leaves, 0, -1)
    pipe.hgetall(TLOG.checkpoints)
    pipe.hget(TLOG.checkpoint, "note")
    leaves, checkpoints, latest = pipe.execute()
    if not leaves and not checkpoints and latest is None:
        return None
    notes = {int(_text(size)): _text(note) for size, note in checkpoints.items()}
    latest_note = None if latest is None else _text(latest)
    texts = {parse_note(n)[0] for n in [*notes.values(), *([latest_note] if latest_note else [])]}
    digests = sorted(text_digest(t) for t in texts)
    pipe = node.pipeline(transaction=False)
    for digest in digests:
        pipe.hgetall(tlog_cosignatures_key(digest))
    cosignatures = {
        digest: {_text(k): _text(v) for k, v in sorted(found.items())}
        for digest, found in zip(digests, pipe.execute(), strict=True)
        if found
    }
    return {
        "kind": "tlog",
        "leaves": [base64.b64encode(leaf).decode() for leaf in leaves],
        "checkpoints": {str(size): notes[size] for size in sorted(notes)},
        "latest": latest_note,
        "cosignatures": cosignatures,
    }


@dataclass
class LogPlan:
    """A checked ``tlog`` record: what to write into a target whose log has ``target_size`` leaves."""

    leaves: list[bytes]
    heads: list[Head]
    hashes: list[bytes]
    nodes: dict[merkle.Node, bytes]
    checkpoints: dict[int, str]
    latest: str | None
    cosignatures: dict[str, dict[str, str]]
    target_size: int


def _leaves(record: dict[str, Any]) -> tuple[list[bytes], list[Head]]:
    raw = record.get("leaves")
    if not isinstance(raw, list):
        raise LogRefused("the public log's leaves are not a list")
    datas, heads = [], []
    for index, item in enumerate(raw):
        try:
            data = base64.b64decode(item, validate=True)
            heads.append(leaf_format.decode(data))
        except (TypeError, ValueError, binascii.Error, UnicodeDecodeError) as error:
            raise LogRefused(f"the public log's leaf {index} is not a head leaf: {error}") from None
        datas.append(data)
    return datas, heads


def _checked_note(
    note: Any, size: int | None, nodes: dict[merkle.Node, bytes], count: int
) -> tuple[int, str]:
    """The checkpoint ``note``'s size and text, once its root is the recomputed tree's at its size."""
    try:
        text = parse_note(note)[0]
        checkpoint = parse_text(text)
    except (NoteError, CheckpointError, TypeError, ValueError) as error:
        raise LogRefused(f"a checkpoint of the public log is not readable: {error}") from None
    if size is not None and checkpoint.size != size:
        raise LogRefused(f"the checkpoint filed under size {size} is of size {checkpoint.size}")
    if checkpoint.size > count:
        raise LogRefused(
            f"checkpoint {checkpoint.size} is past the backup's {count} leaves: the backup's log is truncated"
        )
    root = merkle.root(checkpoint.size, nodes)
    if root != checkpoint.root:
        raise LogRefused(
            f"checkpoint {checkpoint.size} has root {base64.b64encode(checkpoint.root).decode()}, the "
            f"backup's leaves give {base64.b64encode(root).decode()}: its log is not the one published"
        )
    return checkpoint.size, text


def _cosignatures(record: dict[str, Any], texts: dict[str, str]) -> dict[str, dict[str, str]]:
    raw = record.get("cosignatures") or {}
    if not isinstance(raw, dict):
        raise LogRefused("the public log's cosignatures are not an object")
    kept: dict[str, dict[str, str]] = {}
    for digest, found in raw.items():
        text = texts.get(digest)
        if text is None or not isinstance(found, dict):
            raise LogRefused(f"cosignatures {digest!r} are of no checkpoint of the backup")
        for witness, doc_text in found.items():
            try:
                doc = json.loads(doc_text)
                key = parse_witness_vkey(doc["vkey"])
                good = verify_cosignature(text, parse_cosignature(doc["line"]), key)
            except (CheckpointError, TypeError, ValueError, KeyError):
                good = False
            if not good:
                raise LogRefused(f"the cosignature of {witness!r} does not verify with its witness key")
        kept[digest] = dict(found)
    return kept


def _fork(node: redis.Redis, datas: list[bytes], heads: list[Head]) -> int:
    """The target's log size, once every leaf both hold is the same; ``LogRefused`` names the fork."""
    size = int(node.llen(TLOG.leaves))
    common = min(size, len(datas))
    for start in range(0, common, PAGE):
        held: Any = node.lrange(TLOG.leaves, start, min(start + PAGE, common) - 1)
        for offset, data in enumerate(held):
            index = start + offset
            if data != datas[index]:
                try:
                    theirs = leaf_format.decode(data)
                    said = f"game {theirs.game_id} version {theirs.version}"
                except ValueError:
                    said = "an unreadable leaf"
                ours = heads[index]
                raise LogRefused(
                    f"the target's public log forks from the backup's at leaf {index}: the target holds "
                    f"{said} there, the backup game {ours.game_id} version {ours.version}; restoring it "
                    "would show every witness a fork, so nothing was written"
                )
    return size


def check_log(node: redis.Redis, record: dict[str, Any]) -> LogPlan:
    """Recompute the backup's tree, check it against every checkpoint and cosignature it holds and
    against the target's log on ``node``; nothing is written."""
    datas, heads = _leaves(record)
    hashes = [merkle.leaf_hash(d) for d in datas]
    nodes = merkle.append(0, {}, hashes)
    notes = record.get("checkpoints") or {}
    if not isinstance(notes, dict):
        raise LogRefused("the public log's checkpoints are not an object")
    checkpoints: dict[int, str] = {}
    texts: dict[str, str] = {}
    for size_text, note in notes.items():
        if not (isinstance(size_text, str) and size_text.isdigit()):
            raise LogRefused(f"a checkpoint is filed under {size_text!r}, not a size")
        size, text = _checked_note(note, int(size_text), nodes, len(datas))
        checkpoints[size] = note
        texts[text_digest(text)] = text
    latest = record.get("latest")
    if latest is not None:
        _, text = _checked_note(latest, None, nodes, len(datas))
        texts[text_digest(text)] = text
    cosignatures = _cosignatures(record, texts)
    target_size = _fork(node, datas, heads)
    return LogPlan(datas, heads, hashes, nodes, checkpoints, latest, cosignatures, target_size)


def write_log(node: redis.Redis, plan: LogPlan) -> int:
    """Restore ``plan`` in one ``MULTI`` guarded by ``WATCH`` (the target's log must still be as
    checked): the leaves it lacks with every index and node hash, the checkpoints (the latest only
    if larger than the target's) and the cosignatures it lacks. Returns the leaves appended."""
    added = max(0, len(plan.leaves) - plan.target_size)
    with node.pipeline(transaction=True) as pipe:
        try:
            pipe.watch(TLOG.leaves)  # type: ignore[no-untyped-call]
            if int(pipe.llen(TLOG.leaves)) != plan.target_size:
                raise LogRefused(CHANGED)
            pipe.multi()
            if added:
                pipe.rpush(TLOG.leaves, *plan.leaves[plan.target_size :])
                games: dict[str, list[str]] = {}
                for index, head in enumerate(plan.heads):
                    games.setdefault(head.game_id, []).append(str(index))
                pipe.hset(TLOG.leafset, mapping={h: i for i, h in enumerate(plan.hashes)})
                pipe.hset(
                    TLOG.heads, mapping={f"{h.game_id}:{h.version}": i for i, h in enumerate(plan.heads)}
                )
                pipe.hset(TLOG.games, mapping={g: " ".join(ixs) for g, ixs in games.items()})
                pipe.hset(TLOG.nodes, mapping={_node_field(n): h for n, h in plan.nodes.items()})
            for size, note in sorted(plan.checkpoints.items()):
                pipe.hsetnx(TLOG.checkpoints, str(size), note)
            if plan.latest is not None:
                size = parse_text(parse_note(plan.latest)[0]).size
                pipe.eval(_PUBLISH, 2, TLOG.checkpoint, TLOG.checkpoints, size, plan.latest)
            for digest, docs in plan.cosignatures.items():
                for witness, doc in docs.items():
                    pipe.hsetnx(tlog_cosignatures_key(digest), witness, doc)
            pipe.execute()
        except redis.WatchError:
            raise LogRefused(CHANGED) from None
    return added
