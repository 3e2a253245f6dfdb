"""What a verdict of ``tablestream verify`` rests on beyond the history itself, said check by check.

A history can be intact and still not be the one the service played: an operator (or a player
handing files around) can write another consistent history, re-sign it and put its own keys in the
file. What tells the two apart lies outside the history, and a verdict names each of those grounds
with its outcome, ``passed``, ``failed``, ``pending``, ``unproven`` or ``not checked``, and a
sentence (``services.history.verify_report.Ground``):

- ``receipts``: the receipts a player kept, which the history must hold at their versions;
- ``log``: the game's heads in the public log, under a checkpoint the service signed;
- ``chat``: the table's chat as the log fixed it beside each of those heads;
- ``keys``: which keys the signatures were checked with, and where they came from: the file's own
  keys prove nothing about the service (whoever made the file chose them), keys fetched apart do;
- ``consistency``: the log's checkpoint extends one the reader already holds (``--trusted-checkpoint``,
  with the consistency proof the log serves between the two: ``--consistency``), or it is a fork;
- ``witnesses``: cosignatures of the log's checkpoint by a quorum of the witnesses the reader trusts
  (``--witness VKEY``, ``--quorum N``): a witness cosigns only a checkpoint that extends the ones it
  kept, so a fork shown to one reader goes without them.

A verdict that did not check a ground says so beside VERIFIED; a strict one (``--require``) fails
instead (docs/fairness.md, "Checking a game as an outsider").
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.fairness.signing import PublicKey
from services.fairness.transparency import merkle
from services.fairness.transparency.checkpoint import CheckpointError, WitnessKey, cosigners, open_checkpoint
from services.fairness.transparency.verify import CHAT_LOG, LOG
from services.history.verify_report import RECEIPTS, Ground, Report

REQUIRABLE = ("log", "receipts", "chat", "keys", "witnesses", "consistency")
"""The grounds ``tablestream verify --require`` can ask for."""


@dataclass(frozen=True)
class Keys:
    """The keys a verdict checked signatures with, and where they came from: ``apart``, in words, the
    keys document given apart from the file (``--keys``) or the key ids pinned (``--pin``); ``None``:
    the file's own ``keys``."""

    keys: Sequence[PublicKey]
    apart: str | None = None

    def ids(self) -> str:
        return ", ".join(key.key_id for key in self.keys) or "none"


def keys_ground(keys: Keys) -> Ground:
    """Where the keys came from: kept apart (passed) or the file's own (not checked)."""
    if keys.apart is not None:
        return Ground(
            "keys",
            "passed",
            f"The signing keys are {keys.apart} (key ids: {keys.ids()}).",
        )
    if not keys.keys:
        return Ground(
            "keys", "not checked", "The file holds no signing keys and none were given with --keys."
        )
    return Ground(
        "keys",
        "not checked",
        f"The signing keys are the file's own (key ids: {keys.ids()}): whoever made the file chose them, "
        "so a signature checked with them proves nothing about the service. Fetch "
        "/.well-known/tablestream-keys from the service apart and give it with --keys FILE.",
    )


@dataclass(frozen=True)
class Witnesses:
    """The witnesses a verdict trusts (their C2SP tlog-cosignature keys, ``--witness``) and how many of
    them must have cosigned the log's checkpoint (``quorum``, ``--quorum``)."""

    keys: Sequence[WitnessKey] = ()
    quorum: int = 1


def checkpoint_of(doc: Any) -> str | None:
    """The signed checkpoint note of a file's log section (an export's or a bundle's), if any."""
    section = doc.get("log") if isinstance(doc, Mapping) else None
    note = section.get("checkpoint") if isinstance(section, Mapping) else None
    return note if isinstance(note, str) else None


COSIGNED_WITHIN_SECONDS = 3600
"""How long after its signing key's period closed a witness may still cosign a checkpoint it signed
(a witness polls every few seconds or minutes; the checkpoint was signed inside the period)."""


