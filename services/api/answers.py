"""The answers of the tables, their history and the service as msgspec Structs: the types of
``/openapi.json``'s answers (``services.api.contract``). Handlers may answer dicts: these describe
exactly what they send, and schemathesis checks every answer against them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from domain.games import game_names

Seat = Annotated[int, Meta(ge=0)]
Version = Annotated[int, Meta(ge=1)]
GameName = Annotated[str, Meta(extra_json_schema={"enum": list(game_names())})]
Status = Literal["waiting", "playing", "finished", "expired", "closed"]
Hex64 = Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]
Base64 = Annotated[str, Meta(extra_json_schema={"format": "byte"})]


class ErrorBody(msgspec.Struct):
    code: str
    message: str


class Error(msgspec.Struct):
    """Every refusal: ``{"error": {"code", "message"}}`` (docs/api.md's codes)."""

    error: ErrorBody


class Receipt(msgspec.Struct):
    """A signed receipt (docs/fairness.md, 'Signed receipts'): the signature is Ed25519 over
    'tablestream-receipt-v1\\n<key_id>\\n<game_id>\\n<version>\\n<hash>\\n<signed_at>\\n', standard
    base64; verify it with the key of that id from /.well-known/tablestream-keys"""

    game_id: str
    version: Version
    hash: Annotated[str, Meta(pattern="^[0-9a-f]{64}$", description="The chain hash at that version")]
    key_id: Annotated[str, Meta(pattern="^[0-9a-f]{16}$")]
    signed_at: Annotated[int, Meta(description="Unix seconds; within the key's validity period")]
    signature: Base64


class CommandAnswer(msgspec.Struct):
    """``POST /games/{id}/commands``: the version, the events as this seat sees them, a receipt."""

    version: int
    events: list[Any]
    receipt: Receipt


class SigningKey(msgspec.Struct):
    key_id: Annotated[str, Meta(description="SHA-256 of the raw public key, first 8 bytes in hex")]
    algorithm: Literal["Ed25519"]
    public_key: Annotated[str, Meta(extra_json_schema={"format": "byte"}, description="Raw 32 bytes, base64")]
    not_before: Annotated[int, Meta(description="Unix seconds, included")]
    not_after: Annotated[
        int | None, Meta(description="Unix seconds, excluded; null while the key is current")
    ]
    name: Annotated[str, Meta(description="The key's name in C2SP signed notes")]
    vkey: Annotated[str, Meta(description="C2SP signed-note verifier key")]


class SigningKeys(msgspec.Struct):
    algorithm: Literal["Ed25519"]
    current: Annotated[str, Meta(description="The key id that signs now")]
    keys: list[SigningKey]


class ViewPlayer(msgspec.Struct):
    seat: Seat
    name: str
    bot: bool
    left: bool


class View(msgspec.Struct):
    """What the caller may see of a table at one version: the public part every viewer sees alike and
    the caller's own (a seat's hand, its choices); the fields of each game's state are the game's
    (docs/api.md)"""

    game: GameName
    game_id: str
    version: Annotated[int, Meta(ge=0)]
    status: Status
    phase: str
    seats: Annotated[int, Meta(ge=1)]
    players: list[ViewPlayer]
    to_act: list[Seat]
    clock: dict[str, Any] | UnsetType | None = UNSET


class LobbyTable(msgspec.Struct):
    """A table as the lobby lists it ('first': an established player's, listed first; 'turn_based'
    only when it is)"""

    game_id: str
    game: GameName
    seats: Annotated[int, Meta(ge=1)]
    seats_taken: Annotated[int, Meta(ge=0)]
    status: Status
    practice: bool
    version: Annotated[int, Meta(ge=0)]
    turn_based: Annotated[bool, Meta(extra_json_schema={"const": True})] | UnsetType = UNSET
    first: Annotated[bool, Meta(extra_json_schema={"const": True})] | UnsetType = UNSET


class Lobby(msgspec.Struct):
    games: list[LobbyTable]


class ReplayPlayer(msgspec.Struct):
    seat: Seat
    name: str


class ReplayRound(msgspec.Struct):
    round: Seat
    start: Version
    end: Version


class ReplayStep(msgspec.Struct):
    round: Seat
    kind: str
    n: Annotated[int, Meta(ge=1)]
    start: Version
    end: Version


class ReplayMove(msgspec.Struct):
    version: Version
    seat: Seat
    by: Literal["player", "bot", "timeout"]


class ReplayIndex(msgspec.Struct):
    """``GET /games/{id}/replay/index`` (``services.history.replay_index``)."""

    game: str
    head: Version
    players: list[ReplayPlayer]
    rounds: list[ReplayRound]
    steps: list[ReplayStep]
    moves: list[ReplayMove]
    you: Seat | None


class NotReady(msgspec.Struct):
    """The body of a 503 from ``/healthz`` (``services.api.probes``), not the error shape."""

    status: Literal["not_ready"]
    reason: Literal["shutting_down", "redis_unreachable"]
    message: str


class InviteAnswer(msgspec.Struct):
    game_id: str
    private: bool
    invite: str | None
    link: str


class RematchSeat(msgspec.Struct):
    seat: Seat
    name: str
    bot: bool
    answer: Literal["accepted", "declined", "pending"] | None


class Rematch(msgspec.Struct):
    game_id: str
    status: Literal["open", "pending", "creating", "made", "declined"]
    finished: bool
    seats: list[RematchSeat]
    declined_by: int | None
    new_game_id: str | None
    your_seat: int | None
    token: Annotated[str, Meta(description="The caller's seat token at the new table (its seat only)")] | (
        UnsetType
    ) = UNSET


class Created(msgspec.Struct):
    """``POST /games``: the table and the host's token; a private table's invite too."""

    game_id: str
    host_token: str
    private: bool | UnsetType = UNSET
    invite: str | UnsetType | None = UNSET
    link: str | UnsetType = UNSET


class Seated(msgspec.Struct):
    """A seat and its token (joining; a seat opened on another device)."""

    seat: Seat
    token: str


class SeatsFilled(msgspec.Struct):
    seats: list[Seat]


class SeatOnly(msgspec.Struct):
    """The seat left, or taken back."""

    seat: Seat


class Ok(msgspec.Struct):
    status: Literal["ok"]


class Alive(msgspec.Struct):
    status: Literal["alive"]
