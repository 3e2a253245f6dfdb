"""The answers of the operator's console (``services.operating.operator``) as msgspec Structs: the
types of ``/openapi.json``'s answers (see ``services.api.answers``)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from services.api.answers import GameName, Receipt, Seat, Status
from services.api.answers_accounts import AccountId, Count
from services.api.answers_people import Sender

LogEntryId = Annotated[str, Meta(pattern=r"^\d{1,20}-\d{1,20}$", description="A log entry's id")]
Ms = Annotated[int, Meta(description="ms since the epoch")]
NEXT = "The cursor of the following page; null on the last"


class OperatorMe(msgspec.Struct):
    operator: Annotated[str, Meta(description="'admin' (the admin token) or an operator account's id")]
    name: str


class Figures(msgspec.Struct):
    """Live figures: readiness as ``/healthz`` gives it, the projections' lag, counts of tables and
    reports, the depth of each job queue (null: no queue server to ask)."""

    ready: bool
    health: Annotated[
        Literal["ok", "shutting_down", "redis_unreachable"],
        Meta(description="ok, or /healthz's reason for not being ready"),
    ]
    lag_ms: Annotated[int | None, Meta(description="Age of the oldest projection not caught up; null: none")]
    tables_waiting: Count
    tables_running: Count
    games_lagging: Count
    chat_reports: Count
    queue_projections: Count | None
    queue_lifecycle: Count | None
    queue_bots: Count | None
    queue_review: Count | None


class TableAccount(msgspec.Struct):
    id: AccountId
    name: str


class TablePlayer(msgspec.Struct):
    seat: Seat
    name: str
    account: TableAccount | None
    bot: bool


class OperatorTable(msgspec.Struct):
    """What the console shows of a table: nothing hidden (no hands, no seeds), names and accounts."""

    game_id: str
    game: GameName
    status: Status
    version: Annotated[int, Meta(ge=0)]
    seats: Annotated[int, Meta(ge=1)]
    practice: bool
    players: list[TablePlayer]


class FoundTables(msgspec.Struct):
    tables: list[OperatorTable]
    next: Annotated[str | None, Meta(description=NEXT)]


class ClosedTable(Receipt):
    """The close's signed receipt (as a command's), and the table's new status."""

    status: Literal["closed"]


class AccountSummary(msgspec.Struct):
    account_id: AccountId
    name: str
    banned: bool
    ban_reason: str | None


class FoundPlayer(AccountSummary):
    match: Literal["exact", "prefix", "lookalike", "id"]


class FoundPlayers(msgspec.Struct):
    players: list[FoundPlayer]
    next: Annotated[str | None, Meta(description=NEXT)]


class RecentGame(msgspec.Struct):
    """A finished game of the account: from its record, or only its id and replay when the record
    is gone ('rank' and 'score' null: the account's seat not found in it)."""

    game_id: str
    replay: str
    game: GameName | msgspec.UnsetType = msgspec.UNSET
    title: str | msgspec.UnsetType = msgspec.UNSET
    finished_at: Annotated[float, Meta(description="Unix seconds")] | msgspec.UnsetType = msgspec.UNSET
    rated: bool | msgspec.UnsetType = msgspec.UNSET
    rank: Annotated[int, Meta(ge=1)] | msgspec.UnsetType | None = msgspec.UNSET
    score: int | msgspec.UnsetType | None = msgspec.UNSET
    players: Count | msgspec.UnsetType = msgspec.UNSET


class PlayerCard(AccountSummary):
    """An account's card: whether it is banned or an operator, and its last finished games."""

    operator: bool
    has_password: bool
    games_played: Count
    recent_games: list[RecentGame]


class Handled(msgspec.Struct):
    """Who marked a report handled, when, with which note."""

    operator: str
    name: str
    at: Ms
    note: str


class HandledReport(msgspec.Struct):
    id: LogEntryId
    handled: Handled


class ReportedMessage(msgspec.Struct):
    """A reported chat message, or only its number ('gone': removed with its table)."""

    n: Annotated[int, Meta(ge=1)]
    gone: Literal[True] | msgspec.UnsetType = msgspec.UNSET
    from_: Sender | msgspec.UnsetType | None = msgspec.field(default=msgspec.UNSET, name="from")
    name: str | msgspec.UnsetType | None = msgspec.UNSET
    channel: Literal["table", "rail"] | msgspec.UnsetType | None = msgspec.UNSET
    text: str | msgspec.UnsetType | None = msgspec.UNSET
    reaction: str | msgspec.UnsetType | None = msgspec.UNSET


class ChatReport(msgspec.Struct):
    """A chat report ('at' in ms since the epoch; 'handled': null until an operator marks it)."""

    id: LogEntryId
    game_id: str
    reason: str
    reporter: str
    at: Ms
    messages: list[ReportedMessage]
    handled: Handled | None


class ChatReports(msgspec.Struct):
    reports: list[ChatReport]
    next: Annotated[LogEntryId | None, Meta(description=NEXT)]


class AuditEntry(msgspec.Struct):
    """An entry of the audit log, as stored: every field a string ('at': ms since the epoch, in
    digits)."""

    id: LogEntryId
    at: Annotated[str, Meta(pattern=r"^\d+$")]
    operator: str
    name: str
    action: Literal[
        "table_closed",
        "account_banned",
        "account_unbanned",
        "report_handled",
        "dispute_resolved",
        "operator_granted",
        "operator_revoked",
    ]
    target: str
    reason: str


class AuditLog(msgspec.Struct):
    entries: list[AuditEntry]
    next: Annotated[LogEntryId | None, Meta(description=NEXT)]
