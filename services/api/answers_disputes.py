"""The answers of disputes (``services.disputes.cases``) as msgspec Structs: the types of
``/openapi.json``'s answers (see ``services.api.answers``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.api.answers import Hex64, Seat, SigningKeys, Version
from services.api.answers_history import CutExport
from services.api.answers_people import GameLogProofs

DisputeId = Annotated[str, Meta(pattern="^[0-9a-f]{16}$")]
Ms = Annotated[int, Meta(description="ms since the epoch")]
Verdict = Literal["upheld", "rejected"]


class DisputeParty(msgspec.Struct):
    """Who acted: a seated player ('seat'), or an operator ('operator': 'admin' or an operator
    account's id, 'name' its display name)."""

    role: Literal["seat", "operator"]
    seat: Seat | None
    operator: str | None
    name: str | None


class DisputeOpenedEvent(msgspec.Struct, tag="dispute_opened", tag_field="type"):
    dispute_id: DisputeId
    game_id: str
    round: Annotated[int, Meta(ge=1)] | None
    text: str
    seat: Seat | None
    by: DisputeParty
    at: Ms


class EvidenceAddedEvent(msgspec.Struct, tag="evidence_added", tag_field="type"):
    kind: Literal["receipts", "note"]
    content: str
    by: DisputeParty
    at: Ms


class DisputeResolvedEvent(msgspec.Struct, tag="dispute_resolved", tag_field="type"):
    verdict: Verdict
    reason: str
    by: DisputeParty
    at: Ms


class DisputeSummary(msgspec.Struct):
    """A dispute as listed: what is disputed ('round' null: the whole game; 'seat': whose play),
    by whom, and where it stands."""

    dispute_id: DisputeId
    game_id: str
    round: Annotated[int, Meta(ge=1)] | None
    seat: Seat | None
    text: str
    opened_by: DisputeParty
    opened_at: Ms
    status: Literal["open", "resolved"]
    verdict: Verdict | None
    reason: str | None
    evidence: Annotated[int, Meta(ge=0, description="Pieces of evidence added")]


class BundleReadiness(msgspec.Struct):
    """Whether the bundle can be built now; when not, why ('dispute_sealed': the round's seed is
    secret, or the game runs and the history holds the next round's hidden deal)."""

    ready: bool
    code: Literal["dispute_sealed"] | UnsetType = UNSET
    reason: Literal["round_secret", "game_running"] | UnsetType = UNSET
    message: str | UnsetType = UNSET


class DisputeRecord(DisputeSummary):
    """The dispute's record: its summary, who resolved it, every event as stored, the bundle's
    readiness."""

    resolved_by: DisputeParty | None
    events: list[DisputeOpenedEvent | EvidenceAddedEvent | DisputeResolvedEvent]
    bundle: BundleReadiness


class GameDisputes(msgspec.Struct):
    disputes: list[DisputeSummary]


class OpenDisputes(msgspec.Struct):
    disputes: list[DisputeSummary]
    next: Annotated[str | None, Meta(description="The cursor of the following page; null on the last")]


class KeptReceipt(msgspec.Struct):
    """A receipt the player added as evidence, as their client kept it (other fields as they are)."""

    version: int
    hash: Hex64


class SeatViewAt(msgspec.Struct):
    version: Version
    view: Annotated[
        dict[str, Any],
        Meta(description="The seat's view (a spectator's when no seat is disputed), as GET view"),
    ]


class DisputeBundle(msgspec.Struct):
    """``tablestream-dispute-bundle/1``: everything an arbiter needs to settle one round
    (``services.disputes.bundle``); 'tablestream verify' checks it offline."""

    format: Literal["tablestream-dispute-bundle/1"]
    game_id: str
    round: Annotated[int, Meta(ge=1)] | None
    seat: Seat | None
    dispute: DisputeRecord
    export: CutExport
    receipts: list[KeptReceipt]
    views: list[SeatViewAt]
    keys: SigningKeys | UnsetType = UNSET
    log: GameLogProofs | UnsetType = UNSET


class BundleCheck(msgspec.Struct):
    name: str
    outcome: Literal["passed", "failed", "not checked", "unproven"]
    sentence: str


class BundleVerdict(msgspec.Struct):
    """The verifier's verdict on the bundle: 'ok' unless a check failed."""

    game_id: str | None
    round: int | None
    seat: int | None
    ok: bool
    checks: list[BundleCheck]
