"""The archive pass on a fake clock (``services.store.archive``, ``workers.sweeper.archive``): only
finished games leave Redis, nothing is lost when the pass dies between its two steps, the next pass
finishes what one left, and the memory a finished game keeps in Redis is measured before and after."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis

from domain.games import game_names
from services.history.folding import StateCache
from services.operating.config import Settings
from services.store import archive as archived_games
from services.store import chat as store_chat
from services.store import operations as ops
from services.store import retention
from services.store.archive import Archive, ArchivePolicy, Snapshot
from services.store.event_store import EventStore, SyncEventStore
from services.store.keys import ARCHIVE_DUE, ARCHIVE_MARK, LOBBY, game_keys
from services.store.queue import lifecycle_queue, projection_queue
from services.store.requests import Call, Operation, ScriptCall
from services.store.retention import HOUR_MS
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from services.table.lifecycle import wall_clock_ms
from tests.conftest import Clients, IndexClients
from tests.services.table.test_commands import FLOWER, no_poke, started_table
from tests.support.dying_archiver import STEPS as DYING_STEPS
from tests.support.waiting import wait_until
from tests.workers.test_retention import finished_game, open_dispute, resolve_dispute
from workers.backup import BackupError, export_all, game_ids, import_all, read_game, records
from workers.projector import Projector
from workers.sweeper import Sweeper, archive

pytestmark = pytest.mark.anyio  # the tests that play whole games are thorough (a second or more)

POLICY = ArchivePolicy()  # a day after the finish
OFF = ArchivePolicy(enabled=False)
DUE = 25 * HOUR_MS


class Killed(BaseException):
    """The process ends here: nothing after this point of the pass runs."""


class DiesBeforeRemoval(SyncEventStore):
    """A store whose process is killed as it is about to send the archive's removal script."""

    def _execute(self, request: Any) -> Any:
        if isinstance(request, ScriptCall) and request.script == "archive_game":
            raise Killed
        return super()._execute(request)


def stores(backend: Clients, index: IndexClients, files: Archive) -> tuple[GameCommands, SyncEventStore]:
    """The write side (an API process reading the archive too) and a worker's store."""
    store = EventStore(backend[1], index[1] if index else None, archive=files)
    handler = GameCommands(store, TokenStore(backend[1]), no_poke)
    return handler, SyncEventStore(backend[0], index[0] if index else None, archive=files)


def slot_keys(sync: SyncEventStore, game_id: str) -> list[str]:
    keys = [game_keys(game_id).events, game_keys(game_id).secret, game_keys(game_id).views]
    return [key for key in keys if sync.redis.exists(key)]


def everything(sync: SyncEventStore, game_id: str) -> tuple[Any, ...]:
    """What readers get of a game through a worker's store."""
    folded = sync.load(game_id, StateCache())
    assert folded is not None
    return (sync.read(game_id), sync.secret(game_id), sync.head(game_id), folded.state, folded.hash)


@pytest.mark.thorough
async def test_a_finished_game_is_noted_when_projected_and_archived_only_once_due(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, "skull")  # the shortest game: any finished one will do
    Projector(sync).catch_up(game_id)
    noted = sync.index.zscore(ARCHIVE_DUE, game_id)
    assert noted is not None and abs(noted - wall_clock_ms()) < 60_000
    before = everything(sync, game_id)

    assert archive(sync, files, wall_clock_ms() + 23 * HOUR_MS, POLICY).archived == []
    assert archive(sync, files, wall_clock_ms(), ArchivePolicy(after_ms=0, enabled=False)).archived == []
    assert slot_keys(sync, game_id) != []
    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).archived == [game_id]
    assert slot_keys(sync, game_id) == [] and sync.index.zscore(ARCHIVE_DUE, game_id) is None
    assert everything(sync, game_id) == before
    assert everything(SyncEventStore(store_backend[0], None, archive=Archive(tmp_path)), game_id) == before
    assert (await handler.load(game_id)).state == before[3]
    assert archive(sync, files, wall_clock_ms() + 2 * DUE, POLICY).archived == []  # once


