"""The receipts a player kept, checked against an exported game's history (the offline verifier's
seventh check, ``services.history.verify``): a receipt signed by the service proves a rewrite when the
history no longer holds its hash at its version; one without a valid signature of the service proves
nothing, and is named as unproven.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.history.records import Entry
from services.history.verify_report import RECEIPTS, Report


@dataclass(frozen=True)
class KeptReceipt:
    """A receipt a player kept: its version and hash, and for a signed one its game, key and the
    verdict of its signature (``services.fairness.signing.ReceiptCheck``'s values: ``ok``, ``bad_signature``,
    ``unknown_key``, ``key_not_valid``, ``malformed``); ``signature`` None: an unsigned receipt."""

    version: int
    hash: str
    game_id: str | None = None
    key_id: str | None = None
    signature: str | None = None


NO_PROOF = ": it proves nothing against the service, since anyone can write one"
SIGNATURE_PROBLEMS = {
    "bad_signature": "is FORGED: its signature does not verify with the service's key {key}",
    "unknown_key": "is signed by key {key}, which is not among the service's published keys",
    "key_not_valid": "is signed by key {key} at a time outside that key's validity period",
    "malformed": "is malformed (a field is missing or of the wrong shape)",
}


def check_receipts(
    report: Report,
    entries: Sequence[Entry],
    rounds: Sequence[int],
    receipts: Sequence[tuple[int, str] | KeptReceipt],
    game_id: str | None,
) -> None:
    """A receipt signed by the service proves a rewrite: the history must still hold that hash at
    that version. One without a valid signature of the service (unsigned, forged, under a key it
    never published, of another game) that disagrees proves nothing: it is named as unproven."""
    by_version: dict[int, tuple[Entry, int]] = {}
    for entry, number in zip(entries, rounds, strict=True):
        by_version.setdefault(entry.version, (entry, number))
    for item in receipts:
        kept = item if isinstance(item, KeptReceipt) else KeptReceipt(*item)
        version, hash_ = kept.version, kept.hash
        number = by_version[version][1] if version in by_version else rounds[-1]
        name = f"the receipt of version {version}"
        if kept.signature is not None and kept.signature != "ok":
            problem = SIGNATURE_PROBLEMS.get(kept.signature, "cannot be checked")
            report.disregard(number, RECEIPTS, f"{name} {problem.format(key=kept.key_id)}{NO_PROOF}")
            continue
        if kept.game_id is not None and game_id is not None and kept.game_id != game_id:
            report.disregard(
                number, RECEIPTS, f"{name} is of game {kept.game_id}, not of this game {game_id}{NO_PROOF}"
            )
            continue
        signed = kept.signature == "ok"
        if version not in by_version:
            problem = f"the history has no version {version}, yet a receipt holds it"
        elif by_version[version][0].hash != hash_:
            problem = f"the history no longer holds hash {hash_[:16]}… at version {version}"
        else:
            report.passed(number, RECEIPTS)
            continue
        if signed:
            report.fail(number, RECEIPTS, f"{problem} (its signature is valid: proof of a rewritten history)")
        else:
            report.disregard(number, RECEIPTS, f"{problem}, by an unsigned receipt{NO_PROOF}")
