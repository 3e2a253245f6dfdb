"""Bots: each picks a command from its own seat's view only (never the hidden state).

A bot module exposes ``choose(view, rng) -> command dict``; ``view`` is exactly what the API's
``GET /games/{id}/view`` returns for the bot's seat, and the choice is one of ``view["legal"]``.
"""

from __future__ import annotations

import importlib
import random
from typing import Any

BOT_MODULES = {
    "skull": "workers.bots.skull",
    "six-nimmt": "workers.bots.six_nimmt",
    "skull-king": "workers.bots.skull_king",
}


def choose(game: str, view: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    return importlib.import_module(BOT_MODULES[game]).choose(view, rng)  # type: ignore[no-any-return]
