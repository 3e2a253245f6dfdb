"""A dispute bundle: everything an arbiter needs to settle one round, in one JSON document.

``build_bundle`` (the service builds it from the stored stream and the dispute's record) holds

- ``export``: the game's export cut at the end of the disputed round's reveal
  (``services.history.cut``), or the whole export for a dispute on the whole game;
- ``receipts``: the receipts the disputing player added as evidence, as their client kept them
  (each at least ``version`` and ``hash``), up to the cut;
- ``views``: the disputed seat's view (``projections.views.seat_view``; a spectator's when no seat
  is disputed) at every version of the round, from its first event to the cut: what that seat was
  shown, which the verifier re-folds from the export and compares;
- ``keys``: the service's public keys (``services.fairness.signing``), which check the receipts'
  signatures and the log's checkpoint (an arbiter should compare them with the published ones);
- ``log``: the inclusion proofs of the game's heads in the public log, with a signed checkpoint
  (``services.fairness.transparency.log``): the bundle's head must be among them;
- ``dispute``: the dispute's record (what is disputed, by whom, its events) for the reader; the
  checks never rely on it.

``verify_bundle`` gives the verdict for the round, one check at a time, each passed, failed or not
checked with a sentence: the deal, the commands, the scores, the receipts (and their signatures),
the views, the head's place in the public log, and the rest of the export. ``tablestream verify
BUNDLE`` prints it; the dispute's page shows it (``GET .../disputes/{id}/verdict``) beside the
checks the browser makes itself.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from domain.table import TableState
from projections.views import seat_view
from services.disputes.receipt_check import kept, keys_of
from services.fairness.signing import PublicKey
from services.fairness.transparency.leaves import Head
from services.fairness.transparency.verify import LogUnusable, Unusable, read_proofs
from services.history.cut import build_cut_export
from services.history.records import Entry
from services.history.replay import SETUP, decode_stream, replay
from services.history.verify import UnreadableExport, parse_entries, verify_export
from services.history.verify_report import (
    CHANCE,
    HASH_CHAIN,
    RECEIPTS,
    RECORDS,
    RERUN,
    SCORES,
    SEED_CHAIN,
    Ground,
    Outcome,
    Report,
    qualified,
    render_grounds,
    unmet,
    waiting_on,
)

FORMAT = "tablestream-dispute-bundle/1"
HEX64 = re.compile(r"[0-9a-f]{64}")
_ROUND_CHECKS = (SEED_CHAIN, CHANCE, HASH_CHAIN, RECORDS, RERUN, SCORES, RECEIPTS)


def is_bundle(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def receipts_of(evidence: Sequence[str]) -> list[dict[str, Any]]:
    """The receipts in a player's evidence documents: ``{"receipts": [...]}`` or a bare list, each
    receipt an object with an integer ``version`` and a 64-hex ``hash`` (other fields, such as a
    signature, kept as they are). Raises ``ValueError`` naming what is wrong."""
    found: list[dict[str, Any]] = []
    for text in evidence:
        doc = msgspec.json.decode(text.encode("utf-8"))
        items = doc.get("receipts") if isinstance(doc, dict) else doc
        if not isinstance(items, list):
            raise ValueError("receipts evidence is a JSON list of receipts, or an object with 'receipts'")
        for item in items:
            if not (
                isinstance(item, dict)
                and isinstance(item.get("version"), int)
                and not isinstance(item.get("version"), bool)
                and isinstance(item.get("hash"), str)
                and HEX64.fullmatch(item["hash"])
            ):
                raise ValueError("each receipt has an integer 'version' and a 64-hex-digit 'hash'")
            found.append(item)
    return found


def round_span(entries: Sequence[Entry], round_number: int | None) -> tuple[int, int]:
    """The first and last version of a round's bucket (``None``: the whole stream)."""
    if round_number is None:
        return entries[0].version, entries[-1].version
    rp = replay(entries)
    versions = [item.version for item, batch, i in rp.events() if batch.event_round(i) == round_number]
    if not versions:
        return entries[-1].version, entries[-1].version
    return min(versions), max(versions)