@pytest.mark.thorough
async def test_a_kill_between_writing_the_file_and_removing_the_keys_loses_nothing_and_the_next_pass_ends_it(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=3)
    Projector(sync).catch_up(game_id)
    before = everything(sync, game_id)
    dying = DiesBeforeRemoval(store_backend[0], index_backend[0] if index_backend else None, archive=files)

    with pytest.raises(Killed):
        archive(dying, files, wall_clock_ms() + DUE, POLICY)
    assert files.path_of(game_id).is_file()  # the file first ...
    assert len(slot_keys(sync, game_id)) == 3  # ... and the game still whole in Redis, read there
    assert everything(sync, game_id) == before

    done = archive(sync, Archive(tmp_path), wall_clock_ms() + DUE, POLICY)  # a new process's pass
    assert done.archived == [game_id] and slot_keys(sync, game_id) == []
    assert everything(SyncEventStore(store_backend[0], None, archive=Archive(tmp_path)), game_id) == before


@pytest.mark.thorough
async def test_a_pass_that_died_after_removing_the_keys_leaves_an_index_entry_the_next_pass_clears(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=4)
    Projector(sync).catch_up(game_id)
    before = everything(sync, game_id)
    taken = sync.run(archived_games.snapshot(game_id, wall_clock_ms()))
    assert isinstance(taken, Snapshot)
    files.write(taken.game)
    removal = archived_games.remove_archived(game_id, taken)
    assert removal.send(None).script == "archive_game"  # type: ignore[union-attr]
    k = game_keys(game_id)
    keys = [k.events, k.views, k.pending, f"ts:{{{game_id}}}:disputes", k.commands, k.seat_commands]
    keys += [k.seats, k.secret, k.timer]
    assert sync.run(_script(keys, [taken.game.head, 0])) == 1  # the removal ran; its process died then
    assert sync.index.zscore(ARCHIVE_DUE, game_id) is not None

    done = archive(sync, files, wall_clock_ms() + DUE, POLICY)
    assert done.archived == [] and done.done_before == [game_id]
    assert sync.index.zscore(ARCHIVE_DUE, game_id) is None
    assert everything(sync, game_id) == before


def _script(keys: list[str], args: list[Any]) -> Operation[Any]:
    return (yield ScriptCall("archive_game", keys, args))


@pytest.mark.thorough
async def test_a_running_game_is_never_archived_even_when_its_index_entry_says_it_is_due(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    playing = await started_table(handler, 3)
    await handler.command(playing, 0, "c0", FLOWER, None)
    Projector(sync).catch_up(playing)
    sync.index.zadd(ARCHIVE_DUE, {playing: 0})  # a wrong entry: the pass checks the game itself
    head = sync.head(playing)

    done = archive(sync, files, wall_clock_ms() + DUE, POLICY)
    assert done.archived == [] and done.kept == {playing: "unfinished"}
    assert not files.path_of(playing).exists() and len(slot_keys(sync, playing)) == 3
    k = game_keys(playing)
    keys = [k.events, k.views, k.pending, f"ts:{{{playing}}}:disputes", k.secret]
    assert sync.run(_script(keys, [head, 0])) == 0  # and the script refuses it on its own
    assert sync.head(playing) == head and sync.secret(playing) is not None


@pytest.mark.thorough
async def test_a_game_whose_views_lag_its_head_is_kept_until_projected(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=5)
    sync.index.zadd(ARCHIVE_DUE, {game_id: 0})  # due, and never projected since its finish

    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).kept == {game_id: "lagging"}
    Projector(sync).catch_up(game_id)
    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).archived == [game_id]


@pytest.mark.thorough
async def test_finished_games_stored_before_the_index_existed_are_backfilled_once_then_archived(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    finished = await finished_game(handler, seed=6)
    playing = await started_table(handler, 3)
    Projector(sync).catch_up_all([finished, playing])
    sync.index.delete(ARCHIVE_DUE, ARCHIVE_MARK)  # as before the index existed, or its server lost it
    now = wall_clock_ms()

    assert archive(sync, files, now, POLICY).archived == []  # indexed as finished now
    assert sync.index.exists(ARCHIVE_MARK)
    assert sync.index.zrange(ARCHIVE_DUE, 0, -1) == [finished.encode()]
    assert archive(sync, files, now + DUE, POLICY).archived == [finished]


@pytest.mark.thorough
async def test_a_new_table_never_takes_the_id_of_an_archived_game(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=7)
    Projector(sync).catch_up(game_id)
    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).archived == [game_id]
    folded = await handler.load(game_id)
    again = await handler.store.create(game_id, {"root": "00", "master": "00"}, sync.read(game_id)[0])
    assert again is False and (await handler.load(game_id)).version == folded.version