def witnesses_ground(doc: Any, witnesses: Witnesses, keys: Sequence[PublicKey] = ()) -> Ground:
    """Whether a quorum of the trusted witnesses cosigned the checkpoint of ``doc``'s log section: a
    witness cosigns a checkpoint only when it extends the last one it kept, so a quorum's cosignature
    shows that this checkpoint is the one everyone else is shown, not a fork made for one reader.

    A cosignature counts only when the witness's own time of cosigning falls in the period of the
    key that signed the checkpoint (``keys``; within ``COSIGNED_WITHIN_SECONDS`` after it closed): a
    retired key that leaked signs a checkpoint with any timestamp line it likes, but no witness
    cosigns it inside that key's period, which is over. So the period of a key rests on the
    witnesses' clocks, not on the timestamp line alone."""
    if not witnesses.keys:
        return Ground(
            "witnesses",
            "not checked",
            "No witness keys were given (--witness VKEY): the public log's checkpoint is trusted on the "
            "service's own key. A witness you trust cosigns only a checkpoint that extends the ones it kept.",
        )
    note = checkpoint_of(doc)
    if note is None:
        return Ground("witnesses", "not checked", "The file holds no checkpoint of the public log to cosign.")
    try:
        cosigned = cosigners(note, witnesses.keys)
    except CheckpointError as error:
        return Ground("witnesses", "failed", f"The log's checkpoint cannot be read: {error.message}")
    try:
        signer: PublicKey | None = open_checkpoint(note, keys)[1]
    except CheckpointError:
        signer = None  # the log's ground says why; the cosignatures are counted as they are
    signed = [key for key, at in cosigned if signer is None or _in_period(signer, at)]
    late = len(cosigned) - len(signed)
    names = ", ".join(key.name for key in signed) or "none"
    counted = (
        f"{len(signed)} of the {len(witnesses.keys)} witnesses given (quorum {witnesses.quorum}: {names})"
    )
    if late:
        counted += (
            f"; {late} more cosigned it outside the period of the key that signed it, {signer_id(signer)}: a "
            "key used after its rotation"
        )
    if len(signed) >= witnesses.quorum:
        return Ground("witnesses", "passed", f"The log's checkpoint is cosigned by {counted}.")
    return Ground(
        "witnesses",
        "pending",
        f"The log's checkpoint is cosigned by only {counted}. A witness cosigns a checkpoint when it next "
        "polls the log: export again later. A checkpoint your witnesses never cosign may be a fork shown "
        "only to you.",
    )


def _in_period(key: PublicKey, at: int) -> bool:
    return key.not_before <= at and (key.not_after is None or at < key.not_after + COSIGNED_WITHIN_SECONDS)


def signer_id(key: PublicKey | None) -> str:
    return key.key_id if key is not None else "unknown"


def _found(report: Report, check: str, name: str) -> Ground | None:
    """``name``'s ground from the first failure, else the first pending entry, of ``check`` in
    ``report``; ``None`` when it has neither."""
    buckets = [report.rounds[number] for number in sorted(report.rounds)]
    for bucket in buckets:
        for failed, detail in bucket.failures:
            if failed == check:
                return Ground(name, "failed", f"{bucket.label}: {detail}.")
    for bucket in buckets:
        for waiting, detail in bucket.pending:
            if waiting == check:
                return Ground(name, "pending", f"{bucket.label}: {detail}.")
    return None


def _count(report: Report, check: str) -> int:
    return sum(bucket.checked.get(check, 0) for bucket in report.rounds.values())


def export_grounds(
    report: Report, doc: Any, receipts: int, keys: Keys, witnesses: Witnesses = Witnesses()
) -> list[Ground]:
    """The grounds of an export's verdict (``report``, with the log checked when ``doc`` has a section;
    ``receipts``: how many the player gave)."""
    grounds = []
    if receipts == 0:
        grounds.append(
            Ground(
                "receipts",
                "not checked",
                "No receipts were given (--receipt VERSION:HASH, --receipts FILE): nothing shows that the "
                "service answered a player with these versions.",
            )
        )
    elif found := _found(report, RECEIPTS, "receipts"):
        grounds.append(found)
    elif unproven := report.unproven():
        more = f" (and {len(unproven) - 1} more)" if len(unproven) > 1 else ""
        grounds.append(Ground("receipts", "unproven", f"{unproven[0]}{more}."))
    else:
        grounds.append(
            Ground(
                "receipts", "passed", f"All {receipts} receipts given are in the history at their versions."
            )
        )
    if not isinstance(doc, Mapping) or doc.get("log") is None:
        grounds.append(
            Ground(
                "log",
                "not checked",
                "The export carries no log section: nothing shows that the service published these heads, "
                "so another history of this game would pass as well (an export made before the public log "
                "existed, or one whose section was removed).",
            )
        )
    elif found := _found(report, LOG, "log"):
        grounds.append(found)
    else:
        grounds.append(
            Ground(
                "log",
                "passed",
                f"{_count(report, LOG)} heads of this game are in the public log, each with an inclusion "
                "proof to the checkpoint the service signed.",
            )
        )
    return [
        *grounds,
        _chat_ground(report, doc),
        keys_ground(keys),
        witnesses_ground(doc, witnesses, keys.keys),
    ]


