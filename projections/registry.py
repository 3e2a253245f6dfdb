"""Which view module serves which game."""

from __future__ import annotations

import importlib
from types import ModuleType

VIEW_MODULES = {
    "skull": "projections.skull",
    "six-nimmt": "projections.six_nimmt",
    "skull-king": "projections.skull_king",
}


def views_for(game: str) -> ModuleType:
    return importlib.import_module(VIEW_MODULES[game])