def test_a_damaged_archive_file_is_named_and_never_read_as_a_game(tmp_path: Path) -> None:
    files = Archive(tmp_path)
    game = archived_games.ArchivedGame("g1", [], {"root": "00"})
    path = files.write(game)
    assert Archive(tmp_path).read("g1") == game
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(archived_games.ArchiveCorrupt, match=path.name):
        Archive(tmp_path).read("g1")
    assert Archive(tmp_path).read("g2") is None


MEMORY_GAMES = int(os.environ.get("ARCHIVE_MEMORY_GAMES", "1"))
"""Finished games of each kind the memory measurement plays (the docs' figures: ten)."""


@pytest.mark.thorough
@pytest.mark.redis
async def test_the_memory_a_finished_game_keeps_in_redis_before_and_after_archiving_measured(
    real_redis: redis.Redis, real_redis_async: Any, tmp_path: Path
) -> None:
    """Archiving leaves a finished game's slot its tokens alone, under a quarter of the memory it
    held; and prints the figures docs/operations.md states: ``MEMORY USAGE`` of every key of the
    game's slot and its lobby summary, before and after archiving, and its archive file's bytes; and
    how far ``INFO memory``'s ``used_memory`` fell over the games of each kind. A suite run plays
    one game of each kind (a game's slot is the same keys whatever its seed); the docs' figures
    are means over ten (``ARCHIVE_MEMORY_GAMES=10``, with ``-s`` to see them)."""
    files = Archive(tmp_path)
    handler, sync = stores((real_redis, real_redis_async), None, files)

    def slot_bytes(game_id: str) -> int:
        keys = real_redis.keys(f"ts:{{{game_id}}}:*")
        total = sum(int(real_redis.memory_usage(key, samples=0) or 0) for key in keys)
        return total + len(real_redis.hget(LOBBY, game_id) or b"")

    rows = []
    for game in game_names():
        games = []
        for seed in range(MEMORY_GAMES):
            game_id = await finished_game(handler, game, seed)
            Projector(sync).catch_up(game_id)
            games.append(game_id)
        before = [slot_bytes(g) for g in games]
        used = int(real_redis.info("memory")["used_memory"])
        assert sorted(archive(sync, files, wall_clock_ms() + DUE, POLICY).archived) == sorted(games)
        freed = used - int(real_redis.info("memory")["used_memory"])
        after = [slot_bytes(g) for g in games]
        assert all(real_redis.keys(f"ts:{{{g}}}:*") == [game_keys(g).tokens.encode()] for g in games)
        on_disk = [files.path_of(g).stat().st_size for g in games]
        mean = statistics.mean
        rows.append((game, mean(before), mean(after), mean(on_disk), freed / len(games)))
        assert all(a < b / 4 for a, b in zip(after, before, strict=True))
    for game, before_, after_, disk, freed_ in rows:
        print(
            f"\n[archive] finished {game} (3 players, {MEMORY_GAMES} games): "
            f"{before_ / 1024:.1f} KiB in Redis before, "
            f"{after_ / 1024:.2f} KiB after; archive file {disk / 1024:.1f} KiB; "
            f"INFO used_memory fell {freed_ / 1024:.1f} KiB per game"
        )


@pytest.mark.thorough
async def test_a_backup_holds_an_archived_game_as_it_was_in_redis_and_restores_it(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path / "archive")
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, "skull", seed=8)  # the shortest game: any will do
    kept = await finished_game(handler, "skull", seed=9)
    Projector(sync).catch_up_all([game_id, kept])
    fields = {"speaker": "seat:0", "name": "P0", "text": "well played", "version": sync.head(game_id)}
    sync.run(store_chat.append(game_id, "message", fields, wall_clock_ms(), 100))
    open_dispute(sync, game_id, "e" * 16, wall_clock_ms())
    resolve_dispute(sync, game_id, "e" * 16, wall_clock_ms() + 1)
    before = read_game(sync, game_id)
    assert before is not None and before["chat"] and before["disputes"] and before["tokens"]
    sync.index.zrem(ARCHIVE_DUE, kept)  # this one stays in Redis: export-all writes it from there

    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).archived == [game_id]
    assert read_game(sync, game_id) is None and game_id not in game_ids(sync)
    exported = export_all(sync, tmp_path / "backup.jsonl")
    games = [record for record in records(exported.path) if record["kind"] == "game"]
    assert sorted(record["id"] for record in games) == sorted([game_id, kept])  # each once
    assert next(record for record in games if record["id"] == game_id) == before

    target = SyncEventStore(fakeredis.FakeRedis())
    import_all(target, exported.path)
    assert read_game(target, game_id) == before  # restored into Redis, to be archived again there


