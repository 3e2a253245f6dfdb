"""Backup files rewritten as someone holding one could: lines changed, then the manifest made again
and signed with the key the file itself carries (``workers.backup.frame``'s docstring: what the signature
protects against, and what it cannot)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.fairness.signing import KeyRing
from workers.backup import Manifest

COUNTED = {"game": "games", "account": "accounts", "finish": "finishes", "signing_keys": "signing_keys",
           "tlog": "tlog", "operator": "operator"}  # fmt: skip
"""The end line's count of each kind of record."""


def reseal(path: Path) -> None:
    """Make the end line's counts and manifest fit the file's lines again and sign it with the
    current key of the ring in its ``signing_keys`` line."""
    lines = path.read_bytes().splitlines(keepends=True)
    manifest = Manifest(lines[0])
    ring: KeyRing | None = None
    end = json.loads(lines[-1])
    counts = dict.fromkeys(("games", "accounts", "finishes"), 0)
    for raw in lines[1:-1]:
        record = json.loads(raw)
        manifest.add(record, raw)
        counts[COUNTED[record["kind"]]] = counts.get(COUNTED[record["kind"]], 0) + 1
        if record["kind"] == "signing_keys":
            ring = KeyRing.from_secret(json.dumps(record["ring"]))
    assert ring is not None, "a backup carries its signing keys"
    resealed = {"kind": "end", **counts, **manifest.signed(ring, end["signature"]["signed_at"])}
    lines[-1] = json.dumps(resealed, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    path.write_bytes(b"".join(lines))


def rewrite_lines(
    source: Path, into: Path, change: Callable[[dict[str, Any]], None], sealed: bool = True
) -> None:
    """``source`` copied to ``into`` with ``change`` applied to every record line but the header and
    the end (it changes those it means to, in place), then resealed unless ``sealed`` is false."""
    lines = source.read_bytes().splitlines(keepends=True)
    out = [lines[0]]
    for raw in lines[1:-1]:
        record = json.loads(raw)
        before = json.dumps(record, sort_keys=True)
        change(record)
        changed = json.dumps(record, sort_keys=True) != before
        out.append(
            json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n" if changed else raw
        )
    out.append(lines[-1])
    into.write_bytes(b"".join(out))
    if sealed:
        reseal(into)
