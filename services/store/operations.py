"""The operations on a game's own keys: its stream, command records, secret and views, written once
and run by either driver (``services.store.event_store``; the request types are in
``services.store.requests``, the global indexes beside the streams in ``services.store.indexes``).

Longer than 500 lines because it is the one place that knows a game's own keys: the create and
append scripts and their replies, the reads of the stream, records and secret, and the views and
live channel all share one key layout and one slot; the sections below keep them apart.

The stream: one never-trimmed stream per game, appended only through one Lua script. Versions are
stream ids ``0-<version>``: the head is read from the last id, never from XLEN, and an append lands
only on the exact expected head, so a stream is always contiguous from 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from domain.kernel import Event
from projections.views import PUBLIC_FIELD, compose
from services.history.folding import Folded, StateCache
from services.history.records import Entry, decode_stored, stored_fingerprint
from services.store.keys import (
    AT_FIELD,
    CHECKPOINT_FIELD,
    DIRTY,
    HANDOVER,
    TIMERS,
    WAITING,
    check_game_id,
    dedup_field,
    game_keys,
)
from services.store.requests import (
    BrokenStream,
    Call,
    Operation,
    Pipelined,
    ScriptCall,
    clock_ms,
    index_call,
    int_or_zero,
    text,
    version_of,
)
from services.store.timer_record import timer_fields

PAGE = 500  # entries per XRANGE round trip
HANDOVER_KEYS = (DIRTY, HANDOVER, TIMERS)
"""The indexes the append script writes when they live on the store's server (``append.lua``)."""
PENDING_TTL_MS = 30_000
"""How long a game's pending-projection flag outlives a hand-over that was lost (the process died
between the append and the hand-over, a stream at its bound): after it the next append hands the game
over again. The sweeper does not wait for it: it projects every lagging game it finds, and each
projection clears the flag as it begins."""
HANDOVER_BOUND = 100_000
"""The most entries the hand-over stream holds (``append.lua``, ``handover.lua``): with no consumer
running it stops growing there, and the games appended meanwhile stay marked dirty for the sweeper."""

ViewWrite = Literal["written", "stale", "mismatch"]
VIEW_WRITES: tuple[ViewWrite, ...] = ("written", "stale", "mismatch")


# -- replies --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AppendResult:
    """What the append script did: ``ok`` (first..last appended, head = last), ``dup`` (the command
    id was seen before: its original range and fingerprint) or ``conflict`` (head is the true head).
    ``poke``: this append set the game's pending-projection flag, so the game goes to the projection
    consumers; ``False`` when a projection was pending already. ``handed``: the append script also
    marked the game dirty, handed it over and indexed its timer (the indexes live on the store's one
    server), so nothing is left to the caller; otherwise the caller does that (``publish_appended``)."""

    status: Literal["ok", "dup", "conflict", "token"]
    first: int = 0
    last: int = 0
    head: int = 0
    fingerprint: str | None = None
    poke: bool = False
    handed: bool = False
    armed: int | None = None
    """The deadline this append armed (``None``: none): the one asked for, or the stored one when a
    turn timer keeps it (``append.lua``)."""
    role: str | None = None
    """``token``: the role the assumed token holds now (``None``: none)."""

    def handover(self) -> Handover:
        """What this append leaves to its caller."""
        return Handover(self.poke, self.armed, self.handed)


@dataclass(frozen=True, slots=True)
class Handover:
    """What a write leaves to its caller for the projection workers and the timer index
    (``services.store.queue.AppendNotifier``): ``poke``, the write set the game's pending flag (the
    game goes to the projection consumers); ``deadline``, the timer it armed (to index); ``handed``,
    the write's script did both already (``AppendResult.handed``): nothing is left to do."""

    poke: bool
    deadline: int | None = None
    handed: bool = False


def parse_command(value: bytes | str | None) -> tuple[str, int, int] | None:
    """A dedup record ``"<fingerprint> <first> <last>"`` (the fingerprint may hold spaces), its
    fingerprint as stored now (``stored_fingerprint``: a record written before holds the whole
    digest)."""
    if value is None:
        return None
    fingerprint, first, last = text(value).rsplit(" ", 2)
    return stored_fingerprint(fingerprint), int(first), int(last)


