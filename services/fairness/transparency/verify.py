"""The offline check of a log section (``services.fairness.transparency.log.proofs_for_game_op``): the game's
heads are in the public log, as the signed checkpoint fixes it.

``read_proofs`` is the one reading of a section, shared by the export's check (``check_log``, for
``tablestream verify EXPORT``) and the dispute bundle's (``services.disputes.bundle``): the
checkpoint must be signed by a key of the keys given (the document's own, or the ones kept apart)
valid at its timestamp; each leaf is decoded and its inclusion proof checked against the
checkpoint's root. What a caller requires of it and how it says so are the caller's:

- an export (``check_log``): for each leaf it carries, the leaf is this game's, its head is the
  export's own chain hash at that version (else the log fixed *another* history of this game: two
  exports of one game cannot both pass), and its proof leads to the root. Every head the stream
  should have logged (``services.fairness.transparency.leaves``) must be proven. A head the checkpoint
  does not hold yet, because it came after the checkpoint (``pending``) or after every leaf of the
  game the section shows (the appender had not reached it), and a section without any checkpoint,
  are *pending*, not failed: the export was made too early, and the report says so in words, with
  the time the section's ``next_checkpoint`` names ("the public log has not yet published this
  head; export again after <time>"). A head missing *before* a logged one fails: the appender logs
  a game's heads in order. Exports made before the log existed have no ``log`` section and are not
  checked here;
- a dispute bundle: its one head (the cut's) must be proven; no checkpoint yet, or a head appended
  after it, is *not checked* rather than failed (the bundle was built too early to tell).
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from services.fairness.signing import PublicKey
from services.fairness.transparency import leaves as leaf_format
from services.fairness.transparency import merkle
from services.fairness.transparency.checkpoint import Checkpoint, CheckpointError, open_checkpoint
from services.fairness.transparency.leaves import Head
from services.history.records import Entry
from services.history.verify_report import Report

LOG = "public log"
Unusable = Literal["unreadable", "no checkpoint", "refused"]


class LogUnusable(Exception):
    """A log section that proves nothing: ``kind`` says why (``unreadable``: no section of leaves;
    ``no checkpoint``: the log had published none; ``refused``: the checkpoint is not signed by a
    key given, valid then), ``detail`` the checkpoint's refusal in words."""

    def __init__(self, kind: Unusable, detail: str = "") -> None:
        super().__init__(kind, detail)
        self.kind: Unusable = kind
        self.detail = detail


@dataclass(frozen=True)
class LeafProof:
    """One leaf of a section: the head it logs (``None``: the leaf cannot be read; ``claimed``, the
    version its unsigned ``version`` field names), its index in the log, and whether its inclusion
    proof leads to the signed checkpoint's root."""

    head: Head | None
    index: int = -1
    included: bool = False
    claimed: Any = None


@dataclass(frozen=True)
class LogProofs:
    """A section under a checkpoint ``signer`` signed: its leaves, read in order, and the versions
    appended after the checkpoint (``pending``: no proof yet)."""

    checkpoint: Checkpoint
    signer: PublicKey
    leaves: tuple[LeafProof, ...]
    pending: frozenset[int]
    chat: tuple[LeafProof, ...] | None = None
    """The chat's leaves (``None``: the section holds none: a game logged before chat was)."""
    chat_pending: frozenset[int] = frozenset()

    def at(self, version: int) -> LeafProof | None:
        """The first readable leaf whose head is at ``version`` (of whichever game it names)."""
        return next(
            (leaf for leaf in self.leaves if leaf.head is not None and leaf.head.version == version), None
        )

    def unreadable_at(self, version: int) -> bool:
        """Whether a leaf that cannot be read says it is the head at ``version``."""
        return any(leaf.head is None and leaf.claimed == version for leaf in self.leaves)


