"""``tablestream verify FILE [--receipt VERSION:HASH ...] [--receipts FILE ...] [--keys FILE]
[--witness VKEY --quorum N] [--trusted-checkpoint NOTE --consistency FILE]
[--require log,receipts,chat,keys,witnesses,consistency]``: check an exported game, or a dispute bundle
(``services.disputes.bundle``, told apart by its ``format``), offline, with the receipts a player
kept (services.disputes.receipt_check).

Every verdict says what it rests on (``services.disputes.grounds``): the receipts, the public log,
the keys the signatures were checked with and where they came from, and witnesses, each passed,
failed, pending, unproven or not checked, with a sentence. What was not checked is named beside
VERIFIED; ``--require`` makes the verdict fail instead when a ground it names did not pass.

Exit codes: 0 verified; 1 a check failed, or a required ground did not pass; 2 a file cannot be
read; 3 pending: nothing failed, but the export was made before the public log's checkpoint held
its newest head, so it is not verified yet (the report says when to export again;
docs/fairness.md, "Checking a game as an outsider")."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from services.disputes.bundle import bundle_keys, is_bundle, verify_bundle
from services.disputes.grounds import (
    REQUIRABLE,
    Keys,
    Trusted,
    Witnesses,
    consistency_ground,
    export_grounds,
    keys_ground,
    witnesses_ground,
)
from services.disputes.receipt_check import keys_of, receipts_of, verify_with_receipts
from services.fairness.transparency.checkpoint import CheckpointError, WitnessKey, parse_witness_vkey
from services.fairness.transparency.verify import check_log
from services.history.verify import HEX64, UnreadableExport, parse_entries, read_json
from services.history.verify_report import unmet, waiting_on

HEX16 = re.compile(r"[0-9a-f]{16}")
PENDING_EXIT = 3  # every check passed but one still waits (the public log): not verified yet


def parse_receipt(text: str) -> tuple[int, str]:
    """``VERSION:HASH`` as kept from a command response's receipt."""
    version, _, hash_ = text.partition(":")
    if not version.isdigit() or not HEX64.fullmatch(hash_):
        raise argparse.ArgumentTypeError(f"a receipt is VERSION:HASH (64 hex digits), not {text!r}")
    return int(version), hash_


def parse_required(text: str) -> frozenset[str]:
    """``--require``'s comma-separated grounds, each one of ``REQUIRABLE``."""
    names = frozenset(name.strip() for name in text.split(",") if name.strip())
    unknown = sorted(names - set(REQUIRABLE))
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"--require takes a comma-separated list of {', '.join(REQUIRABLE)}, not {text!r}"
        )
    return names


def is_url(source: str) -> bool:
    return source.startswith(("https://", "http://"))


def fetched(url: str, what: str) -> str:
    """The text ``url`` answers (a GET, no redirect), ``UnreadableExport`` naming ``what`` when not."""
    try:
        answer = httpx.get(url, timeout=10.0, follow_redirects=False)
        answer.raise_for_status()
    except httpx.HTTPError as error:
        raise UnreadableExport(f"the {what} could not be fetched: {error}") from None
    return answer.text


def read_keys(source: str) -> tuple[Any, str]:
    """The keys document ``--keys`` names, and where it came from in words: a file's path, or the
    URL it was fetched from and when (``UnreadableExport`` when it cannot be had)."""
    if not is_url(source):
        return read_json(source), f"those of {source}, given apart from the file"
    try:
        document = json.loads(fetched(source, "keys"))
    except ValueError as error:
        raise UnreadableExport(f"the keys could not be fetched: {error}") from None
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return document, f"those of {source}, fetched at {when}, apart from the file"


