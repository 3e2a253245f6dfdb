"""The glossary: every word a person reads, in English, Polish, French and Turkish.

One JSON file per language in ``projections/glossary/`` (package data), shared by the web client
(which loads only its language's file, served as ``<static>/lang/<lang>.json``) and the server's
narration (``projections.narration``), so that the page and the log use the same words. A file is
one flat object: key -> template, or key -> plural object ``{"one": ..., "few": ..., "many": ...,
"other": ...}`` with the CLDR categories the language has. Placeholders are ``{name}``; a plural
object is chosen by its ``{n}`` value. Every language has exactly the keys of English (the tests
check it, with the placeholders and the plural forms).

The plural categories come from Babel's CLDR rules, the same data as the browsers'
``Intl.PluralRules``, so the client and the narration pick the same form for the same number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

from babel import Locale

LANGUAGES: tuple[str, ...] = ("en", "pl", "fr", "tr")
DEFAULT_LANGUAGE = "en"
GLOSSARY_DIR = "glossary"  # inside the ``projections`` package
GLOSSARY_PATH = Path(str(files("projections").joinpath(GLOSSARY_DIR)))  # the files the web client loads

Entry = str | Mapping[str, str]


def _load(lang: str) -> dict[str, Entry]:
    text = files("projections").joinpath(GLOSSARY_DIR, f"{lang}.json").read_text(encoding="utf-8")
    entries: dict[str, Entry] = json.loads(text)
    return entries


GLOSSARY: Mapping[str, Mapping[str, Entry]] = {lang: _load(lang) for lang in LANGUAGES}
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
