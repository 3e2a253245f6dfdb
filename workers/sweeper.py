"""The lag sweeper: pokes every marked game whose projection checkpoint is behind its stream head,
and has the lifecycle of a caught-up one settled when its timer is behind its head or a bot is
still to act.

Pokes can be lost (a crash between append and enqueue, a job that exhausted its retries, a Redis
restart that lost the queue, a pending flag whose hand-over was lost); the sweeper makes projections
eventually complete without anyone watching: it queues one job projecting every lagging game it
found, regardless of the games' pending flags (a hand-over lost with a restart of Redis, a projection
consumer killed mid-batch). It reads only the dirty set (``services.store.indexes``: every write
marks its game durably, the projector clears the mark in memory only, so after a restart of Redis the
games appended since the last snapshot are swept again), so an idle sweep costs one command however
many games are stored.
A game is swept once its mark is ``grace`` old: younger ones have a job on the way.

The indexes can be lost apart from the games: on a cluster deployment they live in the queue's
standalone Redis. Before its first pass, and whenever that server has lost them (a marker key is
missing), the sweeper scans every primary of the store for games and re-marks the lagging ones and
those waiting for a bot (whose move, queued or paced on that server, was lost with it) and indexes
their timers (``rebuild_indexes``).

The write side arms a game's turn timer and queues its bots' moves right after appending; a process
that dies (or loses Redis) in between leaves the game without a timer for its new head, and a bot's
job can be lost or fail, which would leave a table without a turn timer waiting for that bot
forever. The projector then keeps the game's mark (``services.table.lifecycle.lifecycle_behind``), and
the sweeper queues a ``settle_lifecycle`` job (``workers.lifecycle``) that arms the timer and queues
the bots again (a bot's job still queued or running is not queued twice; a failed one is), and
marks the game anew, so that it looks again after the grace and a repair under way never counts
as projection lag. The mark is cleared once the lifecycle is settled.

Retention (``retire``, every ``retention_seconds``; ``services.store.retention``, docs/security.md):
expired tables a day after their expiry, games unchanged for two weeks and unverified idle accounts
are removed; finished games are kept. The time comes from an injected clock.

The archive (``archive``, every ``archive_seconds``; ``services.store.archive``, docs/operations.md):
finished games leave Redis for their archive files ``archive_policy.after_ms`` after their finish;
every reader then reads them there through the store.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import msgspec
import redis
import structlog
from rq import Queue

from projections.views import encode, seat_view, view_field
from services.history.folding import Folded, StateCache
from services.store import archive as archived_games
from services.store import indexes, retention
from services.store.archive import Archive, Archived, ArchivePolicy
from services.store.event_store import SyncEventStore
from services.store.queue import bot_job_id, enqueue_projections, enqueue_settle, jobs_under_way
from services.store.retention import RetentionPolicy, Retired
from services.table.lifecycle import Clock, bot_to_move, lifecycle_behind, timer_behind, wall_clock_ms
from workers.name_index import backfill_names

log = structlog.get_logger("tablestream.sweeper")


GRACE_MS = 2000
BATCH = 1000

_cache = StateCache()


@dataclass
class Swept:
    """What one pass did: games poked for projection and games whose lifecycle was queued."""

    lagging: list[str] = field(default_factory=list)
    unsettled: list[str] = field(default_factory=list)


def sweep(
    store: SyncEventStore,
    projections: Queue,
    lifecycle: Queue,
    grace_ms: int = GRACE_MS,
    batch: int = BATCH,
) -> Swept:
    """Queue one projection job for the lagging marked games, queue the lifecycle of each caught-up
    one whose timer is behind or whose bots are to act, and clear the marks of the others."""
    swept = Swept()
    for game_id in store.dirty_games(grace_ms, batch):
        checkpoint = store.checkpoint(game_id)
        head = store.head(game_id)
        if checkpoint < head:
            swept.lagging.append(game_id)
        elif (behind := _lifecycle_behind(store, game_id, head)) is not None:
            if not _bots_under_way(store, lifecycle, *behind):  # else: the bot queue is merely busy
                swept.unsettled.append(game_id)
                enqueue_settle(lifecycle, game_id, head)
            store.touch_dirty(game_id)  # looked at again after the grace
        else:
            store.clear_dirty(game_id, checkpoint)
    if swept.lagging:  # one job for all, whatever their pending flags say (a hand-over may be lost)
        enqueue_projections(projections, swept.lagging, reason="sweep")
    if swept.lagging or swept.unsettled:
        log.info("swept", lagging=len(swept.lagging), unsettled=len(swept.unsettled))
    return swept


def rebuild_indexes(store: SyncEventStore) -> int:
    """The indexes' server is new or lost its data (on a cluster deployment it is the queue's
    Redis): find every game on every primary of the store, mark the ones whose projection lags their
    head or whose projected view awaits a bot (its move, queued or paced beside the lost indexes, is
    gone: the sweep has it settled), index their armed timers, then mark the indexes known. Returns
    how many it marked. Idempotent: running it twice marks the same games."""
    lagging = 0
    for game_id in store.scan_games():
        if store.checkpoint(game_id) < store.head(game_id) or _awaits_a_bot(_spectator_view(store, game_id)):
            store.mark_dirty(game_id)
            lagging += 1
        timer = store.read_timer(game_id)
        if "deadline" in timer:
            store.index_timer(game_id, int(timer["deadline"]))
    store.know_indexes()
    log.info("indexes_rebuilt", lagging=lagging)
    return lagging


def _spectator_view(store: SyncEventStore, game_id: str) -> dict[str, Any] | None:
    """The game's spectator view at its head: the projected one, else rendered from its events (a
    finished game's views are not kept; views are lost with a restart). ``None``: no such game."""
    checkpoint, raw = store.read_seat_view(game_id, view_field(None))
    if raw is None or checkpoint < store.head(game_id):
        folded = store.load(game_id, _cache)
        if folded is None:
            return None
        raw = encode(seat_view(folded.state, folded.version, None))
    view = msgspec.json.decode(raw)
    return view if isinstance(view, dict) else None


