"""What the table page computes or says by itself, checked in Chromium against the rules and across
the four languages: the Skull King card marked as winning the trick so far, and the table's words."""

from __future__ import annotations

import random
from typing import Any

import pytest

from domain.skull_king.cards import DECK, SCARY_MARY
from domain.skull_king.state import Play
from domain.skull_king.tricks import winning_index
from tests.browser.conftest import Server
from tests.browser.play import player

pytestmark = pytest.mark.browser

# A page module, resolved from the shell's own script: asset URLs may be fingerprinted.
# Words spelt as in English in that language: the unit "s", "Scores", "Total", "Normal", "bonus".
SAME_WORD = {
    ("pl", "table.seconds"),
    ("fr", "table.seconds"),
    ("fr", "table.scoresToggle"),
    ("fr", "table.sheetTotal"),
    ("tr", "table.speed.normal"),
    ("tr", "table.sheetBonus"),
}
MODULE = "rel => import(new URL(rel, document.querySelector('script[type=module]').src).href)"


def random_tricks(rng: random.Random, count: int) -> list[list[dict[str, Any]]]:
    """Tricks of 1 to 6 distinct cards, specials as often as numbered ones, Scary Mary declared
    either way."""
    specials = [card for card in DECK if not card.startswith(("yellow", "red", "blue", "black"))]
    numbered = [card for card in DECK if card not in specials]
    tricks = []
    for _ in range(count):
        size = rng.randint(1, 6)
        special = rng.randint(0, size)
        cards = rng.sample(specials, special) + rng.sample(numbered, size - special)
        rng.shuffle(cards)
        tricks.append(
            [
                {
                    "seat": seat,
                    "card": card,
                    "as": rng.choice(["pirate", "escape"]) if card == SCARY_MARY else None,
                }
                for seat, card in enumerate(cards)
            ]
        )
    return tricks


def test_the_card_marked_as_winning_the_trick_so_far_is_the_one_the_rules_name(
    server: Server, browser
) -> None:
    page = player(browser, server.url)
    page.goto("/")
    tricks = random_tricks(random.Random(2207), 400)
    shown = page.evaluate(
        f"async tricks => {{ const m = await ({MODULE})('games/skull_king.js');"
        " return tricks.map(t => m.winningIndex(t)); }",
        tricks,
    )
    expected = [winning_index([Play(p["seat"], p["card"], p["as"]) for p in trick]) for trick in tricks]
    wrong = [
        (trick, got, want) for trick, got, want in zip(tricks, shown, expected, strict=True) if got != want
    ]
    assert not wrong, wrong[:3]
    page.context.close()


def test_every_table_word_exists_in_the_four_languages_with_the_plural_forms_each_language_needs(
    server: Server, browser
) -> None:
    page = player(browser, server.url)
    page.goto("/")
    words = page.evaluate(f"async () => (await ({MODULE})('words_table.js')).WORDS")
    forms = {  # the CLDR categories each language's numbers use (0, 1, 2, 4, 5, 22 among them)
        "en": {"one", "other"},
        "pl": {"one", "few", "many", "other"},
        "fr": {"one", "many", "other"},
        "tr": {"one", "other"},
    }
    assert set(words) == set(forms)
    for lang, entries in words.items():
        assert set(entries) == set(words["en"]), (lang, set(words["en"]) ^ set(entries))
        for key, entry in entries.items():
            if isinstance(words["en"][key], dict):
                assert isinstance(entry, dict) and set(entry) == forms[lang], (lang, key, entry)
            else:
                assert isinstance(entry, str) and entry.strip(), (lang, key)
            if lang != "en" and (lang, key) not in SAME_WORD:
                assert entry != words["en"][key], f"{lang} {key} is still English"
    said = page.evaluate(
        f"async () => {{ const m = await ({MODULE})('words_table.js'); const i = await ({MODULE})('i18n.js');"
        " const out = {}; for (const l of ['en', 'pl', 'fr', 'tr']) { i.setLang(l);"
        " out[l] = [0, 1, 2, 4, 5, 22].map(n => m.tw('table.sheetPoints', { n })); }"
        " i.setLang('en'); return out; }"
    )
    assert said["en"] == ["0 points", "1 point", "2 points", "4 points", "5 points", "22 points"]
    assert said["pl"] == ["0 punktów", "1 punkt", "2 punkty", "4 punkty", "5 punktów", "22 punkty"]
    assert said["fr"] == ["0 point", "1 point", "2 points", "4 points", "5 points", "22 points"]
    assert said["tr"] == ["0 puan", "1 puan", "2 puan", "4 puan", "5 puan", "22 puan"]
    page.context.close()