@pytest.mark.thorough
async def test_a_backup_that_cannot_find_an_archived_games_file_is_refused_naming_the_game(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path / "archive")
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=10)
    Projector(sync).catch_up_all([game_id])
    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).archived == [game_id]

    elsewhere = SyncEventStore(sync.redis, sync.index, archive=Archive(tmp_path / "elsewhere"))
    with pytest.raises(BackupError, match="backups is not a directory: name an existing directory"):
        export_all(sync, tmp_path / "backups" / "b.jsonl")
    exported = export_all(sync, f"{tmp_path / 'backups'}/")  # a directory named with its slash, made
    with pytest.raises(BackupError, match=f"game {game_id} has left Redis for the archive"):
        export_all(elsewhere, tmp_path / "backups" / "b.jsonl")
    assert list((tmp_path / "backups").iterdir()) == [exported.path]  # the refused one left nothing
    assert exported.path.parent == tmp_path / "backups" and exported.games == 1


class ArchivedMidRead(SyncEventStore):
    """A store whose game is archived, by another process, right after the first page of a read."""

    removal: Operation[Any] | None = None

    def _execute(self, request: Any) -> Any:
        reply = super()._execute(request)
        if self.removal is not None and isinstance(request, Call) and request.args[0] == "XRANGE":
            removal, self.removal = self.removal, None
            assert SyncEventStore(self.redis, self.index).run(removal)
        return reply


@pytest.mark.thorough
async def test_a_read_of_several_pages_cut_short_by_the_archiving_is_completed_from_the_archive(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=10)
    Projector(sync).catch_up(game_id)
    whole = sync.read(game_id)
    taken = sync.run(archived_games.snapshot(game_id, wall_clock_ms()))
    assert isinstance(taken, Snapshot)
    files.write(taken.game)
    monkeypatch.setattr(ops, "PAGE", 5)  # reads of five entries a page
    reader = ArchivedMidRead(store_backend[0], index_backend[0] if index_backend else None, archive=files)
    reader.removal = archived_games.remove_archived(game_id, taken)

    assert reader.read(game_id) == whole
    assert reader.removal is None and slot_keys(sync, game_id) == []


@pytest.mark.thorough
async def test_a_fold_of_several_pages_cut_short_by_the_archiving_is_the_archived_game_at_its_end(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=11)
    Projector(sync).catch_up(game_id)
    whole = sync.load(game_id, StateCache())
    taken = sync.run(archived_games.snapshot(game_id, wall_clock_ms()))
    assert isinstance(taken, Snapshot) and whole is not None
    files.write(taken.game)
    monkeypatch.setattr(ops, "PAGE", 5)
    reader = ArchivedMidRead(store_backend[0], index_backend[0] if index_backend else None, archive=files)
    reader.removal = archived_games.remove_archived(game_id, taken)
    cache = StateCache()

    folded = reader.load(game_id, cache)
    assert reader.removal is None and folded is not None
    assert (folded.version, folded.hash, folded.state) == (whole.version, whole.hash, whole.state)
    again = cache.get(game_id)
    assert again is not None and again.version == whole.version  # the process keeps the whole game