def read_witnesses(source: str) -> list[WitnessKey]:
    """The witnesses ``--witnesses`` names: ``GET /log/witnesses``'s answer, or vkeys one a line (a
    file's path, or a URL fetched now); ``UnreadableExport`` when they cannot be read."""
    text = fetched(source, "witnesses") if is_url(source) else read_text(source)
    try:
        listed = json.loads(text)
        vkeys = [entry["vkey"] for entry in listed["witnesses"]]
    except (ValueError, TypeError, KeyError):
        vkeys = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    try:
        return [parse_witness_vkey(vkey) for vkey in vkeys]
    except (CheckpointError, AttributeError) as error:
        raise UnreadableExport(f"a witness key cannot be read: {getattr(error, 'message', error)}") from None


def pinned(document: Any, pins: frozenset[str], source: str | None) -> tuple[dict[str, Any], str]:
    """The keys document holding only the keys ``--pin`` names (by key id: the first 8 bytes of the
    key's SHA-256, so an id pins its key), and that trust in words; ``UnreadableExport`` when a
    pinned key is not among them."""
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise UnreadableExport("there are no signing keys to pin")
    kept = [key for key in keys if isinstance(key, dict) and key.get("key_id") in pins]
    missing = sorted(pins - {key["key_id"] for key in kept})
    if missing:
        raise UnreadableExport(f"the pinned key {', '.join(missing)} is not among the signing keys")
    where = "the file" if source is None else "the keys given with --keys"
    return {**document, "keys": kept}, f"the ones pinned with --pin, found in {where}"


def parse_pins(text: str) -> frozenset[str]:
    """``--pin``'s comma-separated key ids, each 16 hex digits."""
    pins = frozenset(part.strip() for part in text.split(",") if part.strip())
    if not pins or not all(HEX16.fullmatch(pin) for pin in pins):
        raise argparse.ArgumentTypeError(
            f"--pin takes key ids of 16 hex digits, comma-separated, not {text!r}"
        )
    return pins


def read_text(path: str) -> str:
    """A text file (a signed note); ``UnreadableExport`` when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableExport(str(error)) from None


def parse_witness(text: str) -> WitnessKey:
    """``--witness``: a witness's C2SP tlog-cosignature key, ``<name>+<key ID>+<base64>``."""
    try:
        return parse_witness_vkey(text)
    except CheckpointError as error:
        raise argparse.ArgumentTypeError(f"{text!r}: {error.message}") from None


