"""Where a game's projections live, found through the registry (``domain.games``).

A game's projections are one package: ``projections/<package>/`` of its ``GameSpec`` (its
``views_module``). A game registered from elsewhere names its views module; its projections package
is that module when it is a package, else the package the module is in. The package holds the views
(the package itself), ``narration.py`` and ``glossary/<lang>.json`` (``projections.registry``).
"""

from __future__ import annotations

import importlib
from importlib.resources import files
from pathlib import Path

from domain.games import spec

GLOSSARY_DIR = "glossary"  # a game's own words, inside its projections package


def projections_package(game: str) -> str:
    """The package of a game's projections: its views module, or the package that module is in;
    ``Rejected('unknown_game')`` for no such game."""
    path = spec(game).views_module
    return path if hasattr(importlib.import_module(path), "__path__") else path.rpartition(".")[0]


def glossary_dir(game: str) -> Path:
    """Where a game's own glossary files are (``<projections package>/glossary/``; maybe absent)."""
    return Path(str(files(projections_package(game)).joinpath(GLOSSARY_DIR)))