def parse_append(reply: Sequence[Any]) -> AppendResult:
    status = text(reply[0])
    if status == "legacy":
        status = "dup"
    if status == "ok":
        first, last, handover, armed = int(reply[1]), int(reply[2]), text(reply[4]), text(reply[5])
        return AppendResult(
            "ok",
            first=first,
            last=last,
            head=last,
            poke=text(reply[3]) == "1",
            handed=handover != "",
            armed=int(armed) if armed else None,
        )
    if status == "token":
        return AppendResult("token", role=text(reply[1]) or None)
    if status == "conflict":
        return AppendResult("conflict", head=int(reply[1]))
    if status == "dup":
        record = parse_command(reply[1])
        assert record is not None
        fingerprint, first, last = record
        return AppendResult("dup", first=first, last=last, fingerprint=fingerprint)
    raise RuntimeError(f"unexpected append reply {reply!r}")


def parse_views(reply: bytes | str) -> ViewWrite:
    outcome = text(reply)
    for known in VIEW_WRITES:
        if outcome == known:
            return known
    raise RuntimeError(f"unexpected write_views reply {reply!r}")


# -- create / append ------------------------------------------------------------------------------


def create(
    game_id: str, secret: Mapping[str, str], entry: Entry, more: Sequence[Entry] = ()
) -> Operation[bool]:
    """Store the secret and the create batch (``entry``, then ``more``) together and set the game's
    pending-projection flag (memory only); ``False`` if the game exists (nothing written: nothing to
    hand over)."""
    entries = [entry, *more]
    if [e.version for e in entries] != list(range(1, len(entries) + 1)):
        raise ValueError(f"a game starts at version 1, not {entry.version}")
    k = game_keys(game_id)
    args: list[Any] = [len(entries), PENDING_TTL_MS]
    for each in entries:
        args += [each.data, each.hash]
    for field, value in secret.items():
        args += [field, value]
    now = clock_ms()
    yield Pipelined(
        (index_call("ZADD", DIRTY, "NX", now, game_id), index_call("ZADD", WAITING, "NX", now, game_id))
    )
    return bool((yield ScriptCall("create", [k.events, k.secret, k.pending], args, durable=True)))


@dataclass(frozen=True, slots=True)
class TimerPlan:
    """The timer an append arms for its last version in the same atomic step: ``deadline`` (ms;
    ``None`` clears the timer) and its fields (``services.table.lifecycle.plan_timer``)."""

    deadline: int | None
    fields: Mapping[str, str | int]

    def deadline_arg(self) -> str | int:
        """The append script's timer argument: the deadline, or ``-`` to clear the timer."""
        return "-" if self.deadline is None else self.deadline

    def field_args(self) -> list[Any]:
        pairs: list[Any] = []
        for field, value in self.fields.items():
            pairs += [field, value]
        return pairs