def main(argv: Sequence[str] | None = None) -> int:
    """0 verified, 1 a check failed, 2 unreadable, 3 pending (the module's docstring)."""
    parser = argparse.ArgumentParser(
        prog="tablestream verify", description="Verify an exported game, or a dispute bundle, offline."
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
    parser.add_argument(
        "--receipts",
        action="append",
        default=[],
        metavar="FILE",
        help="signed receipts as the web client downloads them (or a JSON list of receipts): each "
        "one's signature is checked and the history must hold it",
    )
    parser.add_argument(
        "--keys",
        metavar="FILE|URL",
        help="the service's public keys, kept apart from the export: a file, or the URL to fetch them "
        "from (https://<service>/.well-known/tablestream-keys); default: the export's own keys",
    )
    parser.add_argument(
        "--pin",
        type=parse_pins,
        metavar="KEY_ID,...",
        help="trust only the signing keys with these ids (as you noted them from the service, or as "
        "tablestream keys list prints them), whether the keys come from the file or from --keys",
    )
    parser.add_argument(
        "--require",
        type=parse_required,
        default=frozenset(),
        metavar="GROUNDS",
        help="fail unless each of these grounds passed (comma-separated: log, receipts, chat, keys, "
        "witnesses, consistency); without it a verdict names what it did not check",
    )
    parser.add_argument(
        "--witness",
        type=parse_witness,
        action="append",
        default=[],
        metavar="VKEY",
        help="a witness you trust (its tlog-cosignature key, <name>+<key ID>+<base64>); the log's "
        "checkpoint must be cosigned by --quorum of them",
    )
    parser.add_argument(
        "--witnesses",
        metavar="FILE|URL",
        help="more witnesses you trust: a list of vkeys (one a line), or GET /log/witnesses's answer, "
        "from a file or fetched from its URL (the service's own list: trust it as you trust the service)",
    )
    parser.add_argument(
        "--quorum",
        type=int,
        default=1,
        metavar="N",
        help="how many of the --witness keys must have cosigned the checkpoint (default 1)",
    )
    parser.add_argument(
        "--trusted-checkpoint",
        metavar="NOTE",
        help="a checkpoint of the public log you already hold (its signed note: GET /log/checkpoint "
        "earlier, or a witness's): the file's must extend it, or the log forked",
    )
    parser.add_argument(
        "--consistency",
        metavar="FILE",
        help="the log's consistency proof between the two checkpoints (GET /log/consistency?from=&to=)",
    )
    args = parser.parse_args(argv)
    reading = args.file
    try:
        trusted_witnesses = list(args.witness)
        if args.witnesses:
            reading = args.witnesses
            trusted_witnesses += read_witnesses(args.witnesses)
        if trusted_witnesses and not 1 <= args.quorum <= len(trusted_witnesses):
            parser.error(
                f"--quorum is between 1 and the {len(trusted_witnesses)} witnesses given, not {args.quorum}"
            )
        witnesses = Witnesses(trusted_witnesses, args.quorum)
        doc = read_json(args.file)
        receipts: list[Any] = [{"version": v, "hash": h} for v, h in args.receipt]
        for reading in args.receipts:
            receipts += receipts_of(read_json(reading))
        keys, keys_from = None, None
        if args.keys:
            reading = args.keys
            keys, keys_from = read_keys(args.keys)
            keys_of(keys)  # unreadable keys stop here, named as such
        if args.pin:
            own_keys = doc.get("keys") if isinstance(doc, dict) else None
            if own_keys is None and isinstance(doc, dict) and isinstance(doc.get("export"), dict):
                own_keys = doc["export"].get("keys")  # a bundle's export's
            keys, keys_from = pinned(keys if keys is not None else own_keys, args.pin, keys_from)
        trusted = Trusted()
        if args.trusted_checkpoint:
            reading = args.trusted_checkpoint
            trusted = Trusted(read_text(args.trusted_checkpoint))
        if args.consistency:
            reading = args.consistency
            trusted = Trusted(trusted.note, read_json(args.consistency))
        reading = args.file
        if is_bundle(doc):
            bundle = verify_bundle(doc, receipts, keys)
            signing = bundle_keys(doc, keys)
            grounds = [
                keys_ground(Keys(signing, keys_from)),
                witnesses_ground(doc, witnesses, signing),
                consistency_ground(doc, trusted, signing),
            ]
            print(bundle.render(grounds, args.require))
            checks = [*bundle.checks, *grounds]
            if any(check.outcome == "failed" for check in checks) or unmet(checks, args.require):
                return 1
            return PENDING_EXIT if waiting_on(checks) else 0
        report = verify_with_receipts(doc, receipts, keys)
        source = keys if keys is not None else (doc.get("keys") if isinstance(doc, dict) else None)
        own = keys_of(source) if source is not None else []
        if isinstance(doc, dict) and "log" in doc:
            # the game's heads in the signed checkpoint (services.fairness.transparency.verify)
            check_log(report, doc, parse_entries(doc), own)
        grounds = [
            *export_grounds(report, doc, len(receipts), Keys(own, keys_from), witnesses),
            consistency_ground(doc, trusted, own),
        ]
    except UnreadableExport as exc:
        print(f"tablestream verify: cannot read {reading}: {exc}", file=sys.stderr)
        return 2
    print(report.render(grounds, args.require))
    if not report.ok or unmet(grounds, args.require) or any(g.outcome == "failed" for g in grounds):
        return 1
    return PENDING_EXIT if not report.verified or waiting_on(grounds) else 0
