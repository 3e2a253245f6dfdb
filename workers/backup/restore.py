"""``import-all`` and ``rebuild-all``: a backup checked whole, then written, then every projection
rebuilt from the streams; the common loop over the file's lines that every kind of data's checks and
writes run in.

Import reads the file three times, a line at a time: the integrity check (``workers.backup.frame``),
then two passes. The first pass changes nothing: it verifies every game with the offline verifier
and checks its secret against the stream's commitments (``workers.backup.games``), its chat and its
disputes, checks that every finish names a finished game of the file, and compares every game,
account, name and finish with what the target store already holds. Any tampered game or any conflict
refuses the whole import, naming each, with nothing written. The second pass writes what is missing
(each game in one ``MULTI`` guarded by ``WATCH``; an identical game is left alone, so importing
twice changes nothing), then rebuilds every projection from the streams alone: the ratings,
histories and leaderboards (``workers.ratings.rebuild``, in finish-log order), every game's views
and lobby entry (``workers.projector``), the lag and timer indexes
(``workers.sweeper.rebuild_indexes``), the accounts' retention index and their "Your tables" index
(the running tables where each account holds a seat), and the operators' list of open disputes.
Run it with the workers stopped, like ``workers.ratings.rebuild``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.fairness.transparency.log import note_loggable_op
from services.history.folding import StateCache
from services.store.event_store import SyncEventStore
from services.store.keys import TLOG, WAITING, game_keys
from services.store.requests import Operation, clock_ms, index_call
from services.store.your_tables import note_table
from workers.backup import tlog
from workers.backup.accounts import account_ids, account_problems, write_account
from workers.backup.chat import verify_chat
from workers.backup.disputes import dispute_conflicts, index_disputes, verify_disputes, write_disputes
from workers.backup.finishes import finish_problem, log_top, write_finish
from workers.backup.frame import (
    BackupError,
    Sealed,
    check_integrity,
    file_digest,
    import_path,
    node_of,
    records,
    ring_of,
)
from workers.backup.games import (
    creation_order,
    game_conflict,
    is_finished,
    shape_problems,
    verify_game,
    write_game,
)
from workers.backup.operator import operator_problems, write_operator
from workers.backup.signing_keys import signing_keys_problems, write_signing_keys
from workers.name_index import index_names
from workers.projector import Projector
from workers.ratings import rebuild as rebuild_ratings
from workers.sweeper import rebuild_indexes


@dataclass
class Imported:
    path: Path
    games: int = 0  # in the file
    written: int = 0  # games the store did not hold
    disputes: int = 0
    disputes_written: int = 0  # disputes the store lacked, or lacked events of
    accounts: int = 0
    accounts_written: int = 0
    finishes: int = 0
    finishes_written: int = 0
    tlog: tlog.LogPlan | None = None  # the public log to restore, checked
    tlog_leaves_written: int = 0
    operator_entries_written: int = 0  # audit entries and chat reports the target lacked
    sealed: Sealed | None = None  # what the integrity check found
    seconds_checking: float = 0.0
    seconds_writing: float = 0.0
    seconds_rebuilding: float = 0.0


def check_backup(
    store: SyncEventStore, path: Path, fingerprint: str | None = None, accept_format_1: bool = False
) -> tuple[str, Imported]:
    """The first pass: the file checked as a whole against its signed manifest (``check_integrity``),
    then every game verified, every record compared with the store; nothing written. Returns the
    file's digest (the second pass must read the same bytes)."""
    started = time.perf_counter()
    digest = file_digest(path)
    done = Imported(path, sealed=check_integrity(store, path, fingerprint, accept_format_1))
    problems: list[str] = []
    top = log_top(store)
    logged: dict[str, int] = {}  # game id -> finish sequence, for the games the finish log names
    finished: set[str] = set()
    refused: set[str] = set()  # said once: their finishes are not named again
    for record in records(path):
        kind = record["kind"]
        if kind == "game":
            done.games += 1
            game_id = record.get("id")
            if not isinstance(game_id, str) or not game_id or "{" in game_id or "}" in game_id:
                problems.append(f"game {game_id!r}: not a game id")
                continue
            failures = shape_problems(record) or (
                verify_game(record) + verify_chat(record) + verify_disputes(record)
            )
            if not failures and is_finished(record):
                finished.add(game_id)
            if failures:
                refused.add(game_id)
                problems.append(f"game {game_id} is refused, it does not verify: " + "; ".join(failures[:5]))
                continue
            done.disputes += len(record.get("disputes", []))
            conflict = game_conflict(store, record)
            if conflict:
                problems.append(conflict)
            problems += dispute_conflicts(store, record)
        elif kind == "account":
            done.accounts += 1
            problems += account_problems(store, record)
        elif kind == "operator":
            problems += operator_problems(store, record)
        elif kind == "signing_keys":
            problems += signing_keys_problems(record)
        elif kind == "tlog":
            try:
                done.tlog = tlog.check_log(node_of(store, TLOG.leaves), record)
            except tlog.LogRefused as error:
                problems.append(f"the public log is refused: {error}")
        else:
            done.finishes += 1
            problem = finish_problem(store, record, top)
            if problem:
                problems.append(problem)
            else:
                logged[record["game_id"]] = record["seq"]
    problems += [
        f"finish {seq}: game {game_id} is not a finished game of the backup"
        for game_id, seq in sorted(logged.items(), key=lambda item: item[1])
        if game_id not in finished and game_id not in refused
    ]
    if problems:
        raise BackupError(f"{path}: refused, nothing was written", problems)
    done.seconds_checking = time.perf_counter() - started
    return digest, done


