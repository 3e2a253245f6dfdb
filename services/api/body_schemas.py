"""The request bodies of ``/openapi.json`` as tight as the server's own checks, so that every body
the schema calls valid is one the server accepts (schemathesis' "schema-valid refusal" check). The
bodies are msgspec Structs (``services.api.bodies``); ``refine`` replaces what msgspec cannot state:

- ``CreateGame``: one alternative per game and player count, with that game's options (their
  bounds, a seat option's range, and beyond ``max_players`` the spec's ``widening_option``, as
  Skull's ``first_player`` and ``two_sets``) and the table's own (``seed``, ``turn_seconds``,
  ``expire_minutes`` up to ``domain.table.MAX_EXPIRE_MINUTES``, ``takeover_after``,
  ``bot_pace_ms``, ``turn_based``: longer turns and waits, ``REAL_TIME_BOUNDS``);
- names (``JoinGame``, ``Register``): words of letters of one script (``services.accounts.names``: Latin,
  Greek, Cyrillic, Hebrew, Arabic, Thai, Devanagari, Hangul, or Japanese/Chinese Han with kana),
  digits and ``'.-_``, single spaces between words. The server accepts more (combining marks,
  symbols); this is the part a schema can state;
- passwords: 8 to 256 characters (``services.accounts.registry``); ``expected_version`` up to
  ``services.api.http.MAX_VERSION``.

What no schema can know stays a state refusal: a name that is, or looks like, a registered one
(409 ``name_taken``, 422 ``name_confusable``), a command the table's game or turn does not allow.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from typing import Any

import msgspec
from confusable_homoglyphs import categories  # type: ignore[import-untyped]

from domain.games import GameSpec, specs
from domain.table import (
    MAX_CLIENT_SEED,
    MAX_EXPIRE_MINUTES,
    MAX_NAME,
    MAX_TURN_BASED_EXPIRE_MINUTES,
    MAX_TURN_SECONDS,
    TableTimers,
)
from services.accounts.names import MAX_LENGTH, MIN_LENGTH, MIN_SEAT_LENGTH, RESERVED, checked_characters
from services.accounts.registry import MAX_PASSWORD, MIN_PASSWORD
from services.api.http import MAX_VERSION
from services.errors import AppError
from services.people.chat import MAX_TEXT, REACTIONS
from services.table.commands import RESERVED_PREFIXES

_SCRIPTS: dict[str, tuple[frozenset[str], tuple[tuple[int, int], ...]]] = {
    "Latin": (frozenset({"LATIN"}), ((0x41, 0x5A), (0x61, 0x7A), (0xC0, 0x24F), (0x1E00, 0x1EFF))),
    "Greek": (frozenset({"GREEK"}), ((0x370, 0x3FF),)),
    "Cyrillic": (frozenset({"CYRILLIC"}), ((0x400, 0x4FF),)),
    "Hebrew": (frozenset({"HEBREW"}), ((0x5D0, 0x5EA),)),
    "Arabic": (frozenset({"ARABIC"}), ((0x620, 0x64A),)),
    "Thai": (frozenset({"THAI"}), ((0xE01, 0xE30),)),
    "Devanagari": (frozenset({"DEVANAGARI"}), ((0x904, 0x939),)),
    "Hangul": (frozenset({"HANGUL"}), ((0xAC00, 0xD7A3),)),
    "Japanese and Chinese": (
        frozenset({"HIRAGANA", "KATAKANA", "HAN"}),
        ((0x3041, 0x3096), (0x30A1, 0x30FA), (0x4E00, 0x9FFF)),
    ),
}
_COMMON = "0-9'._\\-"


def _usable(char: str, scripts: frozenset[str]) -> bool:
    """A letter of ``scripts`` that NFKC leaves alone and the name rule accepts on its own."""
    if not unicodedata.category(char).startswith("L") or unicodedata.normalize("NFKC", char) != char:
        return False
    if categories.alias(char) not in scripts:
        return False
    try:
        checked_characters(char, 1, 1)
    except AppError:
        return False
    return True


def _char_class(scripts: frozenset[str], ranges: tuple[tuple[int, int], ...]) -> str:
    kept = [code for low, high in ranges for code in range(low, high + 1) if _usable(chr(code), scripts)]
    runs: list[tuple[int, int]] = []
    for code in kept:
        if runs and runs[-1][1] == code - 1:
            runs[-1] = (runs[-1][0], code)
        else:
            runs.append((code, code))
    parts = [chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in runs]
    return "[" + "".join(parts) + _COMMON + "]"


@cache
def name_schema(low: int, high: int) -> dict[str, Any]:
    """A name of ``low`` to ``high`` characters, words of one script's letters (see the module)."""
    alternatives = []
    for script, (aliases, ranges) in _SCRIPTS.items():
        word = _char_class(aliases, ranges) + "+"
        alternatives.append({"title": script, "pattern": f"^{word}( {word})*$"})
    return {"type": "string", "minLength": low, "maxLength": high, "anyOf": alternatives}


