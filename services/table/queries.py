"""The read side: the lobby, views (now or at a past version), events (narrated on request), scores,
audits, exports and the replay of a finished game.

Reads never go through the write side. Materialised views are served as the projection worker
stored them; when a projection lags behind what a caller must see, the same pure view is computed
here from the folded table (the cache may be shared with the write side of the same process).
Audits and exports read the stream once and fold nothing to answer for an unknown game.

Audits, exports and time travel fold or walk a whole stream: they run in a worker thread (the event
loop keeps serving everyone else) and their results are kept in small LRU caches keyed by (game,
version), so clients looping on the audit or the export of a long game cost one build per new
version, not one per request; concurrent requests for one that is not kept yet share one build.
Time travel also keeps a table every ``CHECKPOINT_EVERY`` versions of the games it folded, so a
client walking through a long game's versions (``?at=``) folds at most that many events per miss.
"""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio.to_thread
import msgspec

from domain.kernel import Event
from domain.table import Table
from projections.narration import LANGUAGES, narrate
from projections.views import encode, scoreboard, seat_view, view_field
from services.errors import ConflictError, InvalidError, game_not_found
from services.fairness.receipts import ReceiptSigner
from services.fairness.transparency.log import (
    latest_checkpoint_op,
    log_complete,
    next_checkpoint_due,
    proofs_for_game_op,
    with_next_checkpoint,
)
from services.history.audit import Viewer, build_audit
from services.history.export import GameNotFinished, build_export
from services.history.folding import Folded, StateCache, advance, decode_events
from services.history.records import CommandRecord, Entry, decode_stored
from services.history.replay import CorruptStream
from services.history.replay_index import build_index
from services.store.event_store import EventStore
from services.table.callers import Caller, TokenCheck, verify
from services.table.lifecycle import Clock, clock_of, wall_clock_ms
from services.table.lru import LRU
from services.telemetry import metrics

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

AUDIT_CACHE_SIZE = 256
EXPORT_CACHE_SIZE = 64  # encoded exports: ~350 bytes a version (1.4 MiB, 0.3 MiB gzipped, for 4,000)
TIME_TRAVEL_CACHE_SIZE = 256
CHECKPOINT_EVERY = 128  # versions between two kept tables of a game walked through in time
CHECKPOINT_CACHE_SIZE = 1024
THREAD_FOLD_MINIMUM = 64  # successive versions folded on the event loop at most (a live stream's tail)
REPLAY_INDEX_CACHE_SIZE = 256


class SingleFlight(Generic[K, V]):
    """Concurrent requests for one key share one computation (its result or its error)."""

    def __init__(self) -> None:
        self._running: dict[K, asyncio.Future[V]] = {}

    async def run(self, key: K, compute: Callable[[], Awaitable[V]]) -> V:
        running = self._running.get(key)
        if running is None:
            running = self._running[key] = asyncio.ensure_future(compute())
            running.add_done_callback(lambda _: self._running.pop(key, None))
        return await asyncio.shield(running)


def fold_each(game_id: str, cursor: Folded | None, entries: list[Entry]) -> list[Folded]:
    """The table after each of ``entries``, from ``cursor``."""
    folded: list[Folded] = []
    for entry in entries:
        cursor = advance(game_id, cursor, [entry])
        folded.append(cursor)
    return folded


def fold_with_checkpoints(
    game_id: str, base: Folded | None, entries: list[Entry]
) -> tuple[Folded, list[Folded]]:
    """``base`` advanced over ``entries``, and the table at every multiple of ``CHECKPOINT_EVERY``
    passed on the way."""
    folded, checkpoints, start = base, [], 0
    first = entries[0].version
    while start < len(entries):
        version = first + start
        stop = start + CHECKPOINT_EVERY - (version - 1) % CHECKPOINT_EVERY
        folded = advance(game_id, folded, entries[start:stop])
        if folded.version % CHECKPOINT_EVERY == 0:
            checkpoints.append(folded)
        start = stop
    assert folded is not None
    return folded, checkpoints


