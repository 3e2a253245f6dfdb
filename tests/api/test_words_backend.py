"""The leaderboard's and player page's new words (``static/js/words_backend.js``): every key in the
four languages, plural entries with exactly the plural forms each language has (CLDR, as the
browser's ``Intl.PluralRules`` knows them), the same placeholders, and no English left in pl/fr/tr."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

MODULE = Path(__file__).parents[2] / "services" / "api" / "static" / "js" / "words_backend.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="needs node to read the JS module")

# The module imports i18n.js, which reads the browser's language: give node a browser's globals.
SCRIPT = """
globalThis.navigator = { languages: ["en"], language: "en" };
globalThis.localStorage = { getItem: () => null, setItem: () => {} };
globalThis.document = { documentElement: {}, querySelectorAll: () => [], getElementById: () => null };
const { WORDS, tw } = await import(process.argv[1]);
const categories = Object.fromEntries(Object.keys(WORDS).map((l) =>
  [l, new Intl.PluralRules(l).resolvedOptions().pluralCategories]));
const samples = [0, 1, 2, 4, 5, 22].map((n) => tw("rating.ratedGames", { n }));
console.log(JSON.stringify({ WORDS, categories, samples }));
"""


@pytest.fixture(scope="module")
def words() -> dict[str, Any]:
    assert NODE is not None
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", SCRIPT, str(MODULE)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    loaded: dict[str, Any] = json.loads(out.stdout)
    return loaded


def _placeholders(entry: str | dict[str, str]) -> set[str]:
    texts = [entry] if isinstance(entry, str) else list(entry.values())
    return {name for text in texts for name in re.findall(r"{(\w+)}", text)}


def test_every_new_word_exists_in_all_four_languages_with_its_placeholders(words: dict[str, Any]) -> None:
    catalogs = words["WORDS"]
    assert sorted(catalogs) == ["en", "fr", "pl", "tr"]
    for lang, catalog in catalogs.items():
        assert set(catalog) == set(catalogs["en"]), lang
        for key, entry in catalog.items():
            assert _placeholders(entry) == _placeholders(catalogs["en"][key]), (lang, key)


def test_plural_entries_have_exactly_the_forms_of_their_language(words: dict[str, Any]) -> None:
    for lang, catalog in words["WORDS"].items():
        for key, entry in catalog.items():
            if isinstance(entry, dict):
                assert sorted(entry) == sorted(words["categories"][lang]), (lang, key)


def test_no_english_is_left_in_polish_french_or_turkish(words: dict[str, Any]) -> None:
    english = words["WORDS"]["en"]
    for lang in ("pl", "fr", "tr"):
        for key, entry in words["WORDS"][lang].items():
            assert entry != english[key], (lang, key)


def test_a_plural_is_picked_by_the_count() -> None:
    assert NODE is not None
    script = SCRIPT.replace('languages: ["en"]', 'languages: ["pl"]').replace(
        'language: "en"', 'language: "pl"'
    )
    out = subprocess.run(
        [NODE, "--input-type=module", "-e", script, str(MODULE)],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    assert json.loads(out.stdout)["samples"] == [
        "0 gier rankingowych",
        "1 gra rankingowa",
        "2 gry rankingowe",
        "4 gry rankingowe",
        "5 gier rankingowych",
        "22 gry rankingowe",
    ]
