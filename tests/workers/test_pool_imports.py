"""A pool's process imports every game's lazily loaded modules before it starts a thread or forks a
worker: a fork copies a module's import lock as it is, so a worker forked while another thread of
the pool was importing a game's views would wait on that lock for ever
(``workers.pool.import_every_game``)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading

import pytest

from bots import bot_for
from domain.games import game_names, spec
from projections.registry import narration_for, views_for
from workers import pool


def test_importing_every_game_loads_each_games_views_narration_and_bot_in_a_fresh_process() -> None:
    loaded: list[object] = [
        part for game in game_names() for part in (views_for(game), narration_for(game), bot_for(game))
    ]
    modules = {getattr(module, "__name__", "") for module in loaded}
    assert {spec(game).views_module for game in game_names()} <= modules
    script = (
        "import sys, workers.pool as pool; pool.import_every_game(); "
        f"missing = sorted(set({sorted(modules)!r}) - set(sys.modules)); print(missing)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


class Started(Exception):
    """What the stand-in for the pool's first setup step raises: the pool got that far."""


def test_the_pool_imports_every_game_before_it_sets_up_or_starts_any_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps: list[str] = []
    monkeypatch.setattr(pool, "import_every_game", lambda: steps.append("import_every_game"))

    def first_setup() -> None:
        steps.append(f"setup with {threading.active_count()} threads")
        raise Started

    monkeypatch.setattr(pool, "configure_logging", first_setup)
    threads = threading.active_count()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the pool blocks the stop signals first
    try:
        with pytest.raises(Started):
            pool._run_pool("redis://127.0.0.1:1/0", 2, 1.0, None, "no", None, "auto", threading.Event())
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert steps == ["import_every_game", f"setup with {threads} threads"]
