"""Where a game lives in Redis.

Every key of one game carries the hash tag ``{<game_id>}`` so that each Lua script touches a single
Redis Cluster slot. The global indexes (lobby, dirty, waiting, hand-over, timers, paced bots)
are written with plain commands only, never from a game script, and on a cluster deployment live in
the queue's standalone Redis (``services.store.connection``).
"""

from __future__ import annotations

import hashlib
from typing import NamedTuple

PREFIX = "ts"
EVENTS_SUFFIX = ":events"
EVENTS_PATTERN = f"{PREFIX}:{{*}}{EVENTS_SUFFIX}"  # SCAN MATCH for every game's stream
LIVE_SUFFIX = ":live"

LOBBY = f"{PREFIX}:lobby"  # hash: game id -> JSON summary bytes
LOBBY_ORDER = f"{PREFIX}:lobby:order"  # zset: game id -> creation ordinal
LOBBY_SEQ = f"{PREFIX}:lobby:seq"  # counter giving those ordinals
LOBBY_FIRST = f"{PREFIX}:lobby:first"  # zset: id of a table created by an established account -> ms
LOBBY_FIRST_ORDER = 2**44
"""Added to the lobby ordinal of a table in ``LOBBY_FIRST`` when it is first listed: the lobby lists
those tables before the others, newest first in each part (``services.store.indexes.lobby``)."""
LOBBY_CHANNEL = f"{PREFIX}:lobby:live"  # channel on the indexes' server: a summary that changed
TIMERS = f"{PREFIX}:timers"  # zset: game id -> its timer's deadline (ms); an index, global like the lobby
PACED = f"{PREFIX}:paced"  # zset: "<game id>:<version>:<seat>" -> when that paced bot's move is due (ms)

IDEMPOTENCY_PREFIX = f"{PREFIX}:idempotency:"  # + SHA-256 of a client's Idempotency-Key (string, 24 h)
DIRTY = f"{PREFIX}:dirty"  # zset: game id -> ms since epoch when first marked as maybe lagging
WAITING = f"{PREFIX}:waiting"  # zset: game id -> ms since epoch of creation, while it waits for players
HANDOVER = f"{PREFIX}:handover"  # stream, memory only: game ids handed to the projection consumers
INDEXES_MARK = f"{PREFIX}:indexes"  # string: set once the indexes above are known complete (workers.sweeper)
ACTIVITY = f"{PREFIX}:activity"  # zset: waiting or playing game id -> ms of its last projected change
EXPIRED = f"{PREFIX}:expired"  # zset: expired table id -> ms it was first projected expired
ACCOUNTS_SEEN = f"{PREFIX}:accounts:seen"  # zset: account id -> ms of its last append
RETENTION_MARK = f"{PREFIX}:retention:indexed"  # string: every stored game and account was indexed once
DISPUTES_OPEN = f"{PREFIX}:disputes:open"  # zset: <game id>/<dispute id> -> ms opened
ARCHIVE_DUE = f"{PREFIX}:archive:due"  # zset: finished game id -> ms it was first projected finished
ARCHIVE_MARK = f"{PREFIX}:archive:indexed"  # string: every stored finished game was put in ARCHIVE_DUE once

INDEX_KEYS = frozenset(
    {
        LOBBY,
        LOBBY_ORDER,
        LOBBY_SEQ,
        LOBBY_FIRST,
        LOBBY_CHANNEL,
        TIMERS,
        PACED,
        DIRTY,
        WAITING,
        HANDOVER,
        INDEXES_MARK,
        ACTIVITY,
        EXPIRED,
        ACCOUNTS_SEEN,
        RETENTION_MARK,
        DISPUTES_OPEN,
        ARCHIVE_DUE,
        ARCHIVE_MARK,
    }
)
"""The global indexes' keys: commands on them are ``index`` calls (``services.store.requests``)."""

CHECKPOINT_FIELD = "checkpoint"  # in the views hash: the version the views were projected at
AT_FIELD = "at"  # in the views hash: the version its other fields hold (memory only: write_views.lua)


