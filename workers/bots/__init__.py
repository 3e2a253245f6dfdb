"""Bots: each picks a command from its own seat's view only (never the hidden state)."""

from __future__ import annotations

import random
from functools import cache
from typing import Any, Protocol


class Bot(Protocol):
    def choose(self, view: dict[str, Any], rng: random.Random) -> dict[str, Any]: ...


@cache
def bots() -> dict[str, Bot]:
    from workers.bots import six_nimmt, skull, skull_king

    return {"skull": skull, "six-nimmt": six_nimmt, "skull-king": skull_king}  # type: ignore[dict-item]