def views_at(entries: Sequence[Entry], seat: int | None, first: int, last: int) -> list[dict[str, Any]]:
    """``seat``'s view after every version from ``first`` to ``last``, folded event by event."""
    table, _, items, problem = decode_stream(entries)
    if table is None or problem is not None:
        raise UnreadableExport(problem or "the stream cannot be decoded")
    state: TableState | None = None
    views = []
    for item in items:
        if item.event is None:
            raise UnreadableExport(f"version {item.version} cannot be decoded")
        state = table.evolve(state, item.event)
        if item.version > last:
            break
        if item.version >= first:
            views.append({"version": item.version, "view": seat_view(state, item.version, seat)})
    return views


def build_bundle(
    entries: Sequence[Entry],
    dispute: dict[str, Any],
    receipts: Sequence[dict[str, Any]],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The bundle of ``dispute`` (its record: ``round``, ``seat``, ...) over a game's stored stream.

    Raises ``services.history.cut.DisputeSealed`` while the round's bundle would show anything
    hidden; ``extra`` adds sections of other parts (keys, log proofs) as they are."""
    round_number = dispute.get("round")
    export = build_cut_export(entries, round_number)
    end = export["head"]["version"]
    kept = [entry for entry in entries if entry.version <= end]
    first, last = round_span(kept, round_number)
    seat = dispute.get("seat")
    return {
        "format": FORMAT,
        "game_id": export["game_id"],
        "round": round_number,
        "seat": seat,
        "dispute": dispute,
        "export": export,
        "receipts": [dict(r) for r in receipts if r["version"] <= end],
        "views": views_at(kept, seat, first, last),
        **(extra or {}),
    }


@dataclass
class BundleReport:
    """The verdict on one round: every check with its outcome and sentence, and the export's report."""

    game_id: str | None
    round: int | None
    seat: int | None
    checks: list[Ground] = field(default_factory=list)
    export: Report | None = None

    @property
    def ok(self) -> bool:
        return all(check.outcome != "failed" for check in self.checks)

    def as_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "round": self.round,
            "seat": self.seat,
            "ok": self.ok,
            "checks": [{"name": c.name, "outcome": c.outcome, "sentence": c.sentence} for c in self.checks],
        }

    def render(self, grounds: Sequence[Ground] = (), required: Collection[str] = ()) -> str:
        """The verdict in words, each check with its outcome; ``grounds``: what else it rests on
        (``services.disputes.grounds``: the keys, witnesses); ``required``: the checks a strict
        verdict needs passed (any other outcome makes it NOT VERIFIED)."""
        what = "the whole game" if self.round is None else f"round {self.round}"
        checks = [*self.checks, *grounds]
        lines = [f"Tablestream dispute bundle of game {self.game_id}, {what}:", *render_grounds(checks)]
        qualification = qualified(checks, required)
        if any(check.outcome == "failed" for check in checks):
            failed = [c.name for c in checks if c.outcome == "failed"]
            lines.append(f"NOT VERIFIED: {len(failed)} failed checks ({', '.join(failed)}).")
        elif unmet(checks, required):
            lines.append(qualification)
        elif waiting_on(checks):
            lines.append(f"PENDING, not yet verified: every other check passed, but {waiting_on(checks)}.")
        else:
            lines.append(f"VERIFIED: {what} was played as the rules and the committed seeds say.")
            if qualification:
                lines.append(qualification)
        return "\n".join(lines)


def _failures(
    report: Report, rounds: Sequence[int], checks: Sequence[str], unproven: bool = False
) -> list[str]:
    """The failures of ``checks`` in ``rounds`` (``unproven``: the evidence named as proving nothing)."""
    return [
        f"{report.rounds[r].label}: {detail}"
        for r in rounds
        if r in report.rounds
        for check, detail in (report.rounds[r].unproven if unproven else report.rounds[r].failures)
        if check in checks
    ]


def _check(name: str, failures: list[str], passed: str, applies: bool = True, absent: str = "") -> Ground:
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        return Ground(name, "failed", f"{failures[0]}{more}.")
    if not applies:
        return Ground(name, "not checked", absent)
    return Ground(name, "passed", passed)


