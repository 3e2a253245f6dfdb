"""``tablestream verify FILE [--receipt VERSION:HASH ...]``: check an exported game, or a dispute
bundle (``services.history.bundle``), offline. A bundle is told apart by its ``format``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from services.history.bundle import is_bundle, verify_bundle
from services.history.verify import HEX64, UnreadableExport, verify_export


def parse_receipt(text: str) -> tuple[int, str]:
    """``VERSION:HASH`` as kept from a command response's receipt."""
    version, _, hash_ = text.partition(":")
    if not version.isdigit() or not HEX64.fullmatch(hash_):
        raise argparse.ArgumentTypeError(f"a receipt is VERSION:HASH (64 hex digits), not {text!r}")
    return int(version), hash_


def main(argv: Sequence[str] | None = None) -> int:
    """0 verified, 1 a check failed, 2 unreadable."""
    parser = argparse.ArgumentParser(
        prog="tablestream verify", description="Verify an exported game offline."
    )
    parser.add_argument(
        "file",
        help="the JSON document from GET /games/{id}/export, or a dispute bundle from "
        "GET /games/{id}/disputes/{dispute}/bundle",
    )
    parser.add_argument(
        "--receipt",
        type=parse_receipt,
        action="append",
        default=[],
        metavar="VERSION:HASH",
        help="a receipt kept from a command response; the history must still hold it",
    )
    args = parser.parse_args(argv)
    try:
        doc = _read(args.file)
        if is_bundle(doc):
            if args.receipt:
                doc = {**doc, "receipts": [*doc.get("receipts", []), *_receipts(args.receipt)]}
            report: Any = verify_bundle(doc)
        else:
            report = verify_export(doc, args.receipt)
    except UnreadableExport as exc:
        print(f"tablestream verify: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    print(report.render())
    return 0 if report.ok else 1


def _read(path: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableExport(str(exc)) from None


def _receipts(pairs: Sequence[tuple[int, str]]) -> list[dict[str, Any]]:
    return [{"version": version, "hash": hash_} for version, hash_ in pairs]