def _awaits_a_bot(view: dict[str, Any] | None) -> bool:
    """Whether the game's projected spectator view awaits a seat a bot plays (one read, no fold)."""
    if view is None:
        return False
    bots = {player["seat"] for player in view.get("players", ()) if player.get("bot")}
    return view.get("status") == "playing" and bool(bots & set(view.get("to_act", ())))


def _lifecycle_behind(store: SyncEventStore, game_id: str, head: int) -> tuple[Folded, dict[str, str]] | None:
    """The game at ``head`` and its timer when its lifecycle is behind (``lifecycle_behind``)."""
    folded = store.load(game_id, _cache)
    timer = store.read_timer(game_id)
    if folded is not None and folded.version == head and lifecycle_behind(timer, folded):
        return folded, timer
    return None


def _bots_under_way(store: SyncEventStore, lifecycle: Queue, folded: Folded, timer: dict[str, str]) -> bool:
    """Whether all the lifecycle a game waits for is under way: its timer is armed, and the move of
    the bot it queued (``bot_to_move``) is paced or has its job queued or running (a busy bot queue,
    not a lost job: no settle job is needed). A failed or lost move is not under way."""
    if timer_behind(timer, folded):
        return False
    seats = bot_to_move(folded)  # the one bot a batch queues, not every bot awaited
    if not seats:
        return False
    paced = store.run(indexes.paced_moves(folded.game_id, folded.version, seats))
    ids = [bot_job_id(folded.game_id, folded.version, seat) for seat in seats]
    queued = jobs_under_way(lifecycle.connection, ids)
    return all(p or q for p, q in zip(paced, queued, strict=True))


