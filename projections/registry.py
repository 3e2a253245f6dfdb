"""Which view module serves which game."""

from __future__ import annotations

from functools import cache
from types import ModuleType


@cache
def game_views() -> dict[str, ModuleType]:
    from projections import six_nimmt, skull, skull_king

    return {"skull": skull, "six-nimmt": six_nimmt, "skull-king": skull_king}
