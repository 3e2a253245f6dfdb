"""Signed receipts against an export, offline (``tablestream verify --receipts FILE``).

A player's receipts come as the browser downloads them (``{"format": "tablestream-receipts/1",
"game_id": ..., "receipts": [...]}``) or as a bare JSON list of receipts. Each one's signature is
checked with the service's public keys (``services.fairness.signing.verify_receipt``): the export's own
``keys`` unless the caller gives a keys document fetched apart (``/.well-known/tablestream-keys``:
an operator who rewrote a history could also swap the keys in its export, which then names every
receipt's key as unknown). The verdicts go to the export's verifier (``services.history.verify``),
which checks that the history holds each receipt's hash at its version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from services.fairness.signing import PublicKey, ReceiptCheck, public_keys_from_document, verify_receipt
from services.history.verify import KeptReceipt, UnreadableExport, verify_export
from services.history.verify_report import Report

RECEIPTS_FORMAT = "tablestream-receipts/1"


def receipts_of(doc: Any) -> list[Mapping[str, Any]]:
    """The receipts of a downloaded receipts file (or a bare list); ``UnreadableExport`` otherwise."""
    items = doc.get("receipts") if isinstance(doc, Mapping) else doc
    if not isinstance(items, list) or not all(isinstance(r, Mapping) for r in items):
        raise UnreadableExport(f"not a {RECEIPTS_FORMAT} document nor a list of receipts")
    return items


def keys_of(doc: Any) -> list[PublicKey]:
    """The keys of a keys document; ``UnreadableExport`` when it is not one."""
    try:
        return public_keys_from_document(doc)
    except ValueError as error:
        raise UnreadableExport(f"the signing keys cannot be read: {error}") from None


def kept(receipt: Mapping[str, Any], keys: Sequence[PublicKey]) -> KeptReceipt:
    """One receipt as the verifier takes it: unsigned ones as they are, signed ones with a verdict."""
    version, hash_ = receipt.get("version"), receipt.get("hash")
    game_id = receipt.get("game_id") if isinstance(receipt.get("game_id"), str) else None
    if "signature" not in receipt and "key_id" not in receipt:
        verdict = None if type(version) is int and isinstance(hash_, str) else ReceiptCheck.MALFORMED.value
    else:
        verdict = verify_receipt(receipt, keys).value
    key_id = receipt.get("key_id") if isinstance(receipt.get("key_id"), str) else None
    return KeptReceipt(
        version if type(version) is int else -1,
        hash_ if isinstance(hash_, str) else "",
        game_id,
        key_id,
        verdict,
    )


def verify_with_receipts(
    export: Any, receipts: Sequence[Mapping[str, Any]], keys_document: Any | None = None
) -> Report:
    """Verify ``export`` with a player's signed receipts, against ``keys_document`` when given,
    else the export's own ``keys`` (none: every signed receipt's key is unknown)."""
    source = (
        keys_document
        if keys_document is not None
        else (export.get("keys") if isinstance(export, Mapping) else None)
    )
    keys = keys_of(source) if source is not None else []
    return verify_export(export, [kept(receipt, keys) for receipt in receipts])
