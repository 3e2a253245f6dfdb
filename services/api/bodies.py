"""The request bodies of docs/api.md as msgspec Structs (also the schemas of ``/openapi.json``).

Every string field is capped on its raw length (before any stripping), so no body can make the
server store more than the rules allow: a name of "a" and 65,000 spaces is refused here.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from domain.table import MAX_CLIENT_SEED, MAX_NAME

MAX_GAME_NAME = 32


class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    game: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_GAME_NAME)]
    players: int
    options: dict[str, Any] = {}


class JoinGame(msgspec.Struct, forbid_unknown_fields=True):
    # required without an account token; with one it defaults to the account's name
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)] | None = None
    client_seed: Annotated[str, msgspec.Meta(max_length=MAX_CLIENT_SEED)] | None = None


class SendCommand(msgspec.Struct, forbid_unknown_fields=True):
    command_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    command: dict[str, Any]
    expected_version: Annotated[int, msgspec.Meta(ge=0)] | None = None


class Register(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(max_length=200)]
    password: Annotated[str, msgspec.Meta(max_length=1024)] | None = None
    # a browser: the token only in the HttpOnly ts_account cookie, not in the answer's body
    cookie: bool = False


class Login(msgspec.Struct, forbid_unknown_fields=True):
    name: Annotated[str, msgspec.Meta(max_length=200)]
    password: Annotated[str, msgspec.Meta(max_length=1024)]
    cookie: bool = False


class SetPassword(msgspec.Struct, forbid_unknown_fields=True):
    password: Annotated[str, msgspec.Meta(max_length=1024)]
    # required when the account has a password already
    current_password: Annotated[str, msgspec.Meta(max_length=1024)] | None = None


class QuickPlayRequest(msgspec.Struct, forbid_unknown_fields=True):
    game: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_GAME_NAME)]
    players: Annotated[int, msgspec.Meta(ge=1, le=20)]
    # required without an account token; with one it defaults to the account's name
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME)] | None = None
    bots_after_wait: bool = False


class Empty(msgspec.Struct, forbid_unknown_fields=True):
    """A body with nothing to say: ``{}``."""


class FillBots(msgspec.Struct, forbid_unknown_fields=True):
    """The host seats bots of ``level`` (``domain.table.BOT_LEVELS``; an unknown one is
    ``invalid_bot_level``) in the ``count`` lowest free seats, or in every free seat without a
    count (more than are free, or under 1, is ``invalid_bot_count``): ``{}`` fills the table with
    ``normal`` bots; one request per level gives each seat its own."""

    level: str = "normal"
    count: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None


class ChatPost(msgspec.Struct, forbid_unknown_fields=True):
    """A chat message: ``text`` or ``reaction``, exactly one (``services.people.chat``). The text's raw
    length is capped far above the message limit so that a long one answers 413, not 422."""

    text: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    reaction: Literal["gg", "gl", "oops", "hurry", "thumbs_up", "laugh", "wow"] | None = None


class ChatReport(msgspec.Struct, forbid_unknown_fields=True):
    messages: Annotated[list[Annotated[int, msgspec.Meta(ge=1)]], msgspec.Meta(min_length=1, max_length=20)]
    reason: Literal["abuse", "spam", "coaching", "other"]


class ChatSettings(msgspec.Struct, forbid_unknown_fields=True):
    enabled: bool


VISIBLE = r"[^\s\x1c-\x1f\x85\ufeff]"
"""Some character that is white space neither to Python's ``re`` (which also counts U+001C-U+001F
and U+0085) nor to a JSON Schema's ECMAScript regex (which also counts U+FEFF): a text the server
finds blank is one its schema calls blank, for every client and validator."""


class OperatorReason(msgspec.Struct, forbid_unknown_fields=True):
    """Why an operator closes a table, bans or unbans an account, or handles a report (a note)."""

    # some character that is not white space: the server strips the reason before it records it
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=VISIBLE)]


class OpenDispute(msgspec.Struct, forbid_unknown_fields=True):
    """A dispute on ``round`` (omitted or null: the whole game), what is disputed in words; an
    operator may name the disputed ``seat`` (a player disputes their own)."""

    text: Annotated[str, msgspec.Meta(min_length=1, max_length=1000, pattern=VISIBLE)]
    round: Annotated[int, msgspec.Meta(ge=1)] | None = None
    seat: Annotated[int, msgspec.Meta(ge=0)] | None = None


class AddEvidence(msgspec.Struct, forbid_unknown_fields=True):
    """``receipts``: a JSON document of kept receipts (a list, or an object with ``receipts``);
    ``note``: words."""

    kind: Literal["receipts", "note"]
    content: Annotated[str, msgspec.Meta(min_length=1, max_length=60_000)]


class ResolveDispute(msgspec.Struct, forbid_unknown_fields=True):
    verdict: Literal["upheld", "rejected"]
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=1000, pattern=VISIBLE)]