def import_all(
    store: SyncEventStore, source: str | Path, fingerprint: str | None = None, accept_format_1: bool = False
) -> Imported:
    """Check the whole backup (nothing written if anything is refused), write what the store lacks,
    then rebuild every projection from the streams. ``fingerprint``: the one ``export-all`` printed,
    recorded apart from the file; ``accept_format_1``: read a file made before the signed manifest."""
    path = import_path(source)
    digest, checked = check_backup(store, path, fingerprint, accept_format_1)
    done = Imported(
        path,
        sealed=checked.sealed,
        games=checked.games,
        disputes=checked.disputes,
        accounts=checked.accounts,
        finishes=checked.finishes,
        tlog=checked.tlog,
        seconds_checking=checked.seconds_checking,
    )
    started = time.perf_counter()
    if file_digest(path) != digest:
        raise BackupError(f"{path} changed between the check and the write; nothing was written")
    games: list[str] = []
    for record in records(path):
        kind = record["kind"]
        if kind == "game":
            games.append(record["id"])
            done.written += write_game(store, record)
            done.disputes_written += write_disputes(store, record)
        elif kind == "account":
            done.accounts_written += write_account(store, record)
        elif kind == "operator":
            done.operator_entries_written = write_operator(store, record)
        elif kind == "signing_keys":
            write_signing_keys(store, ring_of(record))
        elif kind == "tlog":
            assert checked.tlog is not None
            try:
                done.tlog_leaves_written = tlog.write_log(node_of(store, TLOG.leaves), checked.tlog)
            except tlog.LogRefused as error:
                raise BackupError(str(error)) from None
        else:
            done.finishes_written += write_finish(store, record)
    # every restored game queued for the log's appender: heads it had not logged yet are logged
    # (by content: a head already in the log is never appended twice)
    for game_id in games:
        head = store.head(game_id)
        if head:
            store.run(note_loggable_op(game_id, head))
    done.seconds_writing = time.perf_counter() - started
    started = time.perf_counter()
    rebuild(store, games)
    done.seconds_rebuilding = time.perf_counter() - started
    return done


def rebuild(store: SyncEventStore, games: Sequence[str], fresh_views: bool = False) -> None:
    """Every projection from the streams alone: ratings first (so the projector finds each logged
    game recorded and does not record it again), then each game's views, lobby entry and indexes,
    a waiting table counted against the cap again. ``fresh_views``: drop each game's views before
    projecting it (after a physical restore, whose views may lag or lead the indexes)."""
    rebuild_ratings(store)
    projector = Projector(store, StateCache(capacity=16))  # a few folded games in memory at a time
    for game_id in games:
        if fresh_views:
            views = game_keys(game_id).views
            node_of(store, views).delete(views)
        projector.catch_up(game_id)
        folded = projector.cache.get(game_id)
        if folded is not None and folded.state.status == "waiting":
            store.run(_still_waiting(game_id))
        if folded is not None and folded.state.status not in ("finished", "expired"):
            _note_account_seats(store, game_id, folded.state)
        index_disputes(store, game_id)
    rebuild_indexes(store)
    index_names(store, account_ids(store))  # the operator's search by name (workers.name_index)


def _note_account_seats(store: SyncEventStore, game_id: str, state: Any) -> None:
    """The "Your tables" index (``services.store.your_tables``) of every account holding a seat at a
    table still waiting or playing: derived from the game's own ``seat_claimed``, so rebuilt here
    (the reader drops what ended, as it does for any entry)."""
    for player in state.seated:
        if player.account is not None and state.holds(player.seat):
            store.run(note_table(player.account.id, game_id, clock_ms()))


def _still_waiting(game_id: str) -> Operation[None]:
    yield index_call("ZADD", WAITING, "NX", clock_ms(), game_id)


def rebuild_all(store: SyncEventStore) -> int:
    """``tablestream rebuild-all``: every projection of every stored game rebuilt from its stream
    (views dropped first); how many games. Run with the workers and the API stopped."""
    games = creation_order(store)
    rebuild(store, games, fresh_views=True)
    return len(games)
