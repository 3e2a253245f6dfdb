"""The requests every store operation is made of, and the helpers their parsers share.

An operation is a generator: it yields requests (``Call``, ``ScriptCall``, ``Pipelined``), is sent
each reply, and returns its parsed result. It does no I/O itself, so the async ``EventStore`` (the
HTTP command path) and the ``SyncEventStore`` (RQ workers, the CLI) share the same calls, checks
and parsers; only the loop that executes requests differs (``services.store.event_store``). The
operations live in ``operations`` (a game's stream and views), ``indexes`` (the global sets beside
the streams: dirty, waiting, lobby, timers), ``accounts`` and ``ratings``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal, TypeVar, get_args

from services.store.keys import INDEX_KEYS

ScriptName = Literal[
    "create",
    "append",
    "write_views",
    "project_views",
    "arm_timer",
    "drop_timer",
    "account_append",
    "release_name",
    "record_finish",
    "view_reads",
    "set_token",
    "remove_game",
    "remove_account",
    "account_seat",
    "chat_append",
    "quickplay",
    "confirm_record",
    "dispute_append",
    "swap_keys",
    "archive_game",
    "begin_projection",
    "handover",
    "handovers_taken",
]


_INCLUDE = re.compile(r"^-- include: (\w+)$", re.MULTILINE)


def _lua(name: str) -> str:
    """A script's text, each line ``-- include: <part>`` replaced by the text of ``<part>.lua`` (Redis
    scripts cannot load one another: functions several scripts share live in one file this way)."""
    # Anchored on "services.store.lua" (a namespace package of data files), not on "services": a
    # stale editable install can make "services" a namespace whose path files() cannot read.
    text = resources.files("services.store.lua").joinpath(f"{name}.lua").read_text(encoding="utf-8")
    return _INCLUDE.sub(lambda line: _lua(line.group(1)), text)


SCRIPT_NAMES: tuple[ScriptName, ...] = get_args(ScriptName)
SCRIPTS: dict[ScriptName, str] = {name: _lua(name) for name in SCRIPT_NAMES}


# -- requests -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One Redis command, as ``execute_command(*args)`` sends it (redis-py parses the reply).

    ``index``: the command is on a global index (``services.store.indexes``), which lives beside the
    queue when the store is a Redis Cluster (``services.store.connection``); otherwise on the store.
    Every other command names one key, its first argument, and on a cluster goes to that key's slot."""

    args: tuple[str | bytes | int | float, ...]
    index: bool = False
    apart: bool = False
    """A write wanted only where the indexes live apart from the store (a cluster): on one server
    the game's script does it in its own atomic step (``append.lua`` marks its game dirty), and a read
    of the same key (``EXISTS``) is sent in its place, so that the write costs no ``fsync`` of its
    own before the script's."""

    def __post_init__(self) -> None:
        if not self.index and len(self.args) > 1 and self.args[1] in INDEX_KEYS:
            raise ValueError(f"{self.args[0]!r} on the index {self.args[1]!r} must be an index call")

    @property
    def key(self) -> str | bytes | None:
        """The key the command touches (``None``: it names none, like ``PING``)."""
        return None if self.index or len(self.args) < 2 else self.args[1]  # type: ignore[return-value]


def index_call(*args: str | bytes | int | float) -> Call:
    """A command on a global index."""
    return Call(args, index=True)


def sent(call: Call, indexes_here: bool) -> tuple[str | bytes | int | float, ...]:
    """What is sent for ``call`` (``Call.apart``)."""
    if call.apart and indexes_here:
        return ("EXISTS", call.args[1])
    return call.args


@dataclass(frozen=True, slots=True)
class ScriptCall:
    """One run of a Lua script of ``SCRIPTS`` (EVALSHA, loading the script when the server lacks it)."""

    script: ScriptName
    keys: list[str]
    args: list[Any]
    durable: bool = False  # an acknowledged write: waits for the replicas the store is told to wait for
    index_keys: tuple[str, ...] = ()
    """Global index keys the script also writes when the indexes live on the store's one server;
    left off otherwise (a cluster, or indexes beside the queue), and the script then skips that
    part (the caller does it in a round trip of its own)."""

    index: bool = False
    """The script runs where the global indexes live (the queue's server beside a cluster), its keys
    all global index keys (``handover``, ``handovers_taken``)."""

    def all_keys(self, indexes_here: bool) -> list[str]:
        """The keys to send: the game's, then the index keys when the indexes are on this server."""
        return [*self.keys, *self.index_keys] if indexes_here and self.index_keys else self.keys


@dataclass(frozen=True, slots=True)
class Pipelined:
    """Commands sent in one round trip (no transaction); the reply is the list of their replies."""

    calls: tuple[Call, ...]
    across_games: bool = False  # keys of many games on purpose (a batch): may span slots; else one


Request = Call | ScriptCall | Pipelined
T = TypeVar("T")
Operation = Generator[Request, Any, T]
"""A store operation: yields requests, is sent their replies, returns its result."""


class BrokenStream(RuntimeError):
    """A stored stream is not contiguous: something bypassed the append script."""


def check_client(client: Any) -> None:
    """Stored event bytes must come back as bytes: refuse a client that decodes replies."""
    if client.get_encoder().decode_responses:
        raise ValueError("the event store needs a Redis client with decode_responses=False")


def version_of(stream_id: bytes | str) -> int:
    """The version in a stream id ``0-<version>``."""
    if isinstance(stream_id, bytes):
        if stream_id[:2] == b"0-" and stream_id[2:].isdigit():
            return int(stream_id[2:])
    elif stream_id[:2] == "0-" and stream_id[2:].isdigit():
        return int(stream_id[2:])
    raise BrokenStream(f"stream id {stream_id!r} is not a version id")


def int_or_zero(value: bytes | str | None) -> int:
    return 0 if value is None else int(value)


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def text_map(reply: Mapping[bytes, bytes] | Mapping[str, str]) -> dict[str, str]:
    """A hash as read (``HGETALL``) with text keys and values."""
    return {text(key): text(value) for key, value in reply.items()}


def clock_ms() -> int:
    """Milliseconds since the epoch (the score of the dirty and waiting sets)."""
    return int(time.time() * 1000)
