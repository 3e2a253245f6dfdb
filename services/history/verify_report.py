"""The verifier's report: per round bucket, which checks ran, which failed, and the chance outcomes.

Kept apart from the checks (``services.history.verify``) so that the CLI, the API and tests read one shape:
``Report.ok``, ``Report.failures()`` (each ``"<round>: <check>: <detail>"``) and ``Report.render()``.

A check can also be *pending*: not failed, not passed either, because what it needs does not exist
yet (the public log has not published the export's newest head). ``ok`` stays true for it (nothing
is wrong), ``verified`` does not, and ``render`` says why and when to try again (``waiting``).

Evidence can be *unproven*: a receipt that disagrees with the history but carries no valid
signature of the service (unsigned, forged, signed by a key the service never published, or of
another game) proves nothing against the service, since anyone can write one. It is named
(``unproven``, ``render``'s UNPROVEN lines) and fails nothing: ``ok`` and ``verified`` stay as the
history makes them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Literal

from services.history.replay import round_label

HASH_CHAIN = "hash chain"
RECORDS = "records"
SEED_CHAIN = "seed chain"
RERUN = "rules re-run"
CHANCE = "chance outcomes"
SCORES = "final scores"
HEADER = "export header"
RECEIPTS = "receipts"
CHAT = "chat"  # the optional chat section (services.history.chat_export)
CHECKS = (SEED_CHAIN, HASH_CHAIN, RECORDS, RERUN, CHANCE, SCORES, HEADER, RECEIPTS, CHAT)
_UNITS = {
    HASH_CHAIN: "entries linked",
    RECORDS: "records",
    RERUN: "batches",
    RECEIPTS: "receipts",
    CHAT: "chat records chained",
}
_SHOWN_FAILURES = 8


Outcome = Literal["passed", "failed", "pending", "not checked", "unproven"]


@dataclass(frozen=True)
class Ground:
    """One thing a verdict rests on (``log``, ``receipts``, ``keys``, ``witnesses``; a bundle's own
    checks too), with its outcome and a sentence saying why: what a verdict did *not* check is said
    as plainly as what it did (``Report.render``)."""

    name: str
    outcome: Outcome
    sentence: str


def unmet(grounds: Sequence[Ground], required: Collection[str]) -> list[Ground]:
    """The grounds a strict verdict requires (``required``: their names) that did not pass."""
    return [ground for ground in grounds if ground.name in required and ground.outcome != "passed"]


def waiting_on(grounds: Sequence[Ground]) -> str:
    """What a verdict waits for among its grounds, in words; empty when none is pending."""
    pending = [ground.name for ground in grounds if ground.outcome == "pending"]
    return (
        f"{', '.join(pending)} {'is' if len(pending) == 1 else 'are'} pending (see above)" if pending else ""
    )


def render_grounds(grounds: Sequence[Ground]) -> list[str]:
    """The lines that say what a verdict rests on, one a ground."""
    return [f"  {ground.outcome.upper():<12} {ground.name}: {ground.sentence}" for ground in grounds]


def qualified(grounds: Sequence[Ground], required: Collection[str]) -> str:
    """The sentence a verdict ends with: which required grounds did not pass (it is then NOT
    VERIFIED), or which grounds it does not cover; empty when every ground passed."""
    missing = unmet(grounds, required)
    if missing:
        named = ", ".join(f"{g.name} ({g.outcome})" for g in missing)
        return f"NOT VERIFIED: required but not passed: {named}."
    open_ = [g.name for g in grounds if g.outcome in ("not checked", "unproven")]
    if open_:
        return f"Not checked, so not covered by this verdict: {', '.join(open_)} (see above)."
    return ""


@dataclass(frozen=True)
class ChanceOutcome:
    """One recorded random outcome, re-derived from its round's seed."""

    version: int
    round: int
    type: str
    matched: bool