def append(
    game_id: str,
    expected: int,
    command_id: str,
    fingerprint: str,
    seat: int | None,
    entries: Sequence[Entry],
    marked: bool = False,
    timer: TimerPlan | None = None,
    system: bool = False,
    token: tuple[str, str] | None = None,
) -> Operation[AppendResult]:
    """One command's entries at exactly ``expected`` + 1, once per command id. The game is marked
    dirty first, unless the caller did (``marked``: ``command_load`` marks it, or the script marks
    it itself: the indexes live on the store's server). ``timer``: armed for the last version in the
    same step (``None``: the timer is left alone; a turn timer keeps the stored deadline when the
    seats it times shrink). ``token`` (digest, role): an identity assumed from memory, checked
    first (``token``: it no longer holds that role; nothing else was checked or written). Where the
    indexes live on the store's server the script also hands the game over (``AppendResult.handed``).
    ``system``: a command the system plays, deduplicated in its own scope (``keys.dedup_field``); the
    legacy unscoped records are not consulted for it (they are players' ids from before ids were
    scoped, and every system command whose id repeats also carries an expected version, which a
    second run loses)."""
    if expected < 1:
        raise ValueError("a stream begins with create(); appends need expected >= 1")
    if not entries:
        raise ValueError("an append needs at least one entry")
    versions = [entry.version for entry in entries]
    if versions != list(range(expected + 1, expected + 1 + len(entries))):
        raise ValueError(f"entries {versions} do not follow version {expected}")
    if not command_id or not fingerprint:
        raise ValueError("an append needs a command id and a fingerprint")
    k = game_keys(game_id)
    pairs: list[Any] = []
    for entry in entries:
        pairs += [entry.data, entry.hash]
    legacy = "" if system else command_id
    if not marked:
        # before the append: a crash right after it still leaves a mark (on one server the script marks)
        yield Call(("ZADD", DIRTY, "NX", clock_ms(), check_game_id(game_id)), index=True, apart=True)
    while True:
        args: list[Any] = [
            expected,
            dedup_field(seat, command_id, system),
            stored_fingerprint(fingerprint),
            _seat_arg(seat),
            legacy,
            PENDING_TTL_MS,
            k.live,
            timer.deadline_arg() if timer is not None else "",
            clock_ms(),
            game_id,
            HANDOVER_BOUND,
            token[0] if token is not None else "",
            token[1] if token is not None else "",
            len(timer.fields) if timer is not None else 0,
            *(timer.field_args() if timer is not None else ()),
            *pairs,
        ]
        keys = [k.events, k.commands, k.seats, k.seat_commands, k.pending, k.timer, k.tokens, k.views]
        reply = yield ScriptCall("append", keys, args, durable=True, index_keys=HANDOVER_KEYS)
        if text(reply[0]) == "legacy" and not (yield from _legacy_owned(k.events, reply[1], seat)):
            legacy = ""  # another seat's id from before ids were scoped: free for this seat
            continue
        return parse_append(reply)


def _seat_arg(seat: int | None) -> str | int:
    return "" if seat is None else seat


def _legacy_owned(events: str, value: bytes | str | None, seat: int | None) -> Operation[bool]:
    """Whether a legacy (unscoped) dedup record was written by ``seat``: the first entry of the batch
    it names holds the command record with its acting seat. Such records never change, so the
    answer never goes stale."""
    record = parse_command(value)
    if record is None:
        return False
    _, first, _ = record
    reply = yield Call(("XRANGE", events, f"0-{first}", f"0-{first}"))
    if not reply:
        return False
    try:
        stored = decode_stored(reply[0][1][b"d"])
    except (msgspec.DecodeError, UnicodeDecodeError):
        return False
    return stored.command is not None and stored.command.seat == seat


# -- reads ----------------------------------------------------------------------------------------


class RangeReader:
    """Pages through ``XRANGE`` (exclusive start) of a game's stream (``key``) after version
    ``after``, checking contiguity: ``request()`` gives the next call (``None`` when done), ``feed``
    takes its reply."""

    def __init__(self, key: str, after: int, limit: int | None) -> None:
        if after < 0 or (limit is not None and limit < 0):
            raise ValueError("after and limit must not be negative")
        self.key = key
        self.entries: list[Entry] = []
        self._after = after
        self._remaining = limit
        self._asked = 0
        self._done = limit == 0

    def request(self) -> Call | None:
        if self._done:
            return None
        start, count = self.page()
        return Call(("XRANGE", self.key, start, "+", "COUNT", count))

    def page(self) -> tuple[str, int]:
        """The next page's exclusive start and count (for a script that reads it: ``view_reads``)."""
        self._asked = PAGE if self._remaining is None else min(PAGE, self._remaining)
        return f"(0-{self._after}", self._asked

    def feed(self, reply: Sequence[tuple[bytes, Mapping[bytes, bytes]]]) -> None:
        entries, after = self.entries, self._after
        for stream_id, fields in reply:
            after += 1
            if stream_id != b"0-%d" % after and version_of(stream_id) != after:  # bytes, else text
                raise BrokenStream(f"{self.key}: expected version {after}, found {version_of(stream_id)}")
            entries.append(Entry(after, fields[b"d"], text(fields[b"h"])))
        self._after = after
        if self._remaining is not None:
            self._remaining -= len(reply)
        self._done = len(reply) < self._asked or self._remaining == 0