@dataclass(frozen=True, slots=True)
class ViewParts:
    """A view as stored or rendered (JSON without its clock), the table it shows and the game's timer
    as read with it: the clock is added at each read, since it counts down."""

    data: bytes
    folded: Folded
    timer: dict[str, str]


BY: dict[str, str] = {"bot": "bot", "timeout": "timeout", "expire": "timeout"}
"""How a batch came, by its record's kind, as the events API says it (``player`` otherwise)."""


def shown_event(table: Table, version: int, event: Event, seat: int | None, full: bool) -> dict[str, Any]:
    """An event as a caller may see it, with its version; ``full`` shows hidden details."""
    shown = table.redact(event, seat, finished=full)
    return {"version": version, **msgspec.to_builtins(shown)}


def rendered_view(folded: Folded, seat: int | None) -> bytes:
    """The JSON view of ``seat`` (``None``: a spectator) of a folded table."""
    return encode(seat_view(folded.state, folded.version, seat))


def with_clock(view: bytes, clock: dict[str, Any] | None) -> bytes:
    """A rendered view (a JSON object) with its ``clock`` added at read time."""
    return view[:-1] + b',"clock":' + msgspec.json.encode(clock) + b"}"


def check_language(lang: str | None) -> None:
    """``invalid_query`` unless ``lang`` is ``None`` or one of the narration's ``LANGUAGES``."""
    if lang is not None and lang not in LANGUAGES:
        raise InvalidError(
            "invalid_query", f"The query parameter 'lang' must be one of {', '.join(LANGUAGES)}."
        )


def by_of(record: CommandRecord | None) -> str:
    return BY.get(record.kind, "player") if record is not None else "player"


@dataclass(frozen=True, slots=True)
class EncodedExport:
    """An export as sent: its JSON and the same gzipped (level 6, as the API's other long answers),
    both made once, off the event loop."""

    body: bytes
    gzipped: bytes


def encoded_export(
    entries: list[Entry], keys: dict[str, Any] | None = None, log: dict[str, Any] | None = None
) -> EncodedExport:
    body = msgspec.json.encode(build_export(entries, keys, log))
    return EncodedExport(body, gzip.compress(body, compresslevel=6, mtime=0))