def bundle_keys(doc: Mapping[str, Any], keys_document: Any | None = None) -> list[PublicKey]:
    """The keys a bundle's signatures are checked with: ``keys_document`` (fetched apart) when given,
    else the bundle's own ``keys``, else its export's."""
    source = keys_document if keys_document is not None else doc.get("keys")
    export = doc.get("export")
    if source is None and isinstance(export, Mapping):
        source = export.get("keys")
    return keys_of(source) if source is not None else []


def verify_bundle(
    doc: Any, extra_receipts: Sequence[Mapping[str, Any]] = (), keys_document: Any | None = None
) -> BundleReport:
    """Check a bundle offline; ``UnreadableExport`` when it is not one. ``extra_receipts``: more
    receipts the player kept; ``keys_document``: the service's public keys fetched apart (default:
    the bundle's own ``keys``), which check the receipts' signatures and the log's checkpoint."""
    if not is_bundle(doc):
        raise UnreadableExport(f"not a {FORMAT} document")
    export = doc.get("export")
    round_number = doc.get("round")
    seat = doc.get("seat")
    if round_number is not None and (not isinstance(round_number, int) or isinstance(round_number, bool)):
        raise UnreadableExport("the bundle's round is not a number")
    receipts: list[Mapping[str, Any]] = [
        r
        for r in (doc.get("receipts") if isinstance(doc.get("receipts"), list) else [])
        if isinstance(r, dict)
    ]
    receipts += list(extra_receipts)
    keys = bundle_keys(doc, keys_document)
    pairs = [kept(receipt, keys) for receipt in receipts]
    report = verify_export(export, pairs)
    result = BundleReport(report.game_id, round_number, seat, export=report)
    everything = sorted(report.rounds)
    rounds = everything if round_number is None else [r for r in everything if r <= round_number]
    what = "the whole game" if round_number is None else f"round {round_number}"
    deal_rounds = everything if round_number is None else [round_number]
    draws = [c for r in deal_rounds if r in report.rounds for c in report.rounds[r].chance]
    result.checks.append(
        _check(
            "deal",
            _failures(report, deal_rounds, (SEED_CHAIN, CHANCE)),
            f"{len(draws)} chance outcomes of {what} (the deal, the draws) re-derived from the "
            "committed seeds; each matches the history.",
        )
    )
    batches = sum(report.rounds[r].checked.get(RERUN, 0) for r in rounds if r in report.rounds)
    result.checks.append(
        _check(
            "commands",
            _failures(report, rounds, (HASH_CHAIN, RECORDS, RERUN)),
            f"{batches} commands up to the end of {what} are each legal in the state they were played "
            "in, and produce exactly the recorded events; the hash chain is intact.",
        )
    )
    result.checks.append(
        _check(
            "scores",
            _failures(report, everything, (SCORES,)),
            "The scores are what the rules compute from the history.",
        )
    )
    result.checks.append(_check_receipts(report, everything, len(pairs), any(p.signature for p in pairs)))
    result.checks.append(_check_views(doc, export, seat))
    result.checks.append(_check_log(doc.get("log"), keys, report))
    other = [
        f"{report.rounds[r].label}: {check}: {detail}"
        for r in everything
        for check, detail in report.rounds[r].failures
        if check not in _ROUND_CHECKS or (r not in rounds and r not in deal_rounds)
    ]
    result.checks.append(
        _check("export", other, "The rest of the export (its header, later rounds) verifies too.")
    )
    return result


def _check_receipts(report: Report, rounds: Sequence[int], count: int, signed: bool) -> Ground:
    """Failed only by a receipt the service signed that the history contradicts; a contradicting
    receipt without a valid signature of the service proves nothing and is named so (``unproven``):
    one fabricated receipt must not turn the service's verdict against it."""
    proofs = _failures(report, rounds, (RECEIPTS,))
    unproven = _failures(report, rounds, (RECEIPTS,), unproven=True)
    if proofs or not unproven:
        return _check(
            "receipts",
            proofs,
            f"All {count} receipts the player kept are in the history at their versions"
            + (", each signed by the service." if signed else "."),
            applies=bool(count),
            absent="The bundle carries no receipts of the player's.",
        )
    more = f" (and {len(unproven) - 1} more)" if len(unproven) > 1 else ""
    return Ground("receipts", "unproven", f"{unproven[0]}{more}.")


