"""The answers of the play aids (the games' options the lobby builds its form from, a practice
table's hint, the post-game review) as msgspec Structs: the types of ``/openapi.json``'s answers (see
``services.api.answers``), as ``services.api.web``, ``services.table.hints`` and ``workers.review``
build them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from projections.narration import LANGUAGES
from services.api.answers import GameName, Hex64, Seat, Version

Command = Annotated[dict[str, Any], Meta(description="A command of the game, as sent to /commands")]
Language = Annotated[str, Meta(extra_json_schema={"enum": list(LANGUAGES)})]


class TableOption(msgspec.Struct):
    """An option as the lobby's form takes it: a 'choice' among 'values', else an integer or a
    boolean; its default (null: the server's), bounds (null: none) and meaning."""

    name: str
    type: Literal["choice", "integer", "boolean", "string", "number"]
    nullable: bool
    default: Any
    values: list[str] | None
    minimum: int | float | None
    maximum: int | float | None
    description: str


class PlayerCounts(msgspec.Struct):
    """The table sizes: 'min' and 'max', and where an option widens the range the largest it allows
    as 'max_with_<option>' (Skull's 'max_with_two_sets')."""

    min: Annotated[int, Meta(ge=1)]
    max: Annotated[int, Meta(ge=1)]


class GameOptions(msgspec.Struct):
    game: GameName
    title: str
    blurb: str
    package: str
    lower_score_wins: bool
    draws: Annotated[
        dict[str, str],
        Meta(description="Every label the game draws with from its chance, with the draw in words"),
    ]
    players: PlayerCounts
    options: Annotated[list[TableOption], Meta(description="The game's own options, then every table's")]


class PracticeSeed(msgspec.Struct):
    """A practice table's seed, as an option of the form."""

    name: Literal["seed"]
    type: Literal["string"]
    pattern: str
    description: str


class Options(msgspec.Struct):
    """``GET /games/options``: everything the browser client knows of each game, the practice seed
    and the narration's languages."""

    games: list[GameOptions]
    practice_seed: PracticeSeed
    languages: list[Language]


class HintReason(msgspec.Struct):
    key: Annotated[str, Meta(description="The reason's glossary key")]
    params: dict[str, Any]
    text: Annotated[str | None, Meta(description="The reason in the language (null: no words for it)")]


class HintReceipt(msgspec.Struct):
    """The head after the hint was recorded (unsigned, unlike a command's receipt)."""

    game_id: str
    version: Version
    hash: Hex64


class Hint(msgspec.Struct):
    """``POST /games/{id}/hint``: one of the seat's legal commands, in words, and the reason (null
    where the policy gives none)."""

    version: Annotated[Version, Meta(description="The version of the hint's 'hint_given'")]
    command: Command
    command_text: str
    reason: HintReason | None
    receipt: HintReceipt


class ReviewReason(msgspec.Struct):
    key: Annotated[str, Meta(description="The reason's glossary key")]
    params: dict[str, Any]


class Share(msgspec.Struct):
    command: Command
    share: Annotated[float, Meta(ge=0, le=1, description="Its share of the simulations")]
    text: str


class ReviewedMove(msgspec.Struct):
    """A move of the seat's player: what was played, what the strong level would have played from
    the seat's view then (with its reason), and the share of the simulations behind each candidate."""

    version: Version
    played: Command
    played_text: str
    strong: Command
    strong_text: str
    differs: bool
    shares: list[Share]
    played_share: Annotated[float, Meta(ge=0, le=1)]
    reason: ReviewReason | None


class Review(msgspec.Struct):
    """``GET /games/{id}/review``: the strong bot's review of one seat's moves; 'differs' counts the
    moves where it would have played otherwise."""

    game_id: str
    seat: Seat
    level: Literal["strong"]
    head: Version
    moves: list[ReviewedMove]
    differs: Annotated[int, Meta(ge=0)]


class ReviewComputing(msgspec.Struct):
    """The review is being built: ask again after 'retry_after' seconds (also the Retry-After header)."""

    status: Literal["computing"]
    retry_after: Annotated[int, Meta(ge=1)]