class GameQueries:
    def __init__(
        self,
        store: EventStore,
        cache: StateCache | None = None,
        clock: Clock = wall_clock_ms,
        signer: ReceiptSigner | None = None,
        log_seconds: tuple[float, float] = (10.0, 1.0),
    ) -> None:
        self.store = store
        self.signer = signer  # its public keys go into exports
        # the workers' checkpoint and append intervals (Settings.log_checkpoint_seconds and
        # log_append_seconds): an export whose heads are not all proven says when to ask again
        self.log_seconds = log_seconds
        self.cache = cache if cache is not None else StateCache()
        self._audits: LRU[tuple[str, int, str, int | None], dict[str, Any]] = LRU(AUDIT_CACHE_SIZE)
        # each with the public log's latest checkpoint it was built against (``None``: every head
        # proven, kept as it is) and the time its ``next_checkpoint`` names: an export still waiting
        # for proofs is built again once the log has published a newer checkpoint, or that time passed
        self._exports: LRU[tuple[str, int], tuple[EncodedExport, str | None, int]] = LRU(EXPORT_CACHE_SIZE)
        self._past: LRU[tuple[str, int], Folded] = LRU(TIME_TRAVEL_CACHE_SIZE)
        self._checkpoints: LRU[tuple[str, int], Folded] = LRU(CHECKPOINT_CACHE_SIZE)
        self._export_builds: SingleFlight[tuple[str, int], EncodedExport] = SingleFlight()
        self._folds: SingleFlight[tuple[str, int], Folded] = SingleFlight()
        self._replay_indexes: LRU[tuple[str, int], dict[str, Any]] = LRU(REPLAY_INDEX_CACHE_SIZE)
        self.clock = clock

    async def clock_for(self, folded: Folded) -> dict[str, Any] | None:
        """The ``clock`` of the game's views now (``services.table.lifecycle.clock_of``)."""
        if folded.state.timers is None:
            return None
        return clock_of(folded, await self.store.read_timer(folded.game_id), self.clock())

    async def load(self, game_id: str) -> Folded:
        """The table folded to the newest stored version; ``game_not_found`` for an unknown game."""
        folded = await self.store.load(game_id, self.cache)
        if folded is None:
            raise game_not_found(game_id)
        return folded

    async def load_at(self, game_id: str, version: int) -> Folded:
        """The table as it was at ``version`` (time travel): folded in a worker thread from the
        nearest kept checkpoint at or below it (else from the start), kept in an LRU by (game,
        version); concurrent misses of one version share one fold."""
        cached = self._past.get((game_id, version))
        if cached is not None:
            return cached
        return await self._folds.run((game_id, version), lambda: self._fold_at(game_id, version))

    async def _fold_at(self, game_id: str, version: int) -> Folded:
        base = self._checkpoint_at_or_below(game_id, version)
        after = base.version if base is not None else 0
        entries = (
            await self.store.read(game_id, after=after, limit=version - after) if version > after else []
        )
        if not entries:
            if base is None:
                raise game_not_found(game_id)
            return base
        folded, checkpoints = await anyio.to_thread.run_sync(fold_with_checkpoints, game_id, base, entries)
        for checkpoint in checkpoints:
            self._checkpoints.put((game_id, checkpoint.version), checkpoint)
        self._past.put((game_id, folded.version), folded)
        return folded

    def _checkpoint_at_or_below(self, game_id: str, version: int) -> Folded | None:
        for at in range(version - version % CHECKPOINT_EVERY, 0, -CHECKPOINT_EVERY):
            checkpoint = self._checkpoints.get((game_id, at))
            if checkpoint is not None:
                return checkpoint
        return None

    async def successors(self, game_id: str, cursor: Folded | None) -> list[Folded]:
        """The table at every stored version after ``cursor`` (``None``: from the start), in order;
        a long run of them (a live stream resumed from far back) is folded in a worker thread."""
        entries = await self.store.read(game_id, after=cursor.version if cursor else 0)
        if len(entries) > THREAD_FOLD_MINIMUM:
            return await anyio.to_thread.run_sync(fold_each, game_id, cursor, entries)
        return fold_each(game_id, cursor, entries)

    async def lobby(self, limit: int) -> list[dict[str, Any]]:
        """Open and running tables, newest first."""
        entries = [msgspec.json.decode(raw) for raw in await self.store.lobby(limit)]
        return [entry for entry in entries if entry["status"] not in ("finished", "expired", "closed")]

    async def view_parts(self, game_id: str, seat: int | None, check: TokenCheck | None = None) -> ViewParts:
        """The caller's view at the head, never older than the seat's own last command, before its
        clock is added (``finish``; the API's view cache keeps the parts). ``check``: the caller was
        assumed from memory; its token is verified in the same round trip."""
        token = check.digest if check is not None else None
        reads = await self.store.view_reads(game_id, view_field(seat), seat, self.cache, token)  # one trip
        verify(check, reads.token_role)
        folded = reads.folded
        if folded is None:
            raise game_not_found(game_id)
        data = reads.view
        if data is None or reads.checkpoint < reads.seat_version:
            # The projection lags behind this seat's own last command (or has not run yet): compute the
            # same pure view here so that a seat always reads its own writes.
            data = rendered_view(folded, seat)
            metrics.view_rendered()
        return ViewParts(data, folded, reads.timer)

    def finish(self, parts: ViewParts) -> bytes:
        """A view with its ``clock`` as of now (timed tables only)."""
        folded = parts.folded
        clock = None if folded.state.timers is None else clock_of(folded, parts.timer, self.clock())
        return with_clock(parts.data, clock)

    async def view_at(self, game_id: str, seat: int | None, version: int) -> bytes:
        """The caller's view as it was at ``version``."""
        head = (await self.load(game_id)).version
        if version > head:
            raise InvalidError("invalid_query", f"The game is at version {head}; 'at' cannot be {version}.")
        return with_clock(rendered_view(await self.load_at(game_id, version), seat), None)

    async def events(
        self, game_id: str, caller: Caller, after: int, limit: int, lang: str | None = None
    ) -> dict[str, Any]:
        """A page of events as the caller may see them, and the head version. Each says ``by`` whom
        its batch came (``player``, ``bot`` or ``timeout``); with ``lang`` each has a ``text``."""
        check_language(lang)
        entries = await self.store.read(game_id, after=after, limit=limit)
        folded = await self.load(game_id)  # after the read: its head is never behind the page
        full = folded.state.status in ("finished", "closed") or caller.role == "operator"
        events = await self._shown(folded, entries, caller.seat, full, lang)
        return {"events": events, "version": folded.version}

    async def replay(self, game_id: str, at: int | None, lang: str | None = None) -> dict[str, Any]:
        """A finished game at version ``at`` (``None``: the last), everything revealed: the
        spectator's and every seat's view as they were then, and the event(s) of that version in
        full, with ``by`` (and ``text`` in ``lang``). ``game_not_finished`` while it is played."""
        check_language(lang)
        head = await self.load(game_id)
        if head.state.status != "finished":
            raise ConflictError("game_not_finished", "A game can be replayed once it is over.")
        version = head.version if at is None else at
        if version > head.version:
            raise InvalidError(
                "invalid_query", f"The game has {head.version} versions; 'at' cannot be {version}."
            )
        state = (await self.load_at(game_id, version)).state
        entries = await self.store.read(game_id, after=version - 1, limit=1)
        return {
            "version": version,
            "head": head.version,
            "spectator": {**seat_view(state, version, None), "clock": None},  # no clock runs in the past
            "seats": [{**seat_view(state, version, seat), "clock": None} for seat in range(state.players)],
            "events": await self._shown(head, entries, None, True, lang),
        }

    async def replay_index(self, game_id: str, you: int | None = None) -> dict[str, Any]:
        """Where a finished game's rounds and steps (tricks, turns, phases) begin and end, every seat's
        moves (``services.history.replay_index``), the seats' names, and ``you``: the caller's seat
        (``None`` for anyone else). Cut in a worker thread once per (game, head) and kept in an LRU;
        ``game_not_finished`` while it is played, like the replay itself."""
        head = await self.load(game_id)
        if head.state.status != "finished":
            raise ConflictError("game_not_finished", "A game can be replayed once it is over.")
        key = (game_id, head.version)
        index = self._replay_indexes.get(key)
        if index is None:
            entries = await self.store.read(game_id, after=0, limit=head.version)
            cut = await anyio.to_thread.run_sync(build_index, head.state.game, entries)
            players = [{"seat": seat, "name": name} for seat, name in enumerate(head.state.names())]
            index = {"game": head.state.game, "head": head.version, "players": players, **cut}
            self._replay_indexes.put(key, index)
        return {**index, "you": you}

    async def _shown(
        self, folded: Folded, entries: list[Entry], seat: int | None, full: bool, lang: str | None
    ) -> list[dict[str, Any]]:
        """Stored entries as ``seat`` sees them, each with ``by`` and, with ``lang``, its sentence."""
        record = await self._record_before(folded.game_id, entries)
        names = folded.state.names()
        events = []
        for entry, (version, event) in zip(entries, decode_events(folded.table, entries), strict=True):
            record = decode_stored(entry.data).command or record
            shown = {**shown_event(folded.table, version, event, seat, full), "by": by_of(record)}
            if lang is not None:
                shown["text"] = narrate(folded.state.game, shown, names, lang, shown["by"])
            events.append(shown)
        return events

    async def _record_before(self, game_id: str, entries: list[Entry]) -> CommandRecord | None:
        """The command record of the batch a page starts in (the page may start mid-batch)."""
        version = entries[0].version if entries else 1
        while version > 1 and decode_stored(entries[0].data).command is None:
            version -= 1
            earlier = await self.store.read(game_id, after=version - 1, limit=1)
            record = decode_stored(earlier[0].data).command
            if record is not None:
                return record
        return None

    async def scores(self, game_id: str) -> bytes:
        _, data = await self.store.read_view(game_id, "scores")
        if data is None:
            folded = await self.load(game_id)
            data = encode(scoreboard(folded.state, folded.version))
        return data

    async def audit(self, game_id: str, caller: Caller) -> dict[str, Any]:
        """Per round: the seed and its check, each chance outcome re-derived, the events; full detail
        for everyone once the game is over and for the operator during play."""
        viewer: Viewer = "spectator"
        if caller.role == "operator":
            viewer = "operator"
        elif caller.seat is not None:
            viewer = "player"
        head = await self.store.head(game_id)
        key = (game_id, head, viewer, caller.seat)
        cached = self._audits.get(key)
        if cached is not None:
            return cached
        entries = await self._stream(game_id)
        try:
            audit = await anyio.to_thread.run_sync(build_audit, entries, viewer, caller.seat)
        except CorruptStream:
            metrics.verify_failed("stream")
            raise
        count_failed_checks(audit)
        self._audits.put((game_id, entries[-1].version, viewer, caller.seat), audit)
        return audit

    async def export(self, game_id: str) -> EncodedExport:
        """A finished game as one JSON document for the offline verifier: built and encoded in a
        worker thread once per (game, version), kept in an LRU. Nothing is folded on the event loop:
        the head version names the cached document; a game this process holds folded at its head and
        still played is refused without reading its stream; any other is read and checked in the
        build's thread (``game_not_finished`` from there)."""
        version = await self.store.head(game_id)
        if version == 0:
            raise game_not_found(game_id)
        key = (game_id, version)
        cached = self._exports.get(key)
        if cached is not None:
            document, waiting_on, due = cached
            if waiting_on is None or (
                self.clock() < due * 1000
                and waiting_on == (await self.store.run(latest_checkpoint_op()) or "")
            ):
                return document
        known = self.cache.get(game_id)
        if (
            known is not None
            and known.version == version
            and known.state.status not in ("finished", "closed")
        ):
            raise ConflictError("game_not_finished", "A game can be exported once it is over.")
        return await self._export_builds.run(key, lambda: self._build_export(*key))

    async def _build_export(self, game_id: str, version: int) -> EncodedExport:
        entries = await self.store.read(game_id, after=0, limit=version)
        if not entries:
            raise game_not_found(game_id)
        keys = (await self.signer.keys()).public_document() if self.signer is not None else None
        note = await self.store.run(latest_checkpoint_op())  # read first: a newer one builds again
        log = await self.store.run(proofs_for_game_op(game_id))  # the public log's proofs of its heads
        complete = log_complete(log, version)
        due = next_checkpoint_due(self.clock(), *self.log_seconds)
        try:
            # no checkpoint published yet (a log not started): the export has no log section; one
            # whose newest head is not in the checkpoint yet says when the next one is due (pending)
            with_log = (
                None if log["checkpoint"] is None else log if complete else with_next_checkpoint(log, due)
            )
            document = await anyio.to_thread.run_sync(encoded_export, entries, keys, with_log)
        except GameNotFinished:
            raise ConflictError("game_not_finished", "A game can be exported once it is over.") from None
        # until every head is proven, the export is kept with the checkpoint it was built against
        waiting_on = None if complete else (note or "")
        self._exports.put((game_id, version), (document, waiting_on, due))
        return document

    async def _stream(self, game_id: str) -> list[Entry]:
        """The whole stored stream, read once; an empty one is an unknown game."""
        entries = await self.store.read(game_id)
        if not entries:
            raise game_not_found(game_id)
        return entries


def count_failed_checks(audit: dict[str, Any]) -> None:
    """An audit built afresh that finds a broken link, a seed that does not match its commitment or
    an event the rules do not re-derive counts in ``tablestream_verify_failures_total``."""
    if not audit["hash_chain"]["ok"]:
        metrics.verify_failed("chain")
    for round_ in audit["rounds"]:
        check = round_.get("seed_check")
        if check is not None and not check["ok"]:
            metrics.verify_failed("reveal")
        if round_.get("rules_match") is False:
            metrics.verify_failed("rules")
