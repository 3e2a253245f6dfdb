"""Where a game lives in Redis.

Every key of one game carries the hash tag ``{<game_id>}`` so that each Lua script touches a single
Redis Cluster slot. The lobby keys are global: no game script may touch them (they would pull every
game into one slot), so the lobby is written with plain commands.
"""

from __future__ import annotations

from typing import NamedTuple

PREFIX = "ts"
EVENTS_SUFFIX = ":events"
EVENTS_PATTERN = f"{PREFIX}:{{*}}{EVENTS_SUFFIX}"  # SCAN MATCH for every game's stream

LOBBY = f"{PREFIX}:lobby"  # hash: game id -> JSON summary bytes
LOBBY_ORDER = f"{PREFIX}:lobby:order"  # zset: game id -> creation ordinal
LOBBY_SEQ = f"{PREFIX}:lobby:seq"  # counter giving those ordinals
TIMERS = f"{PREFIX}:timers"  # zset: game id -> its timer's deadline (ms); an index, global like the lobby

CHECKPOINT_FIELD = "checkpoint"  # in the views hash: the version the views were projected at


class GameKeys(NamedTuple):
    """The keys of one game (all in one slot) and its pub/sub channel."""

    events: str  # stream, never trimmed: entries 0-<version> with fields d (bytes), h (hex hash)
    commands: str  # hash: command id -> "<fingerprint> <first_version> <last_version>"
    seats: str  # hash: seat -> last version appended by that seat's commands
    secret: str  # hash: root, master (hex); never in the stream
    views: str  # hash: checkpoint plus projection fields (opaque bytes)
    tokens: str  # hash: SHA-256 of a bearer token -> "host" or the seat number
    live: str  # pub/sub channel: the projected version after each views write
    timer: str  # hash: version, deadline (ms), kind (turn/expire), seats, turn_seconds


def check_game_id(game_id: str) -> str:
    """A game id must be non-empty and brace-free, or its hash tag would name another slot."""
    if not game_id or "{" in game_id or "}" in game_id:
        raise ValueError(f"invalid game id {game_id!r}")
    return game_id


def game_keys(game_id: str) -> GameKeys:
    tag = f"{PREFIX}:{{{check_game_id(game_id)}}}"
    return GameKeys(
        events=tag + EVENTS_SUFFIX,
        commands=tag + ":commands",
        seats=tag + ":seats",
        secret=tag + ":secret",
        views=tag + ":views",
        tokens=tag + ":tokens",
        live=tag + ":live",
        timer=tag + ":timer",
    )


def game_id_of_events_key(key: bytes | str) -> str | None:
    """The game id in an events key found by SCAN, or ``None`` for a key that is not one."""
    text = key.decode() if isinstance(key, bytes) else key
    head = f"{PREFIX}:{{"
    tail = "}" + EVENTS_SUFFIX
    if not (text.startswith(head) and text.endswith(tail)):
        return None
    game_id = text[len(head) : -len(tail)]
    if not game_id or "{" in game_id or "}" in game_id:
        return None
    return game_id
