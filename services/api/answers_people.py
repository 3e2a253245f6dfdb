"""The answers of people's capabilities (chat, "Your tables") and of the public log as msgspec
Structs: the types of ``/openapi.json``'s answers (see ``services.api.answers``)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from services.people.chat import REACTIONS

MAX_TREE_SIZE = 2**63 - 1  # the largest tree size a query may name (Redis integers are signed 64-bit)
Sender = Annotated[
    str,
    Meta(
        pattern="^(seat:[0-9]+|rail:[0-9a-f]{8})$",
        description="Who sent it: 'seat:<n>' or 'rail:<tag>' (what a reader mutes)",
    ),
]
TreeSize = Annotated[int, Meta(ge=0, le=MAX_TREE_SIZE)]


class ChatRecord(msgspec.Struct):
    """A record of the table's chat: a message or reaction ('message'), or the host turning chat off
    or on ('settings'). 'n' numbers it in the table's chat, or, with 'numbering': 'table', among the
    messages a person at the table sees while the game runs"""

    n: Annotated[int, Meta(ge=1)]
    kind: Literal["message", "settings"]
    at: Annotated[int, Meta(description="The server's time, ms since the epoch")]
    version: Annotated[int, Meta(ge=0, description="The game's head then")]
    channel: Literal["table", "rail"] | UnsetType = UNSET
    from_: Sender | UnsetType = msgspec.field(default=UNSET, name="from")
    name: str | UnsetType = UNSET
    seat: int | UnsetType | None = UNSET
    text: str | UnsetType = UNSET
    reaction: Annotated[str, Meta(extra_json_schema={"enum": list(REACTIONS)})] | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET
    numbering: Literal["table"] | UnsetType = UNSET


class PostedChat(msgspec.Struct):
    """``POST /games/{id}/chat``: the stored record ('numbering': 'table' for a person at the table
    while the game runs: 'n' is its table number)."""

    message: ChatRecord


class ChatPage(msgspec.Struct):
    """``GET /games/{id}/chat``: the records this caller may see; 'next': the number to ask after for
    more; 'merged': the game ended (the rail and the table in one list); 'enabled': chat is on."""

    messages: list[ChatRecord]
    next: Annotated[int, Meta(ge=0)]
    more: bool
    merged: bool
    enabled: bool


class ChatReported(msgspec.Struct):
    report: Annotated[
        str, Meta(pattern=r"^\d{1,20}-\d{1,20}$", description="The report's id in the operators' log")
    ]


class ChatSwitched(msgspec.Struct):
    """The chat's setting now, and the number of its last record."""

    enabled: bool
    n: Annotated[int, Meta(ge=0)]


class Opponent(msgspec.Struct):
    seat: int
    name: str
    bot: bool


class YourTable(msgspec.Struct):
    game_id: str
    game: str
    status: Literal["waiting", "playing"]
    version: int
    seat: Annotated[int, Meta(ge=0)]
    name: str
    opponents: list[Opponent]
    seats: int
    seats_taken: int
    awaiting: Annotated[bool, Meta(description="The game waits for your move")]
    taken_over: Literal["left", "timeouts", "host"] | None
    turn_based: bool
    practice: bool
    turn_seconds: int | None
    deadline_ms: int | None
    account: Annotated[bool, Meta(description="The account's seat (playable from any device)")]
    here: Annotated[bool, Meta(description="This browser holds the seat's token (its cookie)")]


class YourTables(msgspec.Struct):
    """``GET /me/tables`` and each event of ``/me/live``."""

    tables: list[YourTable]
    awaiting: Annotated[int, Meta(ge=0)]
    now_ms: int
    account: bool


class LogLeaf(msgspec.Struct):
    index: TreeSize
    version: Annotated[int, Meta(ge=1)]
    hash: Annotated[str, Meta(pattern="^[0-9a-f]{64}$")]
    leaf: Annotated[str, Meta(description="The leaf's bytes, base64")]
    proof: list[str]


class GameLogProofs(msgspec.Struct):
    format: Literal["tablestream-log-proofs/1"]
    checkpoint: Annotated[str | None, Meta(description="The signed checkpoint")]
    size: TreeSize
    leaves: list[LogLeaf]
    pending: list[int]
    chat: Annotated[
        list[LogLeaf] | UnsetType,
        Meta(
            description="The chat's leaves: at each game head, the chat as it stood then (game id "
            "<game>/chat; only where the log holds the game's chat)"
        ),
    ] = UNSET
    chat_pending: Annotated[
        list[int] | UnsetType, Meta(description="The versions of chat leaves appended after the checkpoint")
    ] = UNSET
    next_checkpoint: (
        Annotated[
            int,
            Meta(
                description="Unix seconds by which the log's next checkpoint is due: a head not in this "
                "checkpoint yet is provable after it (against the latest checkpoint only; in an export, only "
                "while its newest head is not proven)"
            ),
        ]
        | UnsetType
    ) = UNSET


class WitnessEntry(msgspec.Struct):
    name: str
    vkey: Annotated[
        str, Meta(description="Its C2SP tlog-cosignature key: <name>+<key ID>+base64(0x04 || key)")
    ]


class WitnessList(msgspec.Struct):
    """``GET /log/witnesses``: the witnesses this log is configured with (``log_witnesses``), whose
    cosignatures its checkpoints carry."""

    witnesses: list[WitnessEntry]


class ConsistencyProof(msgspec.Struct, rename={"from_": "from"}):
    """``GET /log/consistency``: an RFC 9162 consistency proof from tree size 'from' to 'to'."""

    from_: TreeSize
    to: TreeSize
    proof: Annotated[list[str], Meta(description="The proof's hashes, each base64")]


class Cosignature(msgspec.Struct):
    """A witness's cosignature of a checkpoint (C2SP tlog-cosignature); 'known': the witness is one the
    service is configured with (only those are added to ``GET /log/checkpoint``'s note)."""

    witness: Annotated[str, Meta(description="The witness's name")]
    line: Annotated[
        str, Meta(description="The signature line: — <witness name> base64(key ID || timestamp || sig)")
    ]
    known: bool
    vkey: Annotated[str, Meta(description="The witness's key: <name>+<key ID>+base64(0x04 || key)")]
    timestamp: Annotated[int, Meta(ge=0, description="Unix seconds, as the witness signed it")]


class Cosignatures(msgspec.Struct):
    """``GET /log/cosignatures``: the checkpoint (the signed note) and the cosignatures received for
    it, the configured witnesses' first."""

    checkpoint: str
    cosignatures: list[Cosignature]


class CosignatureAdded(msgspec.Struct):
    """``POST /log/cosignatures``: the cosignature as recorded."""

    cosignature: Cosignature
