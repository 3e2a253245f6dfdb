"""The answers of a game's history (its export, audit, events and scores) as msgspec Structs: the
types of ``/openapi.json``'s answers (see ``services.api.answers``), as ``services.history`` builds
them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.api.answers import GameName, Hex64, Seat, SigningKeys, Version
from services.api.answers_people import GameLogProofs


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
