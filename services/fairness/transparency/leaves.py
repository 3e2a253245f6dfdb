"""What the log holds about a game: which heads are logged, and the fixed encoding of a leaf.

A leaf is ``(game id, version, head hash)``, encoded as bytes (the RFC 9162 leaf hash is
SHA-256(0x00 || these bytes))::

    "tablestream-head/v1" 0x00         20 bytes, a fixed label
    u16 big-endian length of game id   then the game id, ASCII
    u64 big-endian version
    32 bytes                           the chain hash at that version (services.history.records)

The same leaf logs the game's chat (``services.store.chat``) as it stood at each logged head: named
``<game id>/chat`` (``chat_stream``; a game id holds no ``/``), at the game head's version, with the
chain hash of the last chat record sent before that version (64 zeros before any: ``chat_head_at``).
Each record names the game version it was sent at, so that hash is fixed once the game reached the
version, and anyone holding the chat can compute it: the appender logs it with the game's head, and
a verifier asks the log for the chat's leaf beside each game head it proves. A chat cut, or chained
again, before a logged head is caught like a game rewritten.

A game's logged heads are the ends of the batches (the entries one command produced) that hold
``table_created`` (the creation, with its seed-chain commitment), ``seed_revealed`` (a round is
over: its seed is out), a round's end (the events each game's spec names in ``replay_cut.round_ends``:
a round's seed may stay sealed until the game ends), or ``game_finished`` /
``table_closed`` / ``table_expired`` (the final head).
A batch is ended by the next entry that carries a command, or by the head of the stream.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from domain.games import specs
from services.history.chat_export import GENESIS
from services.history.records import Entry

LABEL = b"tablestream-head/v1\x00"
ENDINGS = frozenset({"game_finished", "table_closed", "table_expired"})


def logged_events() -> frozenset[str]:
    """The event types whose batch ends in a logged head: every registered game's round ends, asked
    of the registry at use (a game registered later is logged alike)."""
    round_ends = {tag for game in specs() for tag in game.replay_cut.round_ends}
    return frozenset({"table_created", "seed_revealed", *round_ends, *ENDINGS})


CHAT_SUFFIX = "/chat"


def chat_stream(game_id: str) -> str:
    """The name a game's chat is logged under (a game id holds no ``/``: never another game's)."""
    return game_id + CHAT_SUFFIX


def chat_records(stored: Sequence[tuple[int, bytes, str]]) -> list[tuple[int, int, str]]:
    """Chat records (number, stored bytes, chain hash), in order, as (number, the game version each
    was sent at, chain hash); ``ValueError`` when a record names no version."""
    records = []
    for n, data, digest in stored:
        version = msgspec.json.decode(data).get("version")
        if type(version) is not int:
            raise ValueError(f"chat record {n} names no game version")
        records.append((n, version, digest))
    return records


def chat_head_at(game_id: str, records: Sequence[tuple[int, int, str]], version: int) -> Head:
    """The chat's leaf at the game's head ``version``: the chain hash of its last record sent before
    that version (``records`` as ``chat_records`` gives them), 64 zeros before any."""
    digest = GENESIS
    for _, sent_at, record_hash in records:
        if sent_at >= version:
            break
        digest = record_hash
    return Head(chat_stream(game_id), version, digest)


class Head(NamedTuple):
    game_id: str
    version: int
    hash: str  # hex, 64 digits


class _Tagged(msgspec.Struct):
    type: str


class _Entry(msgspec.Struct):
    event: msgspec.Raw
    command: msgspec.Raw = msgspec.field(default_factory=msgspec.Raw)  # empty: no command (mid-batch)


_entry_decoder = msgspec.json.Decoder(_Entry)
_tag_decoder = msgspec.json.Decoder(_Tagged)


def encode(head: Head) -> bytes:
    game = head.game_id.encode("ascii")
    digest = bytes.fromhex(head.hash)
    if len(digest) != 32:
        raise ValueError("a head hash is 32 bytes")
    return LABEL + struct.pack(">H", len(game)) + game + struct.pack(">Q", head.version) + digest


def decode(data: bytes) -> Head:
    if not data.startswith(LABEL):
        raise ValueError("not a tablestream head leaf")
    at = len(LABEL)
    (length,) = struct.unpack_from(">H", data, at)
    at += 2
    game = data[at : at + length].decode("ascii")
    at += length
    (version,) = struct.unpack_from(">Q", data, at)
    digest = data[at + 8 :]
    if len(digest) != 32:
        raise ValueError("a head leaf ends with a 32-byte hash")
    return Head(game, version, digest.hex())


def logged_heads(game_id: str, entries: Sequence[Entry]) -> tuple[list[Head], bool]:
    """The heads to log among ``entries`` (which begin a batch and end at the stream's head), and
    whether the game has ended in them."""
    heads: list[Head] = []
    logged_kinds = logged_events()
    ended = False
    logged = False
    for position, entry in enumerate(entries):
        stored = _entry_decoder.decode(entry.data)
        kind = _tag_decoder.decode(stored.event).type
        logged = logged or kind in logged_kinds
        ended = ended or kind in ENDINGS
        last = position + 1 == len(entries)
        if logged and (last or _begins_batch(entries[position + 1])):
            heads.append(Head(game_id, entry.version, entry.hash))
            logged = False
    return heads, ended


def _begins_batch(entry: Entry) -> bool:
    command = bytes(_entry_decoder.decode(entry.data).command)
    return command not in (b"", b"null")


def heads_of_stream(game_id: str, entries: Sequence[Entry]) -> list[Head]:
    """Every head a whole stream logs (the verifier and the export use it)."""
    return logged_heads(game_id, entries)[0]
