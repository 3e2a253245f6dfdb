"""``tablestream verify FILE [--receipt VERSION:HASH ...]``: check an exported game offline."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from services.history.verify import HEX64, UnreadableExport, verify_file


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
    parser.add_argument("file", help="the JSON document from GET /games/{id}/export")
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
        report = verify_file(args.file, args.receipt)
    except UnreadableExport as exc:
        print(f"tablestream verify: cannot read {args.file}: {exc}", file=sys.stderr)
        return 2
    print(report.render())
    return 0 if report.ok else 1
