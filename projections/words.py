"""The glossary: every word a person reads, in English, Polish, French and Turkish.

One glossary per language, shared by the web client (which loads only its language's, served as
``<static>/lang/<lang>.json``) and the server's narration (``projections.narration``), so that the
page and the log use the same words. It is merged at load from JSON files (package data): the
common one, ``projections/glossary/<lang>.json``, then each registered game's own,
``glossary/<lang>.json`` in the game's projections package (``projections.packages.glossary_dir``:
its title, its log sentences, its rules summary), in the registry's order. A key in two files
(or twice in one) is an error at load. A file is one flat object: key -> template, or key ->
plural object ``{"one": ..., "few": ..., "many": ..., "other": ...}`` with the CLDR categories the
language has. Placeholders are ``{name}``; a plural object is chosen by its ``{n}`` value. Every
language has exactly the keys of English (the tests check it, with the placeholders and the plural
forms). ``GLOSSARY`` follows the registry: a game registered later brings its words.

The plural categories come from Babel's CLDR rules, the same data as the browsers'
``Intl.PluralRules``, so the client and the narration pick the same form for the same number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

from babel import Locale

from domain.games import game_names
from projections.packages import glossary_dir

LANGUAGES: tuple[str, ...] = ("en", "pl", "fr", "tr")
DEFAULT_LANGUAGE = "en"
GLOSSARY_DIR = "glossary"  # inside the ``projections`` package
GLOSSARY_PATH = Path(str(files("projections").joinpath(GLOSSARY_DIR)))  # the common glossary's files

Entry = str | Mapping[str, str]


def glossary_dirs() -> list[Path]:
    """The folders whose ``<lang>.json`` make the glossary, in merge order: the common one, then each
    registered game's that exists."""
    games = [glossary_dir(game) for game in game_names()]
    return [GLOSSARY_PATH, *(folder for folder in games if folder.is_dir())]


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise ValueError(f"twice in one glossary file: {', '.join(twice)}")
    return dict(pairs)


def read_file(path: Path) -> dict[str, Entry]:
    """One glossary file: a flat JSON object, each key once."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=_unique)
    except ValueError as problem:
        raise ValueError(f"{path}: {problem}") from None
    if not isinstance(entries, dict):
        raise ValueError(f"{path}: a glossary file is one JSON object")
    return entries


def merge(paths: Sequence[Path]) -> dict[str, Entry]:
    """The entries of ``paths`` together, in order; ``ValueError`` naming both files when a key is
    in two of them."""
    merged: dict[str, Entry] = {}
    source: dict[str, Path] = {}
    for path in paths:
        for key, entry in read_file(path).items():
            if key in source:
                raise ValueError(f"the glossary key {key!r} is in both {source[key]} and {path}")
            merged[key] = entry
            source[key] = path
    return merged


def glossary_files(lang: str, dirs: Sequence[Path] | None = None) -> list[Path]:
    """The files of ``lang``'s glossary, in merge order (``dirs``: ``glossary_dirs()``)."""
    return [
        path
        for folder in (glossary_dirs() if dirs is None else dirs)
        if (path := folder / f"{lang}.json").is_file()
    ]


class _Glossary(Mapping[str, Mapping[str, Entry]]):
    """The merged glossary per language, loaded at first use and again when the registry grows."""

    def __init__(self) -> None:
        self._loaded: dict[str, tuple[tuple[str, ...], Mapping[str, Entry]]] = {}

    def __getitem__(self, lang: str) -> Mapping[str, Entry]:
        if lang not in LANGUAGES:
            raise KeyError(lang)
        games = tuple(game_names())
        loaded = self._loaded.get(lang)
        if loaded is None or loaded[0] != games:
            loaded = (games, merge(glossary_files(lang)))
            self._loaded[lang] = loaded
        return loaded[1]

    def __iter__(self) -> Iterator[str]:
        return iter(LANGUAGES)

    def __len__(self) -> int:
        return len(LANGUAGES)


GLOSSARY: Mapping[str, Mapping[str, Entry]] = _Glossary()
_PLURALS = {lang: Locale.parse(lang).plural_form for lang in LANGUAGES}


def plural_category(lang: str, n: float) -> str:
    """The CLDR cardinal category of ``n`` in ``lang``: ``"one"``, ``"few"``, ``"many"`` or ``"other"``."""
    return _PLURALS[lang](n)


def plural_categories(lang: str) -> frozenset[str]:
    """Every category a plural object of ``lang`` must have (``"other"`` always)."""
    return frozenset(_PLURALS[lang].tags) | {"other"}


def template(lang: str, key: str, n: Any = None) -> str:
    """The template of ``key`` in ``lang``; for a plural object, the form for ``n`` (``other`` when
    ``n`` is not a number)."""
    entry = GLOSSARY[lang][key]
    if isinstance(entry, str):
        return entry
    number = n if isinstance(n, int | float) and not isinstance(n, bool) else None
    category = plural_category(lang, number) if number is not None else "other"
    return entry.get(category) or entry["other"]


def word(lang: str, key: str, **values: Any) -> str:
    """``key`` in ``lang`` with its placeholders filled from ``values`` (a plural by ``values["n"]``)."""
    return template(lang, key, values.get("n")).format(**values)


def has(lang: str, key: str) -> bool:
    return key in GLOSSARY[lang]