def _table_options() -> dict[str, Any]:
    schema = msgspec.json.schema(TableTimers)
    properties: dict[str, Any] = dict(next(iter(schema["$defs"].values()))["properties"])
    properties["expire_minutes"] = {**properties["expire_minutes"], "maximum": MAX_TURN_BASED_EXPIRE_MINUTES}
    properties["seed"] = {
        "type": "string",
        "pattern": "^[0-9a-fA-F]{64}$",
        "description": "A practice table's seed: the same seed and client seeds deal the same cards",
    }
    return properties


def _game_options(game: GameSpec, players: int) -> dict[str, Any]:
    """The options of ``game`` at a table of ``players``: the options struct's own schema (its bounds
    are ``msgspec.Meta`` on the fields), a seat option up to the last seat, and the option that
    widens the table required beyond ``max_players``."""
    schema = msgspec.json.schema(game.rules.options_type)
    properties: dict[str, Any] = dict(next(iter(schema["$defs"].values()))["properties"])
    required: list[str] = []
    for name in game.seat_options:
        properties[name] = _up_to(properties[name], players - 1)
    if players > game.max_players:
        properties[game.widening_option] = {"const": True}
        required.append(game.widening_option)
    for key in ("title", "description"):
        for value in properties.values():
            value.pop(key, None)
    return {
        "type": "object",
        "properties": {**properties, **_table_options()},
        "required": required,
        "additionalProperties": False,
        **REAL_TIME_BOUNDS,
    }


REAL_TIME_BOUNDS: dict[str, Any] = {
    "if": {"properties": {"turn_based": {"const": True}}, "required": ["turn_based"]},
    "else": {
        "properties": {
            "turn_seconds": {"maximum": MAX_TURN_SECONDS},
            "expire_minutes": {"maximum": MAX_EXPIRE_MINUTES},
        }
    },
}
"""A table that is not turn-based keeps a real-time table's bounds (``domain.table.table_timers``):
turns of a day at most, a wait for players of an hour at most."""


def _up_to(schema: dict[str, Any], maximum: int) -> dict[str, Any]:
    """``schema`` with every integer alternative bounded by ``maximum``."""
    if "anyOf" in schema:
        return {**schema, "anyOf": [_up_to(kind, maximum) for kind in schema["anyOf"]]}
    return {**schema, "maximum": maximum} if schema.get("type") == "integer" else schema


@cache
def create_game_schema() -> dict[str, Any]:
    alternatives = []
    for spec in specs():
        high = spec.max_players_with_options or spec.max_players
        for players in range(spec.min_players, high + 1):
            alternatives.append(
                {
                    "type": "object",
                    "required": ["game", "players", *(["options"] if players > spec.max_players else [])],
                    "properties": {
                        "game": {"const": spec.name},
                        "players": {"const": players},
                        "options": _game_options(spec, players),
                    },
                    "additionalProperties": False,
                }
            )
    return {"title": "CreateGame", "anyOf": alternatives}


def quickplay_schema() -> dict[str, Any]:
    """``POST /quickplay``: one alternative per game, with the player counts its table takes
    without options (``services.people.quickplay.check_queue``) and a seat's name."""
    alternatives = []
    for game in specs():
        alternatives.append(
            {
                "type": "object",
                "required": ["game", "players", "name"],
                "additionalProperties": False,
                "properties": {
                    "game": {"const": game.name},
                    "players": {"type": "integer", "minimum": game.min_players, "maximum": game.max_players},
                    "name": {
                        **name_schema(MIN_SEAT_LENGTH, MAX_NAME),
                        "description": "The seat's name; may be left out with an account token",
                    },
                    "bots_after_wait": {
                        "type": "boolean",
                        "default": False,
                        "description": "Bots may fill the table once the wait bound has passed",
                    },
                },
            }
        )
    return {"anyOf": alternatives}