class GameKeys(NamedTuple):
    """The keys of one game (all in one slot) and its pub/sub channel."""

    events: str  # stream, never trimmed: entries 0-<version> with fields d (bytes), h (hex hash)
    commands: str  # hash: command id -> "<fingerprint> <first> <last>" (legacy, unscoped: read only)
    # hash: dedup_field(seat, command id) -> "<fingerprint> <first> <last>" (the fingerprint as
    # services.history.records.stored_fingerprint keeps it); and seat (digits, no colon: never a
    # dedup field) -> last version appended by that seat's commands, written with each record
    seat_commands: str
    seats: str  # hash: seat -> last version appended by that seat's commands (written before: read only)
    secret: str  # hash: root, master (hex); never in the stream
    views: str  # hash: checkpoint (durable), at plus projection fields (opaque bytes, memory only)
    tokens: str  # hash: SHA-256 of a bearer token -> "host" or the seat number
    live: str  # shard channel (SPUBLISH, same slot): "appended", and the version after each views write
    timer: str  # hash: t -> "<version> <deadline> <kind> <seats> <turn_seconds>" (store.timer_record)
    pending: str  # string (PX), memory only: set NX by the append scripts, the game is handed over


def check_game_id(game_id: str) -> str:
    """A game id must be non-empty and brace-free, or its hash tag would name another slot."""
    if not game_id or "{" in game_id or "}" in game_id:
        raise ValueError(f"invalid game id {game_id!r}")
    return game_id


SYSTEM_SCOPE = "sys"


def dedup_field(seat: int | None, command_id: str, system: bool = False) -> str:
    """A command id's field in ``seat_commands``: ids are scoped per seat, so two seats may use the
    same id and no answer tells one seat about another's ids. ``<seat>:<id>``, or ``:<id>`` for a
    request without a seat (joins); the seat is digits, so the first colon always ends it.

    Commands the system plays (``system``: timeouts, bots, expiry, leaves, reclaims, filling with
    bots) have a scope of their own, ``sys<seat>:<id>`` (``sys:<id>`` without a seat): a player's
    field always begins with a digit (or is a join's ``:``), so no id a player sends, whatever it
    is, can take the id of a timer's or a bot's command (issue 24)."""
    return f"{SYSTEM_SCOPE if system else ''}{'' if seat is None else seat}:{command_id}"


def game_keys(game_id: str) -> GameKeys:
    tag = f"{PREFIX}:{{{check_game_id(game_id)}}}"
    return GameKeys(
        events=tag + EVENTS_SUFFIX,
        commands=tag + ":commands",
        seat_commands=tag + ":seat-commands",
        seats=tag + ":seats",
        secret=tag + ":secret",
        views=tag + ":views",
        tokens=tag + ":tokens",
        live=tag + LIVE_SUFFIX,
        timer=tag + ":timer",
        pending=tag + ":pending",
    )


def game_id_of_events_key(key: bytes | str) -> str | None:
    """The game id in an events key found by SCAN, or ``None`` for a key that is not one (an
    account's stream, ``ts:{acct:<id>}:events``, matches the same pattern: no game id has a colon)."""
    game_id = _game_id_between(key, EVENTS_SUFFIX)
    return None if game_id is None or ":" in game_id else game_id


def game_id_of_live_channel(channel: bytes | str) -> str | None:
    """The game id of a live channel (a pattern subscriber's message), or ``None``."""
    return _game_id_between(channel, LIVE_SUFFIX)


def _game_id_between(key: bytes | str, suffix: str) -> str | None:
    text = key.decode() if isinstance(key, bytes) else key
    head = f"{PREFIX}:{{"
    tail = "}" + suffix
    if not (text.startswith(head) and text.endswith(tail)):
        return None
    game_id = text[len(head) : -len(tail)]
    if not game_id or "{" in game_id or "}" in game_id:
        return None
    return game_id


# -- accounts -------------------------------------------------------------------------------------

ACCOUNT_ID_LENGTH = 16  # hex characters


def account_events_key(account_id: str) -> str:
    """An account's own stream (its own slot: the hash tag is the account)."""
    return f"{PREFIX}:{{acct:{check_game_id(account_id)}}}:events"


def account_seated_key(account_id: str) -> str:
    """string: when the account last took (or began to take) a seat, in ms (its slot: retention)."""
    return f"{PREFIX}:{{acct:{check_game_id(account_id)}}}:seated"


