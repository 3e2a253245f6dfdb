"""The offline check of an export's ``log`` section (``services.transparency.log.proofs_for_game_op``):
the game's heads are in the public log, as the signed checkpoint fixes it.

For each leaf it carries: the leaf is this game's, its head is the export's own chain hash at that
version (else the log fixed *another* history of this game: two exports of one game cannot both
pass), and its inclusion proof leads to the checkpoint's root. The checkpoint must be signed by a
key of the export's keys (or the keys given apart from it) valid at its timestamp. Every head the
stream should have logged (``services.transparency.leaves``) must be proven: one appended after the
checkpoint (``pending``) is named as such (export again after the next checkpoint). Exports made
before the log existed have no ``log`` section and are not checked here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from services.history.records import Entry
from services.history.verify_report import Report
from services.signing import PublicKey
from services.transparency import leaves as leaf_format
from services.transparency import merkle
from services.transparency.checkpoint import CheckpointError, open_checkpoint

LOG = "public log"


def _round_of(report: Report) -> dict[int, int]:
    return {v: number for number, r in report.rounds.items() for v in r.versions}


def check_log(report: Report, doc: Any, entries: Sequence[Entry], keys: Sequence[PublicKey]) -> None:
    """Add the ``public log`` check of ``doc``'s ``log`` section to ``report`` (nothing without one)."""
    section = doc.get("log") if isinstance(doc, dict) else None
    if section is None or not entries:
        return
    rounds = _round_of(report)
    last = rounds.get(entries[-1].version, 0)
    if not isinstance(section, dict) or not isinstance(section.get("leaves"), list):
        report.fail(last, LOG, "the export's log section is not readable")
        return
    pending = {v for v in section.get("pending", []) if isinstance(v, int)}
    hashes = {entry.version: entry.hash for entry in entries}
    game_id = report.game_id or ""
    expected = leaf_format.heads_of_stream(game_id, entries)
    note = section.get("checkpoint")
    if note is None:
        report.fail(last, LOG, "the log had published no checkpoint when this export was made: export again")
        return
    try:
        checkpoint, signer = open_checkpoint(note, keys)
    except CheckpointError as error:
        report.fail(last, LOG, f"the log's checkpoint is refused: {error.message}")
        return
    proven: set[int] = set()
    for item in section["leaves"]:
        try:
            data = base64.b64decode(item["leaf"], validate=True)
            head = leaf_format.decode(data)
            proof = [base64.b64decode(p, validate=True) for p in item["proof"]]
            index = int(item["index"])
        except (KeyError, TypeError, ValueError, binascii.Error):
            report.fail(last, LOG, "a leaf of the log section is not readable")
            continue
        number = rounds.get(head.version, last)
        if head.game_id != game_id:
            report.fail(number, LOG, f"leaf {index} is of game {head.game_id}, not of this game")
            continue
        if hashes.get(head.version) != head.hash:
            report.fail(
                number,
                LOG,
                f"the public log fixed head {head.hash[:16]}… at version {head.version}, which this export "
                "does not hold: the log holds another history of this game",
            )
            continue
        if not merkle.verify_inclusion(
            merkle.leaf_hash(data), index, checkpoint.size, proof, checkpoint.root
        ):
            report.fail(
                number,
                LOG,
                f"the head at version {head.version} is not in the log: its inclusion proof does not lead "
                f"to the root of checkpoint {checkpoint.size} signed by key {signer.key_id}",
            )
            continue
        proven.add(head.version)
        report.passed(number, LOG)
    for head in expected:
        if head.version in proven:
            continue
        why = (
            "was appended to the log after its checkpoint: export the game again after the next checkpoint"
            if head.version in pending
            else "has no proof that it is in the public log"
        )
        report.fail(rounds.get(head.version, last), LOG, f"the head at version {head.version} {why}")
