"""The archive of finished games: a finished game leaves Redis some time after its finish, into one
compressed file, and every reader of a finished game reads it from there through the event store.

What moves: the game's stream (every entry's exact stored bytes and chain hash), its secret (the
seed material), its command records (``seat_commands``, the legacy ``commands``, ``seats``), its
views hash (a finished game's views are not kept: only the checkpoint, which is the head) and its
timer and pending flag. What stays in Redis: the game's tokens (a seat's bearer token still names
its seat), its chat and chat state (``services.store.chat``, read and written by their own code),
its disputes (``services.store.disputes``: a dispute may still be opened on an archived game, and
its evidence is the archived stream), its lobby summary, and everything outside its slot: the
public log of heads (``services.fairness.transparency``), the players' histories and ratings.

The file (``Archive.path_of``): ``<directory>/<aa>/<sha256 of the game id>.tsa``, holding ``MAGIC``
then a zlib-compressed msgpack ``ArchivedGame``. It is written whole to a temporary file in the same
directory, fsynced, renamed over its name and the directory fsynced, so a reader sees either no
file or a whole one, and a rewrite (the archiver ran twice) replaces it atomically. Files are never
changed after that, so each process keeps the last ones it read in memory.

One pass (``archive_due``, run by the sweeper): the finished games whose finish is older than the
policy's ``after_ms`` (``ARCHIVE_DUE``, written by the projector when it first sees a game finished;
``backfill_due`` indexes games finished before the index existed) are each read from Redis, written
to their file, the file read back and compared, and only then the game's keys deleted by one script
of its slot (``archive_game.lua``) that checks the head is still the one written, the views are at
it, no projection is pending, the game is finished and every dispute is resolved. A process that
dies between the file and the deletion leaves both; readers read Redis first, and the next pass
writes the same file again and deletes the keys. A game with an open dispute stays in Redis (its
index entry stays, and the next pass tries again).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec
import structlog

from domain.disputes import DisputeResolved
from services.history.folding import advance
from services.history.records import Entry, decode_stored
from services.store import disputes as store_disputes
from services.store import operations as ops
from services.store.keys import (
    ARCHIVE_DUE,
    ARCHIVE_MARK,
    CHECKPOINT_FIELD,
    dedup_field,
    game_keys,
)
from services.store.requests import Call, Operation, Pipelined, ScriptCall, index_call, version_of
from services.store.requests import text as _text

HOUR_MS = 3_600_000
MAGIC = b"TSARCHIVE1\n"
SUFFIX = ".tsa"
KEPT_IN_MEMORY = 256  # archived games a process keeps decoded (they never change)
BATCH = 100
MAX_BATCHES = 10  # per pass: up to 1,000 games while a backlog drains

log = structlog.get_logger("tablestream.archive")


class ArchivedGame(msgspec.Struct, frozen=True):
    """Everything of a finished game that leaves Redis, as it was stored there."""

    game_id: str
    entries: list[Entry]
    secret: dict[str, str]
    seat_commands: dict[str, str] = {}
    commands: dict[str, str] = {}
    seats: dict[str, str] = {}
    archived_at_ms: int = 0

    @property
    def head(self) -> int:
        return self.entries[-1].version if self.entries else 0


class ArchiveCorrupt(RuntimeError):
    """An archive file that is not a whole record of the game it is named for."""


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(ArchivedGame)


def encode(game: ArchivedGame) -> bytes:
    return MAGIC + zlib.compress(_encoder.encode(game), 6)


def decode(data: bytes, path: Path | str = "") -> ArchivedGame:
    if not data.startswith(MAGIC):
        raise ArchiveCorrupt(f"{path}: not an archived game")
    try:
        return _decoder.decode(zlib.decompress(data[len(MAGIC) :]))
    except (zlib.error, msgspec.DecodeError) as error:
        raise ArchiveCorrupt(f"{path}: {error}") from None


class Archive:
    """Archived games as files under ``directory`` (``TABLESTREAM_ARCHIVE_DIR``). Several processes
    of one machine share it; several machines share it only on a shared volume mounted at the same
    path in each (docs/operations.md, "Archive of finished games")."""

    def __init__(self, directory: Path | str, kept: int = KEPT_IN_MEMORY) -> None:
        self.directory = Path(directory)
        self._kept: OrderedDict[str, ArchivedGame] = OrderedDict()
        self._capacity = kept
        self._lock = threading.Lock()

    def path_of(self, game_id: str) -> Path:
        digest = hashlib.sha256(game_id.encode()).hexdigest()
        return self.directory / digest[:2] / f"{digest}{SUFFIX}"

    def has(self, game_id: str) -> bool:
        """Whether the game is archived (from memory, else one ``stat``)."""
        with self._lock:
            if game_id in self._kept:
                return True
        return self.path_of(game_id).is_file()

    def remembered(self, game_id: str) -> ArchivedGame | None:
        """The archived game if this process read it before, without I/O."""
        with self._lock:
            game = self._kept.get(game_id)
            if game is not None:
                self._kept.move_to_end(game_id)
            return game

    def read(self, game_id: str) -> ArchivedGame | None:
        """The archived game, ``None`` when it is not archived (``ArchiveCorrupt`` for a damaged
        file)."""
        game = self.remembered(game_id)
        if game is not None:
            return game
        path = self.path_of(game_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        game = decode(data, path)
        if game.game_id != game_id:
            raise ArchiveCorrupt(f"{path}: holds game {game.game_id!r}, not {game_id!r}")
        self._remember(game)
        return game

    def write(self, game: ArchivedGame) -> Path:
        """Write the game's file atomically and durably: a temporary file in the same directory,
        fsynced, renamed over the name, then the directory fsynced. Idempotent."""
        path = self.path_of(game.game_id)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(encode(game))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        _fsync_directory(path.parent)
        with self._lock:
            self._kept.pop(game.game_id, None)  # the next read is the file's
        return path

    def games(self) -> Iterator[ArchivedGame]:
        """Every archived game, one file at a time, in no particular order (a backup's reader)."""
        if not self.directory.is_dir():
            return
        for shard in sorted(self.directory.iterdir()):
            if not shard.is_dir():
                continue
            for path in sorted(shard.glob(f"*{SUFFIX}")):
                yield decode(path.read_bytes(), path)

    def _remember(self, game: ArchivedGame) -> None:
        with self._lock:
            self._kept[game.game_id] = game
            self._kept.move_to_end(game.game_id)
            while len(self._kept) > self._capacity:
                self._kept.popitem(last=False)


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


# -- what readers get from an archived game (``services.store.event_store``) ----------------------


def entries_after(game: ArchivedGame, after: int, limit: int | None) -> list[Entry]:
    """As ``operations.read``: the entries after version ``after``, at most ``limit``."""
    if after < 0 or (limit is not None and limit < 0):
        raise ValueError("after and limit must not be negative")
    chosen = game.entries[after:]
    return chosen if limit is None else chosen[:limit]


def seat_version(game: ArchivedGame, seat: int) -> int:
    """As ``operations.seat_version``."""
    field_ = str(seat)
    return max(int(game.seats.get(field_, 0)), int(game.seat_commands.get(field_, 0)))


def command_entry(
    game: ArchivedGame, command_id: str, seat: int | None, system: bool = False
) -> tuple[str, int, int] | None:
    """As ``operations.command_entry``: the seat's own record of the id, else a legacy record that
    seat wrote."""
    scoped = game.seat_commands.get(dedup_field(seat, command_id, system))
    if scoped is not None or system:
        return ops.parse_command(scoped)
    legacy = ops.parse_command(game.commands.get(command_id))
    if legacy is None:
        return None
    first = legacy[1]
    if not 1 <= first <= len(game.entries):
        return None
    try:
        stored = decode_stored(game.entries[first - 1].data)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    return legacy if stored.command is not None and stored.command.seat == seat else None


# -- the index of finished games --------------------------------------------------------------------


def note_finished(game_id: str, now_ms: int) -> Operation[None]:
    """The projector saw the game finished at ``now_ms`` (the first time counts)."""
    yield index_call("ZADD", ARCHIVE_DUE, "NX", now_ms, game_id)


def backfilled() -> Operation[bool]:
    return bool((yield index_call("EXISTS", ARCHIVE_MARK)))


def mark_backfilled(now_ms: int) -> Operation[None]:
    yield index_call("SET", ARCHIVE_MARK, now_ms)


# -- one game ---------------------------------------------------------------------------------------

Outcome = Literal["archived", "absent", "lagging", "disputed", "unfinished", "moved", "failed"]


@dataclass(frozen=True)
class Snapshot:
    """What the archiver read of a game from Redis: the record to write, and the disputes it saw."""

    game: ArchivedGame
    disputes: list[str]


def snapshot(game_id: str, now_ms: int) -> Operation[Snapshot | Outcome]:
    """The game as stored, to be archived; else why not: ``absent`` (no stream: archived or
    removed), ``lagging`` (its views are behind its head: a projection is due), ``disputed`` (a
    dispute is open), ``unfinished`` or ``moved`` (its head moved while it was read)."""
    k = game_keys(game_id)
    top, checkpoint, listed = yield Pipelined(
        (
            Call(("XREVRANGE", k.events, "+", "-", "COUNT", 1)),
            Call(("HGET", k.views, CHECKPOINT_FIELD)),
            Call(("ZRANGE", store_disputes.index_key(game_id), 0, -1)),
        )
    )
    if not top:
        return "absent"
    head = version_of(top[0][0])
    if head != int(checkpoint or 0):
        return "lagging"
    disputes = [_text(d) for d in listed]
    for dispute_id in disputes:
        events = yield from store_disputes.read(game_id, dispute_id)
        if not events or not isinstance(events[-1], DisputeResolved):
            return "disputed"
    secret, seat_commands, commands, seats = yield Pipelined(
        (
            Call(("HGETALL", k.secret)),
            Call(("HGETALL", k.seat_commands)),
            Call(("HGETALL", k.commands)),
            Call(("HGETALL", k.seats)),
        )
    )
    entries = yield from ops.read(game_id)
    if not entries or entries[-1].version != head:
        return "moved"
    if advance(game_id, None, entries).state.status != "finished":
        return "unfinished"
    game = ArchivedGame(
        game_id,
        entries,
        _texts(secret),
        _texts(seat_commands),
        _texts(commands),
        _texts(seats),
        now_ms,
    )
    return Snapshot(game, disputes)


def remove_archived(game_id: str, snapshot_: Snapshot) -> Operation[bool]:
    """Delete the game's archived keys (``archive_game.lua``) if nothing moved since the snapshot;
    then its entry in ``ARCHIVE_DUE``. ``True`` if removed."""
    k = game_keys(game_id)
    streams = [store_disputes.stream_key(game_id, d) for d in snapshot_.disputes]
    moved = (k.commands, k.seat_commands, k.seats, k.secret, k.timer)
    keys = [k.events, k.views, k.pending, store_disputes.index_key(game_id), *streams, *moved]
    removed = bool((yield ScriptCall("archive_game", keys, [snapshot_.game.head, len(streams)])))
    if removed:
        yield index_call("ZREM", ARCHIVE_DUE, game_id)
    return removed


def _texts(reply: Any) -> dict[str, str]:
    return {_text(key): _text(value) for key, value in (reply or {}).items()}


# -- a pass ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ArchivePolicy:
    """``after_ms`` after its finish a game is archived; ``enabled`` False: none is (what is
    archived already is still read)."""

    after_ms: int = 24 * HOUR_MS
    enabled: bool = True
    batch: int = BATCH
    max_batches: int = MAX_BATCHES


@dataclass
class Archived:
    """What one pass did: games archived, games found archived already (a pass died after their
    deletion), and games kept in Redis for now (lagging, disputed, moved, or ``failed``: their file
    could not be written or read back, logged; the next pass tries again)."""

    archived: list[str] = field(default_factory=list)
    done_before: list[str] = field(default_factory=list)
    kept: dict[str, Outcome] = field(default_factory=dict)


def archive_game(store: Any, archive: Archive, game_id: str, now_ms: int) -> Outcome:
    """Archive one game (``store``: a ``SyncEventStore``, whose module imports this one): its file
    first, read back and compared, then its keys. ``absent``: nothing of it left in Redis."""
    taken: Snapshot | Outcome = store.run(snapshot(game_id, now_ms))
    if not isinstance(taken, Snapshot):
        return taken
    archive.write(taken.game)
    written = archive.read(game_id)
    if written is None or [(e.version, e.hash, e.data) for e in written.entries] != [
        (e.version, e.hash, e.data) for e in taken.game.entries
    ]:
        raise ArchiveCorrupt(f"{archive.path_of(game_id)}: reads back different from what was written")
    if not store.run(remove_archived(game_id, taken)):
        return "moved"
    return "archived"


def archive_due(store: Any, archive: Archive, now_ms: int, policy: ArchivePolicy) -> Archived:
    """One pass at ``now_ms``: archive every game finished ``policy.after_ms`` ago, ``policy.batch``
    at a time while a batch comes back full, up to ``policy.max_batches`` batches."""
    done = Archived()
    if not policy.enabled:
        return done
    kept = 0  # due but kept: still in the index, so the next batch starts after them
    for _ in range(policy.max_batches):
        raw = store.run(_due(now_ms - policy.after_ms, kept, policy.batch))
        for game_id in raw:
            try:
                outcome = archive_game(store, archive, game_id, now_ms)
            except (OSError, ArchiveCorrupt) as error:  # this game's file: the others go on
                log.warning("archive_failed", game_id=game_id, error=f"{type(error).__name__}: {error}")
                outcome = "failed"
            if outcome == "archived":
                done.archived.append(game_id)
            elif outcome == "absent":
                store.run(_forget(game_id))
                if archive.has(game_id):
                    done.done_before.append(game_id)
            else:
                done.kept[game_id] = outcome
                kept += 1
        if len(raw) < policy.batch:
            break
    if done.archived or done.kept:
        log.info("archived", archived=len(done.archived), kept=len(done.kept))
    return done


def _due(cutoff_ms: int, offset: int, batch: int) -> Operation[list[str]]:
    raw = yield index_call("ZRANGEBYSCORE", ARCHIVE_DUE, "-inf", cutoff_ms, "LIMIT", offset, batch)
    return [_text(game_id) for game_id in raw]


def _forget(game_id: str) -> Operation[None]:
    yield index_call("ZREM", ARCHIVE_DUE, game_id)


def backfill_due(store: Any, now_ms: int) -> int:
    """Put every finished game stored in Redis in ``ARCHIVE_DUE`` as of ``now_ms`` (their finish
    time is not stored), where it is not there yet; then mark it done. Runs once: on data stored
    before the index existed, and again when the indexes' server lost it. Returns how many."""
    found = 0
    for game_id in store.scan_games():
        folded = advance(game_id, None, store.run(ops.read(game_id)))
        if folded.state.status == "finished":
            store.run(note_finished(game_id, now_ms))
            found += 1
    store.run(mark_backfilled(now_ms))
    log.info("archive_backfilled", found=found)
    return found