def tighten(components: dict[str, Any]) -> None:
    """Replace the msgspec schemas of the bodies with the server's own bounds (see the module)."""
    components["CreateGame"] = create_game_schema()
    password = {"type": "string", "minLength": MIN_PASSWORD, "maxLength": MAX_PASSWORD}
    reserved = "|".join("".join(f"[{c.lower()}{c.upper()}]" for c in word) for word in sorted(RESERVED))
    account_name = {
        **name_schema(MIN_LENGTH, MAX_LENGTH),
        "not": {"pattern": f"^(?:{reserved}|[0-9a-fA-F]{{16}})$"},  # path words; an account id
        "description": "A display name: see docs/security.md for the whole rule",
    }
    register = components["Register"]
    register["properties"]["name"] = account_name
    register["properties"]["password"] = {"anyOf": [password, {"type": "null"}], "default": None}
    components["SetPassword"]["properties"]["password"] = password
    join = components["JoinGame"]
    join["properties"]["name"] = {
        **name_schema(MIN_SEAT_LENGTH, MAX_NAME),
        "description": "The seat's name; may be left out when joining with an account token (the "
        "account's own name is taken, and any other is refused)",
    }
    join["required"] = ["name"]
    components["SendCommand"]["properties"]["expected_version"] = {
        "anyOf": [{"type": "integer", "minimum": 0, "maximum": MAX_VERSION}, {"type": "null"}],
        "default": None,
    }
    join["properties"]["client_seed"] = {
        "anyOf": [{"type": "string", "maxLength": MAX_CLIENT_SEED}, {"type": "null"}],
        "default": None,
    }


REF = "#/components/schemas/{name}"
# A subset of what the server takes: letters, digits, spaces and common punctuation, not blank (the
# server also takes any other printable character, and refuses control characters: 422).
_CHAT_TEXT = r"^[ ]*[\p{L}\p{N}.,!?'()\-:;][\p{L}\p{N} .,!?'()\-:;]*$"
OPTIONS_TEXT = (
    "The game's options, plus the table's: 'seed' (a practice table), 'turn_seconds' (0 = no "
    "turn timer; default 0 for practice tables, 60 otherwise), 'expire_minutes' (a waiting "
    "table expires after this, default 30, at most 60), 'takeover_after' (timeouts in a row before a bot "
    "takes the seat, default 3), 'bot_pace_ms' (0-5000: how long a bot waits before it acts while "
    "a person sits at the table, so that its moves can be followed; 0 = at once; default: the "
    "server's TABLESTREAM_BOT_PACE_MS, 1000), 'turn_based' (true: turns up to 604800 s, a "
    "week, and a wait for players up to 1440 minutes, default 1440; else turns up to 86400 s: "
    "422 turn_too_long), 'private' (default false: never listed in the "
    "lobby, seen and joined only with its invite link; the create answer then has 'invite' and "
    "'link'), 'bot_level' (easy, normal or strong: the level of a bot that takes a seat over, "
    "default normal)"
)


def chat_post_schema() -> dict[str, Any]:
    """``ChatPost``: a text or a reaction, exactly one (a text the schema calls valid is stored)."""
    text = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "pattern": _CHAT_TEXT}
    return {
        "title": "ChatPost",
        "description": f"A text (trimmed, 1-{MAX_TEXT} characters, no control characters) or a "
        "reaction key, exactly one",
        "oneOf": [
            {
                "type": "object",
                "required": ["text"],
                "properties": {"text": text},
                "additionalProperties": False,
            },
            {
                "type": "object",
                "required": ["reaction"],
                "properties": {"reaction": {"enum": list(REACTIONS)}},
                "additionalProperties": False,
            },
        ],
    }


def refine(components: dict[str, Any], commands: list[dict[str, Any]]) -> None:
    """The bodies' components as tight as the server (see the module); ``commands``: the schemas of
    every game's command union, together the ``Command`` of ``SendCommand``."""
    components["Command"] = {"anyOf": commands}
    send = components["SendCommand"]
    send["properties"]["command"] = {"$ref": REF.format(name="Command")}
    send["properties"]["command_id"] |= {
        "pattern": "^(?!" + "|".join(RESERVED_PREFIXES) + ")",
        "description": "The seat's own id for this command (a retry sends the same one); ids "
        "beginning like the server's own (" + ", ".join(RESERVED_PREFIXES) + ") are refused: 422 "
        "reserved_command_id",
    }
    tighten(components)
    components["CreateGame"]["description"] = OPTIONS_TEXT
    components["QuickPlayRequest"] = quickplay_schema()
    if "ChatPost" in components:
        components["ChatPost"] = chat_post_schema()
    if "ChatReport" in components:
        items = components["ChatReport"]["properties"]["messages"]["items"]
        items["maximum"] = MAX_VERSION
