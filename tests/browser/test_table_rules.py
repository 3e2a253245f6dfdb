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


def test_the_table_counts_points_with_each_languages_own_plural_forms_in_the_browser(
    server: Server, browser
) -> None:
    # The glossary's forms are checked against CLDR in tests/projections/test_glossary.py; here the
    # page's own t() picks them with the browser's Intl.PluralRules.
    page = player(browser, server.url)
    page.goto("/")
    said = page.evaluate(
        f"async () => {{ const i = await ({MODULE})('i18n.js');"
        " const out = {}; for (const l of ['en', 'pl', 'fr', 'tr']) { await i.setLang(l);"
        " out[l] = [0, 1, 2, 4, 5, 22].map(n => i.t('table.sheetPoints', { n })); }"
        " await i.setLang('en'); return out; }"
    )
    assert said["en"] == ["0 points", "1 point", "2 points", "4 points", "5 points", "22 points"]
    assert said["pl"] == ["0 punktów", "1 punkt", "2 punkty", "4 punkty", "5 punktów", "22 punkty"]
    assert said["fr"] == ["0 point", "1 point", "2 points", "4 points", "5 points", "22 points"]
    assert said["tr"] == ["0 puan", "1 puan", "2 puan", "4 puan", "5 puan", "22 puan"]
    page.context.close()
