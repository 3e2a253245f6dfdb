"""The shell around the pure game code.

- ``history/``: pure code over a stored stream (framing and hash chain, folding, replay, audit,
  export, the offline verifier); no Redis.
- ``store/``: the only code that knows Redis, Lua and RQ.
- ``commands`` (write side), ``queries`` (read side), ``callers``, ``errors``: the application,
  free of HTTP, raising ``AppError``s with stable codes.
- ``api/``: the only code that knows Starlette and status codes.
- ``cli/``: the ``tablestream`` command, one module per subcommand.
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