def read(game_id: str, after: int = 0, limit: int | None = None) -> Operation[list[Entry]]:
    """Entries after version ``after`` (at most ``limit``), contiguous, oldest first."""
    reader = RangeReader(game_keys(game_id).events, after, limit)
    while (call := reader.request()) is not None:
        reader.feed((yield call))
    return reader.entries


def _tail(reader: RangeReader, page: Any) -> Operation[list[Entry]]:
    """The tail after a cached fold, from its first page (``page``, read beside other reads) and the
    rest read now (more pages only when the fold is far behind)."""
    reader.feed(page)
    while (call := reader.request()) is not None:
        reader.feed((yield call))
    return reader.entries


def load(game_id: str, cache: StateCache) -> Operation[Folded | None]:
    """The table folded to the newest stored version, from the cached fold plus the events after it
    (``None``: no such game): one round trip, more only when the fold is far behind. Commands, views
    and projections read the same tail beside what else they need (``command_load``,
    ``view_reads``, ``begin_projection``)."""
    cached = cache.get(game_id)
    reader = RangeReader(game_keys(game_id).events, cached.version if cached else 0, None)
    tail = reader.request()
    assert tail is not None
    entries = yield from _tail(reader, (yield tail))
    return cache.fold(game_id, cached, entries)


@dataclass(frozen=True, slots=True)
class ViewReads:
    """What a view read needs, from one round trip: the projected view field and its checkpoint, the
    seat's last appended version (read-your-writes), the game's timer (its clock), the table folded
    to the head (``None``: no such game) and, when asked, the role a token digest holds now."""

    checkpoint: int
    view: bytes | None
    seat_version: int
    timer: dict[str, str]
    folded: Folded | None
    token_role: str | None = None


def view_reads(
    game_id: str, field: str, seat: int | None, cache: StateCache, token_digest: str | None = None
) -> Operation[ViewReads]:
    """``ViewReads`` in one call of a read-only script of the game's slot (``view_reads.lua``; more
    pages of the stream only when the cached fold is far behind). The stream is read last: the head
    folded is never behind the seat's version read before it. Only what the caller needs is read: no
    timer for a table without timers, no seat version for a spectator, no token unless asked."""
    k = game_keys(game_id)
    cached = cache.get(game_id)
    timed = cached is None or cached.state.timers is not None  # fixed at creation
    reader = RangeReader(k.events, cached.version if cached else 0, None)
    start, count = reader.page()
    args = [
        CHECKPOINT_FIELD,
        field,
        "" if seat is None else seat,
        token_digest or "",
        1 if timed else 0,
        start,
        count,
    ]
    keys = [k.views, k.timer, k.seats, k.tokens, k.events, k.seat_commands]
    (checkpoint, at, public, own), timer, seat_version, role, page = yield ScriptCall(
        "view_reads", keys, args
    )
    view = composed(checkpoint, at, public, own)
    entries = [(stream_id, dict(zip(fields[::2], fields[1::2], strict=True))) for stream_id, fields in page]
    folded = cache.fold(game_id, cached, (yield from _tail(reader, entries)))
    return ViewReads(
        int_or_zero(checkpoint),
        view,
        int_or_zero(seat_version),
        timer_fields(dict(zip(timer[::2], timer[1::2], strict=True))),
        folded,
        text(role) if role is not None else None,
    )


@dataclass(frozen=True, slots=True)
class CommandLoad:
    """What a command needs before it is decided, from one round trip: the table folded to the head
    (``None``: no such game), the record of the seat's command id if it was used before
    (``command_entry``), the game's timer as it was (the lifecycle plans the next one from it) and,
    when asked, the role a token digest holds now and the game's secret seed material."""

    folded: Folded | None
    record: tuple[str, int, int] | None
    timer: dict[str, str]
    token_role: str | None = None
    secret: dict[str, str] | None = None


