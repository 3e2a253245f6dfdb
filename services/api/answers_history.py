"""The answers of a game's history (its export, audit, events, scores and replay) as msgspec Structs:
the types of ``/openapi.json``'s answers (see ``services.api.answers``), as ``services.history`` and
``services.table.queries`` build them. What varies by game (an event's fields, a round of the score
pad) is left open: its common envelope is typed, the rest is the game's (docs/api.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.api.answers import GameName, Hex64, Seat, SigningKeys, Status, Version, View
from services.api.answers_accounts import RecordAccount
from services.api.answers_people import GameLogProofs

By = Annotated[
    Literal["player", "bot", "timeout"],
    Meta(description="Whom the event's batch came from: a player's command, a bot's, or a timeout's"),
]


class ExportSeat(msgspec.Struct):
    seat: Seat
    name: str
    client_seed: str


class ExportEntry(msgspec.Struct):
    """A stored entry exactly as stored: ``data`` is its bytes as UTF-8 text (the event batch's JSON)."""

    version: Version
    hash: Hex64
    data: str


class ExportHead(msgspec.Struct):
    version: Version
    hash: Hex64


class ExportClosed(msgspec.Struct):
    reason: str
    operator: Annotated[str, Meta(description="'admin', or an operator account's id")]


class ExportCut(msgspec.Struct):
    """A dispute bundle's export cut at the end of a round's reveal: the scores then."""

    round: Annotated[int, Meta(ge=1)]
    version: Version
    scores: list[int]


class ChatExportRecord(msgspec.Struct):
    n: Annotated[int, Meta(ge=1)]
    hash: Hex64
    data: Annotated[str, Meta(description="The record's stored JSON (canonical: sorted keys, no spaces)")]


class ChatExportHead(msgspec.Struct):
    n: Annotated[int, Meta(ge=0)]
    hash: Hex64


class ChatExport(msgspec.Struct):
    """The table's chat, its own hash chain (``services.history.chat_export``)."""

    format: Literal["tablestream-chat/1"]
    records: list[ChatExportRecord]
    head: ChatExportHead


class Export(msgspec.Struct):
    """A finished (or closed) game as one self-contained document (``services.history.export``):
    every stored entry as stored, and a header restating the stream's facts; a closed table has
    'closed' instead of 'scores' and 'winners'; 'keys' and 'log' (the public log's proofs) where
    known; 'chat' with ``chat=1``."""

    format: Literal["tablestream-export/1"]
    game_id: str
    game: GameName
    players: Annotated[int, Meta(ge=1)]
    options: Annotated[dict[str, Any], Meta(description="The table's options, as the game defines them")]
    practice: bool
    seats: list[ExportSeat]
    commitments: Annotated[list[Hex64], Meta(description="Each seed chain's commitment, by chain number")]
    revealed_seeds: Annotated[dict[str, str], Meta(description="Each revealed round's seed (hex), by round")]
    entries: list[ExportEntry]
    head: ExportHead
    scores: list[int] | UnsetType = UNSET
    winners: list[Seat] | UnsetType = UNSET
    closed: ExportClosed | UnsetType = UNSET
    keys: SigningKeys | UnsetType = UNSET
    log: GameLogProofs | UnsetType = UNSET
    chat: ChatExport | UnsetType = UNSET


class CutExport(Export):
    """The export cut at the end of the disputed round's reveal: no result, the round's scores
    ('cut') and the seeds revealed later that the cut history needs ('later_seeds'); the whole
    export when nothing follows the round."""

    cut: ExportCut | UnsetType = UNSET
    later_seeds: dict[str, str] | UnsetType = UNSET


class GameEvent(msgspec.Struct):
    """An event of the table as the caller may see it (hidden details redacted while the game runs,
    shown in full once it is over and to the operator): its version, its 'type' and who caused it;
    every other field is the event type's own (the game's or the table's, docs/api.md)."""

    version: Version
    type: Annotated[str, Meta(description="The event's type: 'table_created', 'player_joined', a game's")]
    by: By
    text: Annotated[str, Meta(description="The event in words, in the language asked ('lang')")] | (
        UnsetType
    ) = UNSET


class GameEvents(msgspec.Struct):
    """``GET /games/{id}/events``: a page of events after 'after', and the game's head version (never
    behind the page)."""

    events: list[GameEvent]
    version: Annotated[Version, Meta(description="The game's head version")]


class Fairness(msgspec.Struct):
    commitments: Annotated[list[Hex64], Meta(description="Each seed chain's commitment, by chain number")]
    revealed_seeds: Annotated[dict[str, str], Meta(description="Each revealed round's seed (hex), by round")]


class ScorePlayer(msgspec.Struct):
    """A seated player; 'account' only for a seat an account claimed."""

    seat: Seat
    name: str
    account: RecordAccount | UnsetType = UNSET


class Scoreboard(msgspec.Struct):
    """``GET /games/{id}/scores``: the table's facts and the game's score pad ('rounds': empty and
    'totals' zero while the table waits). A round's row and any further field are the game's: Skull
    {round, challenger, bid, outcome, points}, Skull King {round, seats: [{seat, bid, tricks, bonus,
    score, total}]}, 6 nimmt! a list of each seat's bullheads (and 'current': the round in play)."""

    game: GameName
    game_id: str
    version: Version
    status: Status
    players: list[ScorePlayer]
    winners: list[Seat]
    fairness: Fairness
    rounds: Annotated[list[Any], Meta(description="One row per scored round, as the game writes it")]
    totals: Annotated[list[int], Meta(description="Each seat's total, by seat")]


class SeedCheck(msgspec.Struct):
    """The revealed seed checked against its chain's commitment (docs/fairness.md)."""

    chain: Annotated[int, Meta(ge=0)]
    index: Annotated[int, Meta(ge=0)]
    commitment: Hex64 | None
    ok: bool


class ChanceOutcome(msgspec.Struct):
    version: Version
    type: Annotated[str, Meta(description="The chance event's type")]
    matched: Annotated[bool, Meta(description="Re-derived from the seed, it is the recorded one")]


class AuditEvent(msgspec.Struct):
    version: Version
    event: Annotated[
        dict[str, Any] | None,
        Meta(description="The event as the viewer may see it now (its 'type' and the type's own fields)"),
    ]


class AuditRound(msgspec.Struct):
    """A round of the audit (0: 'setup', the creation and joins, finished with round 1): its seed and
    the checks once the seed is revealed ('seed', 'seed_check' null before), whether its events are
    what the rules produce (null until it is finished), and its events."""

    round: Annotated[int, Meta(ge=0)]
    label: Annotated[str, Meta(description="'setup' or 'round <n>'")]
    finished: bool
    seed: Annotated[str, Meta(pattern="^[0-9a-f]+$")] | None
    seed_check: SeedCheck | None
    chance_outcomes: list[ChanceOutcome]
    rules_match: bool | None
    events: list[AuditEvent]


class HashChain(msgspec.Struct):
    ok: bool
    broken_at: Annotated[list[Version], Meta(description="The versions whose link does not check")]


class GameAudit(msgspec.Struct):
    """``GET /games/{id}/audit`` (``services.history.audit``): the stream's facts, its hash chain
    checked and, per round, the seed, its check, each chance outcome re-derived, the events; 'seat' is
    a player's own (null for the operator and spectators)."""

    game_id: str
    game: GameName
    practice: bool
    status: Status | Literal["unknown"]
    viewer: Literal["operator", "player", "spectator"]
    seat: Seat | None
    commitments: list[Hex64]
    head: ExportHead
    hash_chain: HashChain
    rounds: list[AuditRound]


class Replay(msgspec.Struct):
    """``GET /games/{id}/replay``: a finished game at one version, everything revealed: the
    spectator's and every seat's view as they were then (no clock: null) and that version's events in
    full."""

    version: Version
    head: Version
    spectator: View
    seats: Annotated[list[View], Meta(description="Each seat's view, by seat")]
    events: list[GameEvent]
