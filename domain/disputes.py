"""A dispute: a player or an operator says a round (or a whole game) was not played fairly.

Event-sourced like a table, with its own stream per dispute (``services.store.disputes``): it is
opened (who, which game, which round, what is disputed in words), evidence is added while it is
open (a player's kept receipts, a note), and an operator resolves it once with a verdict and a
reason. The aggregate validates each step; the bundle that settles the round is built by the
services from the game's stream (``services.disputes.cases``), never stored here.

Pure: ids, clocks and authentication belong to the caller, which says who acts as a ``Party``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Union

import msgspec

from domain.kernel import Conflict, Event, Rejected

MAX_TEXT = 1000  # what is disputed, in words
MAX_REASON = 1000  # an operator's reason for a verdict
MAX_EVIDENCE = 60_000  # one piece of evidence (a receipts JSON document), in characters
MAX_EVIDENCE_ITEMS = 20
MAX_EVIDENCE_TOTAL = 200_000  # all the evidence of one dispute, in characters
MAX_DISPUTES_PER_TABLE = 20  # disputes one table holds, open or resolved
MAX_OPEN_PER_SEAT = 2  # disputes a player keeps open at one table
VERDICTS = ("upheld", "rejected")
EVIDENCE_KINDS = ("receipts", "note")

Role = Literal["seat", "operator"]
Verdict = Literal["upheld", "rejected"]
EvidenceKind = Literal["receipts", "note"]


class Party(msgspec.Struct, frozen=True, kw_only=True):
    """Who acts: a seated player of the game (``seat``), or an operator (``operator``: ``admin``
    or an operator account's id, ``name`` its display name)."""

    role: Role
    seat: int | None = None
    operator: str | None = None
    name: str | None = None


class DisputeOpened(Event, tag="dispute_opened", frozen=True):
    dispute_id: str
    game_id: str
    round: int | None  # None: the whole game
    text: str
    seat: int | None  # the seat whose play is disputed (its views go in the bundle); None: none
    by: Party
    at: int  # ms since the epoch


class EvidenceAdded(Event, tag="evidence_added", frozen=True):
    kind: EvidenceKind
    content: str  # a receipts JSON document as the player's client kept it, or a note in words
    by: Party
    at: int


class DisputeResolved(Event, tag="dispute_resolved", frozen=True):
    verdict: Verdict
    reason: str
    by: Party
    at: int


DisputeEvent = Union[DisputeOpened, EvidenceAdded, DisputeResolved]  # noqa: UP007


class DisputeState(msgspec.Struct, frozen=True, kw_only=True):
    dispute_id: str
    game_id: str
    round: int | None
    text: str
    seat: int | None
    opened_by: Party
    opened_at: int
    evidence: int = 0
    evidence_size: int = 0  # characters of evidence so far
    verdict: Verdict | None = None
    reason: str | None = None

    @property
    def open(self) -> bool:
        return self.verdict is None


def _fits(value: str, limit: int) -> bool:
    return 1 <= len(value.strip()) <= limit


def _party(by: Party) -> None:
    if by.role == "seat" and (by.seat is None or by.seat < 0 or by.operator is not None):
        raise Rejected("invalid_party", "A seated player acts with their seat number and nothing else.")
    if by.role == "operator" and (by.operator is None or by.seat is not None):
        raise Rejected("invalid_party", "An operator acts under their operator id and no seat.")


def open_dispute(
    dispute_id: str,
    game_id: str,
    round_number: int | None,
    text: str,
    by: Party,
    at: int,
    rounds_played: int,
    seats: int,
    seat: int | None = None,
) -> list[Event]:
    """Open a dispute on round ``round_number`` (``None``: the whole game) of a game in which
    ``rounds_played`` rounds have begun and ``seats`` seats exist. A player disputes their own
    seat's play; an operator may name a ``seat`` or none."""
    _party(by)
    if by.role == "seat":
        if seat is not None and seat != by.seat:
            raise Rejected("invalid_party", "A player disputes the play of their own seat.")
        seat = by.seat
    for number in (seat, by.seat):
        if number is not None and not 0 <= number < seats:
            raise Rejected("invalid_party", f"The game has seats 0 to {seats - 1}.")
    if round_number is not None and not 1 <= round_number <= max(rounds_played, 0):
        raise Rejected(
            "invalid_round",
            f"Round {round_number} has not been played: this game has played rounds 1 to {rounds_played}."
            if rounds_played
            else "No round of this game has begun yet.",
        )
    if not _fits(text, MAX_TEXT):
        raise Rejected("invalid_dispute_text", f"What is disputed has 1 to {MAX_TEXT} characters.")
    return [
        DisputeOpened(
            dispute_id=dispute_id,
            game_id=game_id,
            round=round_number,
            text=text.strip(),
            seat=seat,
            by=by,
            at=at,
        )
    ]


def check_room(disputes: Sequence[DisputeState], by: Party, started: bool) -> None:
    """Whether a table with ``disputes`` takes one more from ``by``: its game has begun (a waiting
    table has nothing to dispute), it holds fewer than ``MAX_DISPUTES_PER_TABLE``, and a player
    keeps at most ``MAX_OPEN_PER_SEAT`` open there. Operators are bounded by the table's cap only."""
    if not started:
        raise Conflict(
            "not_started", "Nothing has been played at this table yet: there is nothing to dispute."
        )
    if len(disputes) >= MAX_DISPUTES_PER_TABLE:
        raise Conflict(
            "too_many_disputes",
            f"A table holds at most {MAX_DISPUTES_PER_TABLE} disputes; an operator reads them.",
        )
    if by.role == "seat" and sum(d.open and d.opened_by == by for d in disputes) >= MAX_OPEN_PER_SEAT:
        raise Conflict(
            "too_many_disputes",
            f"You have {MAX_OPEN_PER_SEAT} disputes open at this table: add evidence to one of them, "
            "or wait for an operator's verdict.",
        )


def add_evidence(state: DisputeState, kind: str, content: str, by: Party, at: int) -> list[Event]:
    """Evidence from the player who opened the dispute or an operator, while it is open."""
    _party(by)
    if not state.open:
        raise Conflict("dispute_resolved", "The dispute is resolved; it takes no more evidence.")
    if by.role == "seat" and by != state.opened_by:
        raise Rejected(
            "not_disputant", "Only the player who opened the dispute, or an operator, adds evidence."
        )
    if kind not in EVIDENCE_KINDS:
        raise Rejected("invalid_evidence", f"Evidence is one of: {', '.join(EVIDENCE_KINDS)}.")
    if state.evidence >= MAX_EVIDENCE_ITEMS:
        raise Conflict(
            "too_much_evidence", f"A dispute holds at most {MAX_EVIDENCE_ITEMS} pieces of evidence."
        )
    if not _fits(content, MAX_EVIDENCE):
        raise Rejected("invalid_evidence", f"A piece of evidence has 1 to {MAX_EVIDENCE} characters.")
    if state.evidence_size + len(content.strip()) > MAX_EVIDENCE_TOTAL:
        raise Conflict(
            "too_much_evidence",
            f"A dispute holds at most {MAX_EVIDENCE_TOTAL} characters of evidence in all; "
            f"{MAX_EVIDENCE_TOTAL - state.evidence_size} are left.",
        )
    return [EvidenceAdded(kind=kind, content=content.strip(), by=by, at=at)]  # type: ignore[arg-type]


def resolve(state: DisputeState, verdict: str, reason: str, by: Party, at: int) -> list[Event]:
    """Only an operator resolves, once, with a verdict and a reason."""
    _party(by)
    if by.role != "operator":
        raise Rejected("not_an_operator", "Only an operator resolves a dispute.")
    if not state.open:
        raise Conflict("dispute_resolved", f"The dispute is already resolved ({state.verdict}).")
    if verdict not in VERDICTS:
        raise Rejected("invalid_verdict", f"A verdict is one of: {', '.join(VERDICTS)}.")
    if not _fits(reason, MAX_REASON):
        raise Rejected("invalid_reason", f"A reason has 1 to {MAX_REASON} characters.")
    return [DisputeResolved(verdict=verdict, reason=reason.strip(), by=by, at=at)]  # type: ignore[arg-type]


def evolve(state: DisputeState | None, event: Event) -> DisputeState:
    if isinstance(event, DisputeOpened):
        return DisputeState(
            dispute_id=event.dispute_id,
            game_id=event.game_id,
            round=event.round,
            text=event.text,
            seat=event.seat,
            opened_by=event.by,
            opened_at=event.at,
        )
    assert state is not None, "a dispute's first event is dispute_opened"
    if isinstance(event, EvidenceAdded):
        return msgspec.structs.replace(
            state, evidence=state.evidence + 1, evidence_size=state.evidence_size + len(event.content)
        )
    if isinstance(event, DisputeResolved):
        return msgspec.structs.replace(state, verdict=event.verdict, reason=event.reason)
    raise TypeError(f"not a dispute event: {event!r}")


def fold(events: Iterable[Event]) -> DisputeState | None:
    state: DisputeState | None = None
    for event in events:
        state = evolve(state, event)
    return state