def command_load(
    game_id: str,
    seat: int | None,
    command_id: str,
    cache: StateCache,
    token_digest: str | None = None,
    secret: bool = False,
) -> Operation[CommandLoad]:
    """``CommandLoad`` in one round trip, which also marks the game dirty (it is about to be
    appended to: a crash right after the append still leaves the mark). The stream's tail is read
    before the command id's records, and read again after the tail when it took more than one page:
    an append writes a command's events and its record in one atomic step, so a head that holds the
    events of this command id's first send is never loaded without its record, and a retry refused
    by the state its original made is always answered as that duplicate."""
    cached = cache.get(game_id)
    k = game_keys(game_id)
    timed = cached is None or cached.state.timers is not None  # fixed at creation
    reader = RangeReader(k.events, cached.version if cached else 0, None)
    tail = reader.request()
    assert tail is not None
    records = (
        Call(("HGET", k.seat_commands, dedup_field(seat, command_id))),
        Call(("HGET", k.commands, command_id)),
    )
    calls = (
        Call(("ZADD", DIRTY, "NX", clock_ms(), game_id), index=True, apart=True),
        tail,
        *records,
        *((Call(("HGETALL", k.timer)),) if timed else ()),
        *((Call(("HGET", k.tokens, token_digest)),) if token_digest is not None else ()),
        *((Call(("HGETALL", k.secret)),) if secret else ()),
    )
    _, page, scoped, legacy, *rest = yield Pipelined(calls)
    read = iter(rest)
    timer = timer_fields(next(read)) if timed else {}
    role = next(read) if token_digest is not None else None
    stored = {text(field): text(value) for field, value in next(read).items()} if secret else {}
    entries = yield from _tail(reader, page)
    known = token_digest is None or role is not None  # an unknown token: nothing else read may be used
    if known and len(page) >= PAGE:  # the tail took more pages, read after the records: read them again
        scoped, legacy = yield Pipelined(records)
    record = parse_command(scoped) if known else None
    if known and record is None and legacy is not None and (yield from _legacy_owned(k.events, legacy, seat)):
        record = parse_command(legacy)
    folded = cache.fold(game_id, cached, entries)
    if not known:
        return CommandLoad(folded, None, {}, None)
    return CommandLoad(folded, record, timer, text(role) if role is not None else None, stored or None)


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a duplicate of a recorded command is answered with: the table folded to the head, the
    batch's events (version, event) and the chain hash at its last version."""

    folded: Folded
    events: list[tuple[int, Event]]
    hash: str


def recorded(
    game_id: str, first: int, last: int, cache: StateCache
) -> Operation[tuple[Folded | None, list[Entry]]]:
    """A recorded command's batch (versions ``first`` to ``last``) and the table folded to the head,
    in one round trip (more only when either is long)."""
    cached = cache.get(game_id)
    k = game_keys(game_id)
    batch = RangeReader(k.events, first - 1, last - first + 1)
    reader = RangeReader(k.events, cached.version if cached else 0, None)
    asked, tail = batch.request(), reader.request()
    assert asked is not None and tail is not None
    pages = yield Pipelined((asked, tail))
    batch.feed(pages[0])
    while (call := batch.request()) is not None:
        batch.feed((yield call))
    return cache.fold(game_id, cached, (yield from _tail(reader, pages[1]))), batch.entries


def head(game_id: str) -> Operation[int]:
    """The newest version, 0 when the game does not exist."""
    reply = yield Call(("XREVRANGE", game_keys(game_id).events, "+", "-", "COUNT", 1))
    return version_of(reply[0][0]) if reply else 0