def _chat_ground(report: Report, doc: Any) -> Ground:
    """Whether the public log fixes the export's chat as it stood at each head it proves."""
    if not isinstance(doc, Mapping) or doc.get("chat") is None:
        return Ground(
            "chat",
            "not checked",
            "The export carries no chat (GET /games/{id}/export?chat=1 adds it).",
        )
    section = doc.get("log")
    if not isinstance(section, Mapping) or not isinstance(section.get("chat"), list):
        return Ground(
            "chat",
            "not checked",
            "The log section holds no leaf of the chat (a game logged before the chat was, or its proofs "
            "removed): the chat's own chain was checked, but another chat of this game would pass as well.",
        )
    found = _found(report, CHAT_LOG, "chat")
    if found is not None:
        return found
    return Ground(
        "chat",
        "passed",
        f"The public log fixes the chat as it stood at each of the {_count(report, CHAT_LOG)} heads it "
        "proves.",
    )


@dataclass(frozen=True)
class Trusted:
    """A checkpoint the reader already holds (its signed note, ``--trusted-checkpoint``) and the
    consistency proof between it and the file's (``GET /log/consistency``'s answer, ``--consistency``)."""

    note: str | None = None
    proof: Any = None


def consistency_ground(doc: Any, trusted: Trusted, keys: Sequence[PublicKey]) -> Ground:
    """Whether the file's checkpoint extends the one the reader trusts (or the other way round): the
    same root at the same size, or an RFC 9162 consistency proof between them. Two notes the log
    signed that no proof joins are the proof of a fork, for anyone who holds them."""
    if trusted.note is None:
        return Ground(
            "consistency",
            "not checked",
            "No checkpoint you already hold was given (--trusted-checkpoint NOTE): nothing shows this one "
            "extends the ones you saw.",
        )
    note = checkpoint_of(doc)
    if note is None:
        return Ground("consistency", "not checked", "The file holds no checkpoint of the public log.")
    try:
        theirs, _ = open_checkpoint(trusted.note, keys)
        ours, _ = open_checkpoint(note, keys)
    except CheckpointError as error:
        return Ground(
            "consistency", "failed", f"A checkpoint is not one the log's keys signed: {error.message}"
        )
    if ours.size == theirs.size:
        if ours.root == theirs.root:
            return Ground(
                "consistency", "passed", f"The file's checkpoint is the one you hold (size {ours.size})."
            )
        return Ground(
            "consistency",
            "failed",
            f"The file's checkpoint and the one you hold are both of size {ours.size}, with different "
            "roots: the log signed two trees, a fork (the two notes prove it to anyone).",
        )
    old, new = sorted((theirs, ours), key=lambda checkpoint: checkpoint.size)
    proof = _consistency_proof(trusted.proof, old.size, new.size)
    if proof is None:
        return Ground(
            "consistency",
            "not checked",
            f"The checkpoints are of sizes {theirs.size} (yours) and {ours.size} (the file's): give the "
            f"proof between them, GET /log/consistency?from={old.size}&to={new.size}, with "
            "--consistency FILE.",
        )
    if merkle.verify_consistency(old.size, new.size, proof, old.root, new.root):
        return Ground(
            "consistency",
            "passed",
            f"The checkpoint of size {new.size} extends the one of size {old.size}: the log only grew.",
        )
    return Ground(
        "consistency",
        "failed",
        f"The consistency proof does not join the checkpoint of size {old.size} to the one of size "
        f"{new.size}: unless the proof is damaged, the log forked.",
    )


def _consistency_proof(document: Any, old: int, new: int) -> list[bytes] | None:
    """The proof's hashes when ``document`` is the log's answer for sizes ``old`` to ``new``."""
    if not isinstance(document, Mapping) or (document.get("from"), document.get("to")) != (old, new):
        return None
    hashes = document.get("proof")
    try:
        return (
            [base64.b64decode(item, validate=True) for item in hashes] if isinstance(hashes, list) else None
        )
    except (TypeError, ValueError, binascii.Error):
        return None