def read_proofs(section: Any, keys: Sequence[PublicKey]) -> LogProofs:
    """``section`` read and its proofs checked against its checkpoint, which a key of ``keys`` valid
    at its timestamp must have signed; ``LogUnusable`` otherwise."""
    if not isinstance(section, dict) or not isinstance(section.get("leaves"), list):
        raise LogUnusable("unreadable")
    note = section.get("checkpoint")
    if note is None:
        raise LogUnusable("no checkpoint")
    try:
        checkpoint, signer = open_checkpoint(str(note), keys)
    except CheckpointError as error:
        raise LogUnusable("refused", error.message) from None
    chat = section.get("chat")
    return LogProofs(
        checkpoint,
        signer,
        tuple(_read_leaf(item, checkpoint) for item in section["leaves"]),
        _versions(section.get("pending")),
        tuple(_read_leaf(item, checkpoint) for item in chat) if isinstance(chat, list) else None,
        _versions(section.get("chat_pending")),
    )


def _versions(listed: Any) -> frozenset[int]:
    return frozenset(v for v in (listed if isinstance(listed, list) else []) if isinstance(v, int))


def _read_leaf(item: Any, checkpoint: Checkpoint) -> LeafProof:
    try:
        data = base64.b64decode(item["leaf"], validate=True)
        head = leaf_format.decode(data)
        proof = [base64.b64decode(p, validate=True) for p in item["proof"]]
        index = int(item["index"])
    except (KeyError, TypeError, ValueError, binascii.Error):
        return LeafProof(None, claimed=item.get("version") if isinstance(item, dict) else None)
    included = merkle.verify_inclusion(merkle.leaf_hash(data), index, checkpoint.size, proof, checkpoint.root)
    return LeafProof(head, index, included)


# -- an export's log section ----------------------------------------------------------------------

_EXPORT_UNUSABLE: dict[Unusable, str] = {
    "unreadable": "the export's log section is not readable",
    "refused": "the log's checkpoint is refused: {detail}",
}