def backfill_retention(store: SyncEventStore, now_ms: int) -> int:
    """Index every stored game and account for retention, as of ``now_ms`` (their own times are
    not stored), where it is not indexed yet; then mark it done. Runs once: on data stored before
    the retention indexes existed, and again when their server lost them (the marker goes with
    them). Returns how many games and accounts it found."""
    found = 0
    for game_id in store.scan_games():
        view = _spectator_view(store, game_id)
        if view is not None:
            calls = retention.activity_calls(game_id, str(view.get("status")), now_ms)
            store.run(retention.unless_indexed(calls))
            found += 1
    for account_id in _scan_accounts(store):
        store.run(retention.account_known(account_id, now_ms))
        found += 1
    store.run(retention.mark_backfilled(now_ms))
    log.info("retention_backfilled", found=found)
    return found


def _scan_accounts(store: SyncEventStore) -> list[str]:
    if not isinstance(store.redis, redis.RedisCluster):
        return store.run(retention.scan_accounts())
    found: list[str] = []
    for node in store.redis.get_primaries():  # type: ignore[no-untyped-call]
        primary = SyncEventStore(store.redis.get_redis_connection(node), store.index)
        found += primary.run(retention.scan_accounts())
    return found


def retire(store: SyncEventStore, now_ms: int, policy: RetentionPolicy) -> Retired:
    """One retention pass (``services.store.retention``): the expired tables, abandoned games and
    idle unverified accounts due at ``now_ms`` are removed; finished games are kept. First, once,
    the operator's name index is filled with the accounts stored before it (``backfill_names``)."""
    backfill_names(store, lambda: _scan_accounts(store))
    retired = store.run(retention.retire(now_ms, policy))
    if retired.expired or retired.abandoned or retired.accounts:
        log.info(
            "retired",
            expired=len(retired.expired),
            abandoned=len(retired.abandoned),
            accounts=len(retired.accounts),
        )
    return retired


def archive(store: SyncEventStore, files: Archive, now_ms: int, policy: ArchivePolicy) -> Archived:
    """One archive pass (``services.store.archive.archive_due``), after the one-time backfill of the
    finished games' index when its marker is missing."""
    if not policy.enabled:
        return Archived()
    if not store.run(archived_games.backfilled()):
        archived_games.backfill_due(store, now_ms)
    return archived_games.archive_due(store, files, now_ms, policy)


class Sweeper(threading.Thread):
    """Runs ``sweep`` every ``interval`` seconds, ``retire`` every ``retention_seconds`` and, with an
    ``archive``, ``archive`` every ``archive_seconds``, until ``stop()``."""

    def __init__(
        self,
        store: SyncEventStore,
        projections: Queue,
        lifecycle: Queue,
        interval: float = 5.0,
        retention: RetentionPolicy | None = None,
        retention_seconds: float = 300.0,
        clock: Clock = wall_clock_ms,
        archive: Archive | None = None,
        archive_policy: ArchivePolicy | None = None,
        archive_seconds: float = 300.0,
    ):
        super().__init__(name="tablestream-sweeper", daemon=True)
        self._store, self._projections, self._lifecycle = store, projections, lifecycle
        self._interval = interval
        self._retention = retention or RetentionPolicy()
        self._retention_ms = int(retention_seconds * 1000)
        self._clock = clock
        self._retired_at: int | None = None
        self._archive = archive
        self._archive_policy = archive_policy or ArchivePolicy()
        self._archive_ms = int(archive_seconds * 1000)
        self._archived_at: int | None = None
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                if not self._store.indexes_known():
                    rebuild_indexes(self._store)
                sweep(self._store, self._projections, self._lifecycle)
                now = self._clock()
                if self._retired_at is None or now - self._retired_at >= self._retention_ms:
                    self._retired_at = now
                    if not self._store.run(retention.backfilled()):
                        backfill_retention(self._store, now)
                    retire(self._store, now, self._retention)
                if self._archive is not None and (
                    self._archived_at is None or now - self._archived_at >= self._archive_ms
                ):
                    self._archived_at = now
                    archive(self._store, self._archive, now, self._archive_policy)
            except Exception as exc:  # a flaky connection must not kill the sweeper; the next pass retries
                log.warning("sweep_failed", error=f"{type(exc).__name__}: {exc}")

    def stop(self) -> None:
        self._stopped.set()