def command_entry(
    game_id: str, command_id: str, *, seat: int | None, system: bool = False
) -> Operation[tuple[str, int, int] | None]:
    """The record of a command id ``seat`` appended, ``None`` if that seat never used it (another
    seat's use of the same id is invisible). A legacy unscoped record counts only if ``seat`` wrote it.
    ``system``: the id of a command the system played for ``seat`` (its own scope, no legacy)."""
    k = game_keys(game_id)
    scoped = yield Call(("HGET", k.seat_commands, dedup_field(seat, command_id, system)))
    if scoped is not None or system:
        return parse_command(scoped)
    legacy = yield Call(("HGET", k.commands, command_id))
    if legacy is not None and (yield from _legacy_owned(k.events, legacy, seat)):
        return parse_command(legacy)
    return None


def confirm_record(
    game_id: str, command_id: str, *, seat: int | None, system: bool = False
) -> Operation[bool]:
    """Write a command's record again, unchanged, and wait (durable) for the replicas the store
    waits for: a retry whose record exists is answered once the replicas have the first try's
    write (``NotReplicated`` otherwise). False when there is no such record."""
    k = game_keys(game_id)
    args = [dedup_field(seat, command_id, system), "" if system else command_id]
    return bool((yield ScriptCall("confirm_record", [k.seat_commands, k.commands], args, durable=True)))


def confirm_table(game_id: str) -> Operation[bool]:
    """As ``confirm_record`` for a table's creation (its secret, written with its first events)."""
    k = game_keys(game_id)
    return bool((yield ScriptCall("confirm_record", [k.secret, k.secret], ["root", ""], durable=True)))


def seat_version(game_id: str, seat: int) -> Operation[int]:
    """The last version appended by ``seat``'s commands (0 if none): read-your-writes. The append
    writes it beside the command's record (``seat_commands``); ``seats`` holds it as written before."""
    k = game_keys(game_id)
    field = str(seat)
    before, now = yield Pipelined((Call(("HGET", k.seats, field)), Call(("HGET", k.seat_commands, field))))
    return max(int_or_zero(before), int_or_zero(now))


def secret(game_id: str) -> Operation[dict[str, str] | None]:
    """The game's seed material (never in the stream)."""
    reply: Mapping[bytes, bytes] = yield Call(("HGETALL", game_keys(game_id).secret))
    return {text(k): text(v) for k, v in reply.items()} or None


# -- views and live channel -----------------------------------------------------------------------


def write_views(game_id: str, expected: int, new: int, fields: Mapping[str, bytes]) -> Operation[ViewWrite]:
    """Compare-and-set the views on their checkpoint; on success publish ``new``. The fields replace
    the old ones and are kept in memory only (``write_views.lua``); none: the views are dropped
    (a finished game's, rendered on demand), the checkpoint moves on all the same."""
    if new <= expected:
        raise ValueError(f"new checkpoint {new} must be past the expected {expected}")
    for own in (CHECKPOINT_FIELD, AT_FIELD):
        if own in fields:
            raise ValueError(f"{own!r} is set by the store, not a view field")
    k = game_keys(game_id)
    args: list[Any] = [expected, new, k.live]
    for field, value in fields.items():
        args += [field, value]
    return parse_views((yield ScriptCall("write_views", [k.views], args)))


def valid_views(checkpoint: bytes | str | None, at: bytes | str | None) -> bool:
    """Whether the views hash's fields hold the views at its checkpoint. The fields are kept in
    memory only (``write_views.lua``): after a restart or a failover they are gone, or older ones
    from a snapshot, while the durable checkpoint moved on; then they are not to be used."""
    return at is not None and checkpoint is not None and int(at) == int(checkpoint)


def composed(
    checkpoint: bytes | None, at: bytes | None, public: bytes | None, own: bytes | None
) -> bytes | None:
    """A viewer's whole view from the views hash's public part and the viewer's own part, or ``None``
    when the hash has none valid at its checkpoint (``projections.views.compose``)."""
    if public is None or own is None or not valid_views(checkpoint, at):
        return None
    return compose(public, own)