def not_yet_published(section: Any, now: float | None = None) -> str:
    """The sentence for an export made before the log's checkpoint held its newest head: when to
    export again, from the section's ``next_checkpoint`` (unix seconds) when it has one."""
    due = section.get("next_checkpoint") if isinstance(section, dict) else None
    if not isinstance(due, int) or isinstance(due, bool) or due < 0:
        return "the public log has not yet published this head; export again after the next checkpoint"
    when = datetime.fromtimestamp(due, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    passed = (
        " (that time has passed: export again now)" if due <= (time.time() if now is None else now) else ""
    )
    return f"the public log has not yet published this head; export again after {when}{passed}"


def _round_of(report: Report) -> dict[int, int]:
    return {v: number for number, r in report.rounds.items() for v in r.versions}


def check_log(
    report: Report, doc: Any, entries: Sequence[Entry], keys: Sequence[PublicKey], now: float | None = None
) -> None:
    """Add the ``public log`` check of ``doc``'s ``log`` section to ``report`` (nothing without one).
    ``now`` (unix seconds, default the clock) only words a pending head's "export again after"."""
    section = doc.get("log") if isinstance(doc, dict) else None
    if section is None or not entries:
        return
    rounds = _round_of(report)
    last = rounds.get(entries[-1].version, 0)
    try:
        log = read_proofs(section, keys)
    except LogUnusable as unusable:
        if unusable.kind == "no checkpoint":  # the log had signed none yet when the export was made
            report.pend(last, LOG, "the log had published no checkpoint when this export was made")
            report.waiting = not_yet_published(section, now)
        else:
            report.fail(last, LOG, _EXPORT_UNUSABLE[unusable.kind].format(detail=unusable.detail))
        return
    hashes = {entry.version: entry.hash for entry in entries}
    game_id = report.game_id or ""
    # the newest version the section shows a leaf of this game at: heads after it are not logged yet
    logged = [
        leaf.head.version for leaf in log.leaves if leaf.head is not None and leaf.head.game_id == game_id
    ]
    newest = max([*log.pending, *logged], default=0)
    proven: set[int] = set()
    for leaf in log.leaves:
        head = leaf.head
        if head is None:
            report.fail(last, LOG, "a leaf of the log section is not readable")
            continue
        number = rounds.get(head.version, last)
        if head.game_id != game_id:
            report.fail(number, LOG, f"leaf {leaf.index} is of game {head.game_id}, not of this game")
        elif hashes.get(head.version) != head.hash:
            report.fail(
                number,
                LOG,
                f"the public log fixed head {head.hash[:16]}… at version {head.version}, which this export "
                "does not hold: the log holds another history of this game",
            )
        elif not leaf.included:
            report.fail(
                number,
                LOG,
                f"the head at version {head.version} is not in the log: its inclusion proof does not lead "
                f"to the root of checkpoint {log.checkpoint.size} signed by key {log.signer.key_id}",
            )
        else:
            proven.add(head.version)
            report.passed(number, LOG)
    _check_chat(report, doc, log, sorted(proven), rounds, last)
    for head in leaf_format.heads_of_stream(game_id, entries):
        if head.version in proven:
            continue
        number = rounds.get(head.version, last)
        if head.version in log.pending:
            report.pend(number, LOG, f"the head at version {head.version} was appended after the checkpoint")
        elif head.version > newest:
            report.pend(number, LOG, f"the head at version {head.version} is not in the log yet")
        else:
            report.fail(
                number, LOG, f"the head at version {head.version} has no proof that it is in the public log"
            )
            continue
        report.waiting = not_yet_published(section, now)


# -- the chat in the log --------------------------------------------------------------------------

CHAT_LOG = "chat in the public log"


def _chat_of(doc: Any) -> list[tuple[int, int, str]] | None:
    """The export's chat records as (number, game version sent at, chain hash); ``None`` without a
    chat section or with one that cannot be read (the ``chat`` check names why)."""
    section = doc.get("chat") if isinstance(doc, dict) else None
    records = section.get("records") if isinstance(section, dict) else None
    if not isinstance(records, list):
        return None
    try:
        stored = [(item["n"], item["data"].encode("utf-8"), item["hash"]) for item in records]
        return leaf_format.chat_records(stored)
    except (KeyError, TypeError, AttributeError, ValueError):
        return None


def _check_chat(
    report: Report, doc: Any, log: LogProofs, proven: Sequence[int], rounds: dict[int, int], last: int
) -> None:
    """The ``chat in the public log`` check: beside each game head the section proves, the log holds
    the chat as it stood then (``leaves.chat_head_at``), and it is this export's chat. Nothing is
    checked without a chat section (an export without ``?chat=1``) or without chat leaves in the log
    section (a game logged before chat was); the verdict says so (``services.disputes.grounds``)."""
    records = _chat_of(doc)
    if records is None or log.chat is None:
        return
    game_id = report.game_id or ""
    stream = leaf_format.chat_stream(game_id)
    logged: dict[int, LeafProof] = {}
    for proof in log.chat:
        if proof.head is None or proof.head.game_id != stream:
            report.fail(
                last, CHAT_LOG, "a chat leaf of the log section is not readable, or not this game's chat"
            )
        else:
            logged.setdefault(proof.head.version, proof)
    for version in proven:
        number = rounds.get(version, last)
        expected = leaf_format.chat_head_at(game_id, records, version)
        leaf = logged.get(version)
        if leaf is None:
            if version in log.chat_pending:
                report.pend(
                    number, CHAT_LOG, f"the chat at version {version} was logged after the checkpoint"
                )
            else:
                report.fail(
                    number,
                    CHAT_LOG,
                    f"the log section proves no leaf of the chat at version {version}: its proof was removed",
                )
        elif leaf.head is not None and leaf.head.hash != expected.hash:
            report.fail(
                number,
                CHAT_LOG,
                f"the public log fixed the chat as it stood at version {version} ({leaf.head.hash[:16]}…), "
                "which this export's chat does not hold: records were cut, removed or chained again",
            )
        elif not leaf.included:
            report.fail(
                number,
                CHAT_LOG,
                f"the chat at version {version} is not in the log: its inclusion proof does not lead to the "
                f"root of checkpoint {log.checkpoint.size}",
            )
        else:
            report.passed(number, CHAT_LOG)
