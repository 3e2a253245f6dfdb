"""An archive pass that is killed for real (SIGKILL, by itself) at one step of archiving a game.

    python -m tests.support.dying_archiver --redis-url URL --archive-dir DIR --now-ms MS --die-at STEP

It runs the production pass (``workers.sweeper.archive`` on a ``SyncEventStore`` with the archive
``workers.pool`` gives its sweeper); only the kill is added:

- ``written``: the game's file is written and renamed into place, its keys not yet removed;
- ``removed``: the removal script ran (its keys are gone), its index entry not yet dropped.

The fault test ``tests/workers/test_archive.py`` kills one at each step.
"""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path
from typing import Any

import redis

from services.store.archive import Archive, ArchivedGame, ArchivePolicy
from services.store.event_store import SyncEventStore
from services.store.requests import ScriptCall
from workers.sweeper import archive

STEPS = ("written", "removed")


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


class DyingArchive(Archive):
    def __init__(self, directory: Path, die_at: str) -> None:
        super().__init__(directory)
        self.die_at = die_at

    def write(self, game: ArchivedGame) -> Path:
        path = super().write(game)
        if self.die_at == "written":
            die()
        return path


class DyingStore(SyncEventStore):
    die_at = ""

    def _execute(self, request: Any) -> Any:
        reply = super()._execute(request)
        if self.die_at == "removed" and isinstance(request, ScriptCall) and request.script == "archive_game":
            die()
        return reply


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--archive-dir", required=True)
    parser.add_argument("--now-ms", type=int, required=True)
    parser.add_argument("--die-at", choices=STEPS, required=True)
    args = parser.parse_args()
    files = DyingArchive(Path(args.archive_dir), args.die_at)
    store = DyingStore(redis.Redis.from_url(args.redis_url), archive=files)
    store.die_at = args.die_at
    archive(store, files, args.now_ms, ArchivePolicy())
    raise SystemExit("the pass ended without reaching its step")


if __name__ == "__main__":
    main()