def read_view(game_id: str, field: str) -> Operation[tuple[int, bytes | None]]:
    """One field of the views hash as stored (the scoreboard; a viewer's own part) and the
    checkpoint, read together; ``None`` when the fields are not those of the checkpoint."""
    checkpoint, at, value = yield Call(("HMGET", game_keys(game_id).views, CHECKPOINT_FIELD, AT_FIELD, field))
    return int_or_zero(checkpoint), value if valid_views(checkpoint, at) else None


def read_seat_view(game_id: str, field: str) -> Operation[tuple[int, bytes | None]]:
    """A viewer's whole projected view (``field``: ``projections.views.view_field``) and the
    checkpoint, in one round trip: the same bytes as ``encode(seat_view(...))`` at the checkpoint,
    ``None`` when none is stored (a reader renders it from the events)."""
    checkpoint, at, public, own = yield Call(
        ("HMGET", game_keys(game_id).views, CHECKPOINT_FIELD, AT_FIELD, PUBLIC_FIELD, field)
    )
    return int_or_zero(checkpoint), composed(checkpoint, at, public, own)


def checkpoint(game_id: str) -> Operation[int]:
    """The version the views were projected at (0: never)."""
    return int_or_zero((yield Call(("HGET", game_keys(game_id).views, CHECKPOINT_FIELD))))


def publish_appended(game_id: str, poke: bool, deadline: int | None = None) -> Operation[None]:
    """After an append (which announced itself on the game's channel, in ``append.lua``) whose script
    did not hand the game over (the indexes live apart: a cluster, ``handover.lua`` on the queue's
    server), in one round trip: mark the game dirty again (a projection may have cleared the mark
    between our first mark and the append); with ``poke`` (the append set the game's pending flag)
    hand the game over to the projection consumers (the hand-over stream, memory only); with
    ``deadline`` (the append armed the game's timer) put the timer in the deadline index."""
    check_game_id(game_id)
    args = [game_id, clock_ms(), "1" if poke else "0", "" if deadline is None else deadline, HANDOVER_BOUND]
    yield ScriptCall("handover", [DIRTY, HANDOVER, TIMERS], args, index=True)


@dataclass(frozen=True, slots=True)
class ProjectionStart:
    """What a projection of a game starts from, read in one round trip as it claims the game (clears
    its pending flag): whether it did (``claimed``: the flag was set, no other projection took it
    since), the views' checkpoint, the game's timer and the table folded to the head (``None``: no
    such game)."""

    checkpoint: int
    timer: dict[str, str]
    folded: Folded | None
    claimed: bool = True


def begin_projection(game_id: str, cache: StateCache) -> Operation[ProjectionStart]:
    """A projection of ``game_id`` begins: clear its pending flag (in memory only), then read its
    checkpoint, its timer and the stream's tail, in one call of the game's slot
    (``begin_projection.lua``; more pages only when the cached fold is far behind). Cleared before
    the head is read: an append after this hands the game over again; one before it is in what the
    projector reads."""
    k = game_keys(game_id)
    cached = cache.get(game_id)
    reader = RangeReader(k.events, cached.version if cached else 0, None)
    start, count = reader.page()
    claimed, checkpoint, timer, page = yield ScriptCall(
        "begin_projection", [k.pending, k.views, k.timer, k.events], [CHECKPOINT_FIELD, start, count]
    )
    entries = [(stream_id, dict(zip(fields[::2], fields[1::2], strict=True))) for stream_id, fields in page]
    folded = cache.fold(game_id, cached, (yield from _tail(reader, entries)))
    pairs = dict(zip(timer[::2], timer[1::2], strict=True))
    return ProjectionStart(int_or_zero(checkpoint), timer_fields(pairs), folded, bool(int(claimed)))


# -- the write path's mark in the dirty set (``services.store.indexes``) ----------------------------


def mark_dirty(game_id: str) -> Operation[None]:
    """Mark a game as maybe lagging (keeps the time of the first mark)."""
    check_game_id(game_id)
    yield index_call("ZADD", DIRTY, "NX", clock_ms(), game_id)


def ping() -> Operation[None]:
    """Raises when Redis does not answer."""
    yield Call(("PING",))