def name_claim_key(skeleton: str) -> str:
    """The claim on a name's skeleton: a string holding the account id (SET NX claims it). Hashed so
    that no name can put braces, hence a hash tag, into the key."""
    return f"{PREFIX}:name:{hashlib.sha256(skeleton.encode()).hexdigest()}"


# -- players' read models: ratings, histories, leaderboards ------------------------------------------
# All in one slot (tag {ratings}): one script records a finished game in every account it touches.

RATINGS_TAG = f"{PREFIX}:{{ratings}}"


class RatingsKeys(NamedTuple):
    seq: str  # counter: the finish sequence, one per recorded game
    log: str  # stream 0-<seq>: g (game id), t (finish time, unix seconds): the order a rebuild replays
    finished: str  # hash: game id -> its sequence (the "already recorded" marker)
    records: str  # hash: game id -> JSON history record
    names: str  # hash: account id -> display name


RATINGS = RatingsKeys(
    seq=RATINGS_TAG + ":seq",
    log=RATINGS_TAG + ":log",
    finished=RATINGS_TAG + ":finished",
    records=RATINGS_TAG + ":records",
    names=RATINGS_TAG + ":names",
)
RATINGS_DERIVED_PATTERN = RATINGS_TAG + ":*"


def rating_key(game: str) -> str:
    """hash: account id -> JSON rating (mu, sigma, games) in ``game``."""
    return f"{RATINGS_TAG}:rating:{game}"


def board_key(game: str) -> str:
    """zset: account id -> displayed rating (ordinal) in ``game``."""
    return f"{RATINGS_TAG}:board:{game}"


def history_key(account_id: str) -> str:
    """zset: game id -> finish sequence, the games an account played."""
    return f"{RATINGS_TAG}:history:{account_id}"


# -- the public log of game heads (services.fairness.transparency) -------------------------------------------
# One slot (tag {tlog}): the append script checks the size and writes the leaves, the hashes and the
# indexes of one batch at once. Append-only: retention never deletes them.

TLOG_TAG = f"{PREFIX}:{{tlog}}"


class TlogKeys(NamedTuple):
    leaves: str  # list: leaf data (services.fairness.transparency.leaves), its position is the leaf index
    nodes: str  # hash: "<level>:<index>" -> 32-byte hash of that complete subtree (level 0: the leaf hash)
    leafset: str  # hash: 32-byte leaf hash -> leaf index (the leaf's identity is its content)
    heads: str  # hash: "<game id>:<version>" -> leaf index (one head per game and version, ever)
    games: str  # hash: game id -> its leaf indexes, space-separated, in the order appended
    scanned: str  # hash: game id -> the last version the appender read of its stream
    pending: str  # zset: game id -> newest version the projector saw worth logging (ZADD GT)
    checkpoint: str  # hash: size, note: the latest signed checkpoint (a C2SP signed note)
    checkpoints: str  # hash: tree size -> the signed checkpoint first published at that size


TLOG = TlogKeys(
    leaves=TLOG_TAG + ":leaves",
    nodes=TLOG_TAG + ":nodes",
    leafset=TLOG_TAG + ":leafset",
    heads=TLOG_TAG + ":heads",
    games=TLOG_TAG + ":games",
    scanned=TLOG_TAG + ":scanned",
    pending=TLOG_TAG + ":pending",
    checkpoint=TLOG_TAG + ":checkpoint",
    checkpoints=TLOG_TAG + ":checkpoints",
)


def tlog_cosignatures_key(text_digest: str) -> str:
    """hash: "<witness name> <key ID hex>" -> JSON {witness, line, known, vkey, timestamp}: the
    cosignatures received for the checkpoint whose text has this SHA-256 (hex)."""
    return f"{TLOG_TAG}:cosignatures:{text_digest}"


def tlog_cosigners_key(text_digest: str) -> str:
    """hash: a digest of a client network -> the "<witness name> <key ID hex>" of the one unknown
    witness whose cosignature that network added to the checkpoint whose text has this SHA-256."""
    return f"{TLOG_TAG}:cosigners:{text_digest}"
