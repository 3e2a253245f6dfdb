"""The shell around the pure game code, in rooms named for what they do. From the ground up:

- ``history/``: pure code over a stored stream (framing and hash chain, folding, replay, audit,
  export, the offline verifier); no Redis.
- ``telemetry/``: metrics and structured logs, a leaf every room may use.
- ``store/``: the only code that knows Redis, Lua and RQ.
- ``fairness/``: signing keys, signed receipts and the public log of game heads.
- ``table/``: playing and watching one game - the write side (``commands``), the read side
  (``queries``), callers, invitations, timers and bot pacing, tracing.
- ``accounts/``: registered players, their names, profiles and leaderboards.
- ``operating/``: the settings and the operator's console.
- ``people/``: quick play, rematches, a player's tables, the waiting-table budgets, chat.
- ``disputes/``: disputes on a round, their bundles and the receipt check.
- ``api/``: the only code that knows Starlette and status codes.
- ``cli/``: the ``tablestream`` command, one module per subcommand; ``bench/``: the benchmarks.

``errors`` is the one vocabulary of refusals (``AppError`` and its codes) every room raises. Each
room's ``__init__`` says what it owns and what it may import; ``tests/test_architecture.py`` holds
them to it.
"""

from __future__ import annotations

import importlib
import os

from domain.games import register

EXTRA_GAMES_ENV = "TABLESTREAM_EXTRA_GAMES"


def register_extra_games(value: str | None = None) -> list[str]:
    """Register the games named by ``TABLESTREAM_EXTRA_GAMES``: comma-separated importable modules,
    each defining ``SPEC`` (a ``domain.spec.GameSpec``). This is how a game that lives outside
    ``domain`` is played by every process of the service (the tests' own fourth game is registered
    so for the servers they start); unset, nothing happens. Runs when ``services`` is first imported,
    before any module asks the registry. Returns the names registered."""
    names = []
    for path in filter(
        None, (part.strip() for part in (value or os.environ.get(EXTRA_GAMES_ENV, "")).split(","))
    ):
        game = importlib.import_module(path).SPEC
        register(game)
        names.append(game.name)
    return names


register_extra_games()