@dataclass
class RoundReport:
    """What was checked in one round bucket, and what failed."""

    round: int
    versions: list[int] = field(default_factory=list)
    seed: str | None = None
    chance: list[ChanceOutcome] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)
    pending: list[tuple[str, str]] = field(default_factory=list)
    unproven: list[tuple[str, str]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return round_label(self.round)

    def outcome(self, check: str) -> str | None:
        """``"failed"``, ``"ok"``, or ``None`` when the check did not apply to this round."""
        if any(name == check for name, _ in self.failures):
            return "failed"
        return "ok" if check in self.checked else None

    def line(self) -> str:
        span = f"v{min(self.versions)}-{max(self.versions)}" if self.versions else "-"
        parts = []
        for check in CHECKS:
            outcome = self.outcome(check)
            if outcome is None:
                continue
            if check == CHANCE:
                matched = sum(c.matched for c in self.chance)
                counts = f"{len(self.chance)} re-derived, {matched} matched"
            elif check in _UNITS:
                counts = f"{self.checked.get(check, 0)} {_UNITS[check]}"
            else:
                counts = ""
            name = f"seed {self.seed[:12]}…" if check == SEED_CHAIN and self.seed else check
            verdict = "ok" if outcome == "ok" else "FAILED"
            parts.append(f"{name} {verdict} ({counts})" if counts else f"{name} {verdict}")
        return f"{self.label:<9} {span:<12} " + " · ".join(parts)


@dataclass
class Report:
    """The verifier's verdict, per round; ``ok`` only when every check of every round passed."""

    game_id: str | None = None
    game: str | None = None
    head_version: int | None = None
    head_hash: str | None = None
    rounds: dict[int, RoundReport] = field(default_factory=dict)
    waiting: str | None = None  # what a pending check waits for, in words ("export again after ...")

    def round(self, number: int) -> RoundReport:
        if number not in self.rounds:
            self.rounds[number] = RoundReport(number)
        return self.rounds[number]

    def passed(self, number: int, check: str, count: int = 1) -> None:
        bucket = self.round(number).checked
        bucket[check] = bucket.get(check, 0) + count

    def fail(self, number: int, check: str, detail: str) -> None:
        self.round(number).checked.setdefault(check, 0)
        self.round(number).failures.append((check, detail))

    def pend(self, number: int, check: str, detail: str) -> None:
        """A check that cannot pass yet: not a failure, but the report is not verified while it lasts."""
        self.round(number).checked.setdefault(check, 0)
        self.round(number).pending.append((check, detail))

    def disregard(self, number: int, check: str, detail: str) -> None:
        """Evidence that proves nothing (an unsigned or forged receipt): named, not a failure."""
        self.round(number).checked.setdefault(check, 0)
        self.round(number).unproven.append((check, detail))

    def unproven(self) -> list[str]:
        """Every piece of evidence that proves nothing, as ``"<round>: <check>: <detail>"``."""
        return [
            f"{r.label}: {check}: {detail}"
            for _, r in sorted(self.rounds.items())
            for check, detail in r.unproven
        ]

    @property
    def ok(self) -> bool:
        """No check failed (a pending one is not a failure)."""
        return not self.failures()

    @property
    def verified(self) -> bool:
        """Every check passed: none failed, none pending."""
        return self.ok and not self.pending()

    def pending(self) -> list[str]:
        """Every pending check as ``"<round>: <check>: <detail>"``, rounds in order."""
        return [
            f"{r.label}: {check}: {detail}"
            for _, r in sorted(self.rounds.items())
            for check, detail in r.pending
        ]

    def failures(self) -> list[str]:
        """Every failure as ``"<round>: <check>: <detail>"``, rounds in order."""
        return [
            f"{r.label}: {check}: {detail}"
            for _, r in sorted(self.rounds.items())
            for check, detail in r.failures
        ]

    def render(self, grounds: Sequence[Ground] = (), required: Collection[str] = ()) -> str:
        """The report in words; ``grounds``: what the verdict rests on beyond the history (said before
        the verdict, which names what it does not cover); ``required``: the grounds a strict verdict
        needs passed (any other outcome makes it NOT VERIFIED)."""
        head = f"head version {self.head_version} (hash {(self.head_hash or '?')[:16]}…)"
        lines = [f"Tablestream export of {self.game} game {self.game_id}: {head}"]
        for _, bucket in sorted(self.rounds.items()):
            lines.append(bucket.line())
            for check, detail in bucket.failures[:_SHOWN_FAILURES]:
                lines.append(f"    FAILED {check}: {detail}")
            if len(bucket.failures) > _SHOWN_FAILURES:
                lines.append(f"    ... and {len(bucket.failures) - _SHOWN_FAILURES} more failures")
            for check, detail in bucket.pending:
                lines.append(f"    PENDING {check}: {detail}")
            for check, detail in bucket.unproven:
                lines.append(f"    UNPROVEN {check}: {detail}")
        if grounds:
            lines.append("What this verdict rests on:")
            lines += render_grounds(grounds)
        failures = self.failures()
        qualification = qualified(grounds, required)
        if failures:
            lines.append(f"NOT VERIFIED: {len(failures)} failed checks; the first: {failures[0]}")
        elif unmet(grounds, required):
            lines.append(qualification)
        elif self.pending() or waiting_on(grounds):
            waiting = self.waiting or waiting_on(grounds) or "a check is pending"
            lines.append(f"PENDING, not yet verified: every other check passed, but {waiting}.")
        else:
            lines.append(
                "VERIFIED: the history is intact, every seed matches its commitment, every chance "
                "outcome and event is what the rules produce, and the final scores are right."
            )
            if qualification:
                lines.append(qualification)
        return "\n".join(lines)