@pytest.mark.thorough
async def test_the_sweeper_thread_archives_a_game_due_on_its_clock_and_none_with_archiving_off(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    game_id = await finished_game(handler, seed=12)
    Projector(sync).catch_up(game_id)
    queues = projection_queue(sync.index), lifecycle_queue(sync.index)
    later = wall_clock_ms() + DUE

    off = Sweeper(sync, *queues, interval=0.01, clock=lambda: later, archive=files, archive_policy=OFF)
    off.start()
    try:
        wait_until(lambda: sync.run(retention.backfilled()), 10, "the sweeper's retention pass")
    finally:
        off.stop()
        off.join(timeout=5)
    assert sync.redis.exists(game_keys(game_id).events) and not files.path_of(game_id).exists()

    sweeper = Sweeper(sync, *queues, interval=0.01, clock=lambda: later, archive=files, archive_policy=POLICY)
    sweeper.start()
    try:
        wait_until(lambda: not sync.redis.exists(game_keys(game_id).events), 10, "the game archived")
    finally:
        sweeper.stop()
        sweeper.join(timeout=5)
    assert files.read(game_id) is not None and sync.head(game_id) > 0


def test_the_archive_settings_name_the_directory_the_delay_and_off() -> None:
    default = Settings(data_dir=Path("/srv/tables"))
    assert default.archive_directory == Path("/srv/tables/archive")
    assert default.archive == ArchivePolicy(after_ms=24 * HOUR_MS, enabled=True)
    env = {
        "TABLESTREAM_ARCHIVE_DIR": "/mnt/tables-volume/archive",
        "TABLESTREAM_ARCHIVE_AFTER_HOURS": "1.5",
        "TABLESTREAM_ARCHIVE_ENABLED": "no",
    }
    chosen = Settings.from_env(env)
    assert chosen.archive_directory == Path("/mnt/tables-volume/archive")
    assert chosen.archive == ArchivePolicy(after_ms=int(1.5 * HOUR_MS), enabled=False)
    with pytest.raises(ValueError, match="TABLESTREAM_ARCHIVE_AFTER_HOURS=-1: must be 0 or more"):
        Settings(archive_after_hours=-1)
    with pytest.raises(ValueError, match="TABLESTREAM_ARCHIVE_INTERVAL_SECONDS=0: must be a number above 0"):
        Settings(archive_interval_seconds=0)


@pytest.mark.thorough
async def test_a_file_that_cannot_be_written_keeps_its_game_in_redis_and_the_pass_goes_on(
    store_backend: Clients, index_backend: IndexClients, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores(store_backend, index_backend, files)
    first = await finished_game(handler, seed=13)
    second = await finished_game(handler, seed=14)
    Projector(sync).catch_up_all([first, second])
    write = Archive.write

    def disk_full(self: Archive, game: archived_games.ArchivedGame) -> Path:
        if game.game_id == first:
            raise OSError(28, "No space left on device")
        return write(self, game)

    monkeypatch.setattr(Archive, "write", disk_full)
    done = archive(sync, files, wall_clock_ms() + DUE, POLICY)
    assert done.archived == [second] and done.kept == {first: "failed"}
    assert len(slot_keys(sync, first)) == 3 and not files.path_of(first).exists()
    monkeypatch.setattr(Archive, "write", write)
    assert archive(sync, files, wall_clock_ms() + DUE, POLICY).archived == [first]


@pytest.mark.thorough
@pytest.mark.slow
@pytest.mark.parametrize("step", DYING_STEPS)
async def test_an_archiver_process_killed_at_each_step_loses_nothing_and_the_next_pass_ends_its_work(
    real_redis: redis.Redis, real_redis_async: Any, redis_server: Any, tmp_path: Path, step: str
) -> None:
    files = Archive(tmp_path)
    handler, sync = stores((real_redis, real_redis_async), None, files)
    game_id = await finished_game(handler, seed=15)
    Projector(sync).catch_up(game_id)
    before = everything(sync, game_id)
    now = wall_clock_ms() + DUE
    command = ["-m", "tests.support.dying_archiver", "--redis-url", redis_server.url]
    command += ["--archive-dir", str(tmp_path), "--now-ms", str(now), "--die-at", step]
    process = subprocess.Popen([sys.executable, *command], env={**os.environ, "PYTHONPATH": os.getcwd()})
    try:
        assert process.wait(timeout=120) == -signal.SIGKILL, f"the archiver was not killed at {step!r}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert files.path_of(game_id).is_file()
    assert bool(slot_keys(sync, game_id)) == (step == "written")
    assert everything(SyncEventStore(real_redis, archive=Archive(tmp_path)), game_id) == before

    done = archive(sync, Archive(tmp_path), now, POLICY)
    assert (done.archived, done.done_before) == (([game_id], []) if step == "written" else ([], [game_id]))
    assert slot_keys(sync, game_id) == [] and sync.index.zscore(ARCHIVE_DUE, game_id) is None
    assert everything(SyncEventStore(real_redis, archive=Archive(tmp_path)), game_id) == before