_LOG_UNUSABLE: dict[Unusable, tuple[Outcome, str]] = {
    "unreadable": ("failed", "The log's proof for the head cannot be read."),
    "no checkpoint": ("not checked", "The public log had published no checkpoint when the bundle was built."),
    "refused": ("failed", "The log's checkpoint cannot be trusted: {detail}"),
}


def _check_log(proofs: Any, keys: Sequence[PublicKey], report: Report) -> Ground:
    """The bundle's head must be a leaf of the public log, under a checkpoint the service signed
    (``services.fairness.transparency.verify.read_proofs``): another history of the same game (a fork
    handed to someone else) has another head."""
    if not isinstance(proofs, dict):
        return Ground("log", "not checked", "The bundle carries no proofs from the public log.")
    head = Head(report.game_id or "", report.head_version or 0, report.head_hash or "")
    try:
        log = read_proofs(proofs, keys)
    except LogUnusable as unusable:
        outcome, sentence = _LOG_UNUSABLE[unusable.kind]
        return Ground("log", outcome, sentence.format(detail=unusable.detail))
    leaf = log.at(head.version)
    if leaf is None or leaf.head is None:
        if log.unreadable_at(head.version):
            return Ground("log", *_LOG_UNUSABLE["unreadable"])
        if head.version in log.pending:
            return Ground(
                "log",
                "not checked",
                f"The head at version {head.version} was appended to the log after its latest checkpoint.",
            )
        return Ground(
            "log",
            "failed",
            f"The public log holds no head of this game at version {head.version}: this history is not "
            "the one the service published.",
        )
    if not leaf.included:
        return Ground(
            "log", "failed", f"The proof does not put the head at version {head.version} in the signed log."
        )
    if leaf.head != head:
        return Ground(
            "log",
            "failed",
            f"The public log holds another head at version {head.version} (hash {leaf.head.hash[:16]}…, "
            f"this history has {head.hash[:16]}…): the history was forked or rewritten.",
        )
    return Ground(
        "log",
        "passed",
        f"The head at version {head.version} is leaf {leaf.index} of the public log of "
        f"{log.checkpoint.size} leaves, under a checkpoint the service signed.",
    )


def _check_views(doc: dict[str, Any], export: Any, seat: Any) -> Ground:
    """The bundle's views must be the seat's views folded from the export, version by version."""
    views = doc.get("views")
    if not isinstance(views, list) or not views:
        return Ground("views", "not checked", "The bundle carries no views of the seat.")
    try:
        entries = parse_entries(export)
        versions = [v.get("version") for v in views if isinstance(v, dict)]
        if len(versions) != len(views) or not all(isinstance(v, int) for v in versions):
            return Ground("views", "failed", "A view of the bundle names no version.")
        ints = [v for v in versions if isinstance(v, int)]
        recomputed = views_at(entries, seat if isinstance(seat, int) else None, min(ints), max(ints))
    except (UnreadableExport, ValueError, TypeError, KeyError, AttributeError) as exc:
        return Ground("views", "failed", f"The seat's views cannot be rebuilt from the export: {exc}.")
    shown = {v["version"]: v.get("view") for v in views}
    expected = {v["version"]: msgspec.json.decode(msgspec.json.encode(v["view"])) for v in recomputed}
    wrong = sorted(v for v in shown if shown[v] != expected.get(v))
    who = f"seat {seat}" if isinstance(seat, int) else "a spectator"
    if wrong:
        return Ground(
            "views", "failed", f"The view of {who} at version {wrong[0]} is not what the history shows then."
        )
    return Ground(
        "views", "passed", f"The {len(shown)} views of {who} are what the history showed at each version."
    )


__all__ = ["FORMAT", "SETUP", "BundleReport", "build_bundle", "is_bundle", "receipts_of", "verify_bundle"]
