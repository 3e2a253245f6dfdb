# ruff: noqa: RUF001 - Polish, French and Turkish words (dotless i, typographic quotes)
"""The glossary (``projections/glossary/*.json`` and each game's ``glossary/*.json``, merged): one
vocabulary for the page and the log, complete in every language, with the plural forms each language
needs, and words for every error code the server can answer."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from domain.games import game_names, specs
from projections.words import (
    GLOSSARY,
    GLOSSARY_PATH,
    LANGUAGES,
    glossary_files,
    merge,
    plural_categories,
    plural_category,
    template,
    word,
)
from services.api.web import options_schema

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "services" / "api" / "static"
PLACEHOLDER = re.compile(r"\{(\w+)\}")
COUNTS = (0, 1, 2, 4, 5, 22)

# Values a language shares with English on purpose: names of games and cards, international words.
SAME_AS_ENGLISH = {
    "pl": {
        "API",
        "Skull",
        "6 nimmt!",
        "Skull King",
        "Scary Mary",
        "bot",
        "{s} s",
        "!",
        "{name} (bot) {predicate}",
    },
    "fr": {
        "API",
        "Skull",
        "6 nimmt!",
        "Skull King",
        "Scary Mary",
        "{s} s",
        "Tables",
        "Scores",
        "Pause",
        "Total",
        "Score",
        "Pages",
        "pile",
        "Pirate",
        "Escape",
        "{n}/2 points",
    },
    "tr": {
        "API",
        "Skull",
        "6 nimmt!",
        "Skull King",
        "Scary Mary",
        "bot",
        "!",
        "{name} (bot) {predicate}",
        "Normal",
        "+{n} bonus",
    },
}


def forms(entry: str | dict[str, str]) -> list[str]:
    return [entry] if isinstance(entry, str) else list(entry.values())


def placeholders(entry: str | dict[str, str]) -> set[str]:
    return {name for form in forms(entry) for name in PLACEHOLDER.findall(form)}


# -- complete and consistent --------------------------------------------------------------------


def test_every_language_has_exactly_the_keys_of_english() -> None:
    assert tuple(GLOSSARY) == LANGUAGES
    for lang in LANGUAGES:
        assert set(GLOSSARY[lang]) == set(GLOSSARY["en"]), lang


def test_the_files_are_flat_objects_of_templates_or_plural_objects() -> None:
    for lang in LANGUAGES:
        files = glossary_files(lang)
        assert files[0] == GLOSSARY_PATH / f"{lang}.json" and len(files) > 1  # the common one, the games'
        for path in files:
            raw = json.loads(path.read_text(encoding="utf-8"))
            for key, entry in raw.items():
                assert (isinstance(entry, str) and entry.strip()) or isinstance(entry, dict), (path, key)
                if isinstance(entry, dict):
                    assert all(isinstance(form, str) and form.strip() for form in entry.values()), (path, key)


def test_the_glossary_is_its_files_merged_and_a_key_in_two_files_is_an_error_at_load(tmp_path: Path) -> None:
    for lang in LANGUAGES:
        assert dict(GLOSSARY[lang]) == merge(glossary_files(lang))
    common, game = tmp_path / "common.json", tmp_path / "game.json"
    common.write_text('{"nav.lobby": "Lobby", "game.x": "X"}')
    game.write_text('{"game.x": "Y"}')
    with pytest.raises(ValueError, match=r"'game\.x' is in both .*common\.json and .*game\.json"):
        merge([common, game])
    game.write_text('{"log.x.a": "a", "log.x.a": "b"}')
    with pytest.raises(ValueError, match=r"game\.json: twice in one glossary file: log\.x\.a"):
        merge([common, game])
    game.write_text('["log.x.a"]')
    with pytest.raises(ValueError, match="one JSON object"):
        merge([common, game])


def test_every_plural_entry_has_exactly_the_categories_its_language_needs() -> None:
    assert plural_categories("pl") == {"one", "few", "many", "other"}
    assert plural_categories("en") == plural_categories("tr") == {"one", "other"}
    for lang in LANGUAGES:
        for key, entry in GLOSSARY[lang].items():
            if isinstance(entry, dict):
                assert set(entry) == plural_categories(lang), (lang, key, sorted(entry))
                assert isinstance(GLOSSARY["en"][key], dict), (lang, key, "English has no plural here")


def test_every_entry_uses_the_same_placeholders_in_every_language_and_every_form() -> None:
    for key, english in GLOSSARY["en"].items():
        expected = placeholders(english)
        for lang in LANGUAGES:
            for form in forms(GLOSSARY[lang][key]):
                assert set(PLACEHOLDER.findall(form)) == expected, (lang, key, form)


def test_no_english_is_left_in_polish_french_or_turkish() -> None:
    for lang in ("pl", "fr", "tr"):
        same = {
            entry
            for key, entry in GLOSSARY[lang].items()
            if entry == GLOSSARY["en"][key]
            and isinstance(entry, str)
            and PLACEHOLDER.sub("", entry).strip(" ()")
        }
        titles = {game.title for game in specs()}  # a game's title is its name in every language
        assert (
            same - SAME_AS_ENGLISH[lang] - titles - {"{name} {predicate}", "{type}", "{suit} {rank}"} == set()
        ), lang


# -- plural forms ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_plural_entry_renders_for_0_1_2_4_5_and_22(lang: str) -> None:
    for key, entry in GLOSSARY[lang].items():
        if not isinstance(entry, dict):
            continue
        for n in COUNTS:
            values = {name: f"<{name}>" for name in placeholders(entry)} | {"n": n}
            text = word(lang, key, **values)
            assert template(lang, key, n) == entry[plural_category(lang, n)]
            assert "{" not in text and "}" not in text, (lang, key, text)
            if "n" in placeholders(entry):
                assert str(n) in text, (lang, key, n, text)


EXPECTED_COUNTS = {
    ("pl", "log.n.flower"): ["0 kwiatów", "1 kwiat", "2 kwiaty", "4 kwiaty", "5 kwiatów", "22 kwiaty"],
    ("pl", "log.n.bullhead"): ["0 byków", "1 byk", "2 byki", "4 byki", "5 byków", "22 byki"],
    ("pl", "play.skull.discs"): ["0 żetonów", "1 żeton", "2 żetony", "4 żetony", "5 żetonów", "22 żetony"],
    ("pl", "play.six-nimmt.bullheads"): ["0 byków", "1 byk", "2 byki", "4 byki", "5 byków", "22 byki"],
    ("en", "play.six-nimmt.bullheads"): [
        "0 bullheads",
        "1 bullhead",
        "2 bullheads",
        "4 bullheads",
        "5 bullheads",
        "22 bullheads",
    ],
    ("en", "log.n.trick"): ["0 tricks", "1 trick", "2 tricks", "4 tricks", "5 tricks", "22 tricks"],
    ("fr", "log.n.flower"): ["0 fleur", "1 fleur", "2 fleurs", "4 fleurs", "5 fleurs", "22 fleurs"],
    ("fr", "play.six-nimmt.bullheads"): [
        "0 tête de bœuf",
        "1 tête de bœuf",
        "2 têtes de bœuf",
        "4 têtes de bœuf",
        "5 têtes de bœuf",
        "22 têtes de bœuf",
    ],
    ("tr", "log.n.flower"): ["0 gül", "1 gül", "2 gül", "4 gül", "5 gül", "22 gül"],
    ("tr", "play.six-nimmt.bullheads"): [
        "0 boğa başı",
        "1 boğa başı",
        "2 boğa başı",
        "4 boğa başı",
        "5 boğa başı",
        "22 boğa başı",
    ],
}


@pytest.mark.parametrize(("lang", "key"), sorted(EXPECTED_COUNTS))
def test_counted_words_take_the_form_the_number_asks_for(lang: str, key: str) -> None:
    assert [word(lang, key, n=n) for n in COUNTS] == EXPECTED_COUNTS[(lang, key)]


def test_a_waiting_tables_seats_taken_agree_with_their_number_in_french() -> None:
    said = [word("fr", "table.seatsTaken", n=n, taken=n, seats=4) for n in (0, 1, 2)]
    assert said == ["0 place prise sur 4", "1 place prise sur 4", "2 places prises sur 4"]
    assert word("en", "table.seatsTaken", n=1, taken=1, seats=4) == "1 of 4 seats taken"


def test_the_skull_challenge_on_the_page_counts_flowers_as_the_log_does() -> None:
    for n in COUNTS:
        page = word("pl", "play.skull.challenge", name="Ada", n=n)
        assert page.endswith(word("pl", "log.n.flower", n=n)), page


# -- one vocabulary -------------------------------------------------------------------------------


def test_the_page_and_the_log_name_the_same_things_with_the_same_words() -> None:
    said = {lang: GLOSSARY[lang] for lang in LANGUAGES}
    assert said["tr"]["play.skull.flower"].lower() == said["tr"]["log.skull.disc.flower"] == "gül"
    assert said["tr"]["play.skull.skull"].lower() == said["tr"]["log.skull.disc.skull"] == "kuru kafa"
    assert "żeton" in said["pl"]["play.skull.place"] and "żeton" in said["pl"]["log.skull.disc_placed.hidden"]
    assert not any("krąż" in form for entry in said["pl"].values() for form in forms(entry))
    skull_king = [
        entry for key, entry in said["fr"].items() if key.startswith(("play.skull-king.", "log.skull-king"))
    ]
    assert not any("annonce" in form.lower() for entry in skull_king for form in forms(entry))
    assert (
        said["fr"]["play.skull-king.bids"] == "Prédiction"
        and "prédit" in said["fr"]["log.skull-king.bid_placed"]
    )
    assert said["fr"]["play.skull-king.card.escape"] in said["fr"]["log.skull-king.card.escape"]
    assert said["fr"]["table.bot"] in said["fr"]["log.actor.bot"]
    for lang in LANGUAGES:
        assert said[lang]["game.six-nimmt"] == "6 nimmt!"
        assert word(lang, "play.six-nimmt.bullheads", n=5) == word(lang, "log.n.bullhead", n=5)
        assert said[lang]["play.skull-king.card.skull-king"] == "Skull King"


def test_a_seated_bot_is_named_once() -> None:
    for lang in LANGUAGES:
        sentence = word(lang, "log.table.bot_seated", name="Bot 2", number=2)
        assert "Bot Bot" not in sentence and "bot Bot" not in sentence, sentence


# -- every key the client and the server ask for -------------------------------------------------


def client_keys() -> Iterator[tuple[str, str]]:
    """Every literal key a page module passes to ``t``/``has`` (and the shell's ``data-i18n``)."""
    asked = re.compile(r"""\b(?:t|has)\(\s*["']([\w.-]+)["']\s*[,)]""")
    for path in sorted(STATIC.rglob("*.js")):
        for key in asked.findall(path.read_text(encoding="utf-8")):
            yield path.name, key
    for key in re.findall(r'data-i18n="([\w.-]+)"', (STATIC / "index.html").read_text(encoding="utf-8")):
        yield "index.html", key


def test_every_key_a_page_asks_for_is_in_the_glossary() -> None:
    missing = {(module, key) for module, key in client_keys() if key not in GLOSSARY["en"]}
    assert missing == set()


def test_every_word_built_from_data_is_in_the_glossary() -> None:
    families = {
        "status": ["waiting", "playing", "finished"],
        "play.skull-king.suit": ["yellow", "red", "blue", "black"],
        "play.skull-king.card": ["escape", "pirate", "mermaid", "scary-mary", "skull-king"],
        "play.skull": ["flower", "skull", "last_chance"],
        "game": game_names(),
        "rules.card": ["black", "escape", "pirate", "mermaid", "scary-mary", "skull-king"],
        "rematch.answer": ["accepted", "pending", "declined", "bot"],
    }
    wanted = {f"{family}.{name}" for family, names in families.items() for name in names}
    wanted |= {f"play.skull-king.as_{declared}" for declared in ("pirate", "escape")}
    assert wanted - set(GLOSSARY["en"]) == set()


def test_every_table_option_has_a_label_an_explanation_and_words_for_its_choices() -> None:
    for game in options_schema()["games"]:
        for option in game["options"]:
            name = option["name"]
            needed = {f"opt.{name}", f"opt.{name}.help"}
            needed |= {f"opt.{name}.{value}" for value in option["values"] or ()}
            assert needed <= set(GLOSSARY["en"]), (game["game"], name, needed - set(GLOSSARY["en"]))


def test_every_game_has_a_rules_summary() -> None:
    for game in game_names():
        for part in ("lead", "material", "goal", "play.1", "hidden"):
            assert f"rules.{game}.{part}" in GLOSSARY["en"], (game, part)
        assert f"rules.{game}.end" in GLOSSARY["en"] or f"rules.{game}.end.1" in GLOSSARY["en"], game


# -- error codes -----------------------------------------------------------------------------------

ERROR_TYPES = {
    "Rejected",
    "CheckpointError",  # services.fairness.transparency.checkpoint: the log routes answer with its code
    "Conflict",
    "AppError",
    "MalformedError",
    "InvalidError",
    "RuleError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "ConflictError",
    "TooLargeError",
    "UnsupportedMediaTypeError",
    "RequestTimeoutError",
    "RetryLaterError",
    "TooManyError",
    "UnavailableError",
    "error_body",
}
# The codes the web client makes up itself: no answer at all, or an answer that is not JSON.
CLIENT_CODES = {"network", "http"}
# Announced by the table's reclaim route (``POST /games/{id}/reclaim``), worded ahead of it.
ANNOUNCED_CODES = {"not_taken_over", "cannot_reclaim"}


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _functions(tree: ast.Module) -> list[ast.AST]:
    """The module and each function in it: the scopes a code's name is looked up in."""
    return [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))]


def _error_calls(scope: ast.AST) -> Iterator[ast.Call]:
    for node in ast.walk(scope):
        if isinstance(node, ast.Call) and node.args:
            callee = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if callee in ERROR_TYPES:
                yield node


def server_error_codes() -> tuple[set[str], list[str]]:
    """Every code an error of the server is raised or answered with, read from the source: the first
    argument of the error types and of ``error_body``, a literal or a name assigned literals in the
    same function. Returns the codes and the calls whose code could not be read."""
    codes: set[str] = set()
    unread: list[str] = []
    for package in ("domain", "projections", "services", "workers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for scope in _functions(ast.parse(path.read_text(encoding="utf-8"))):
                assigned: dict[str, set[str]] = {}
                for node in ast.walk(scope):
                    if isinstance(node, ast.Assign):
                        for target in node.targets:
                            if isinstance(target, ast.Name):
                                assigned.setdefault(target.id, set()).update(_strings(node.value))
                for call in _error_calls(scope):
                    first = call.args[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        codes.add(first.value)
                    elif isinstance(first, ast.Name) and assigned.get(first.id):
                        codes |= assigned[first.id]
                    elif not (isinstance(first, ast.Attribute) and first.attr == "code"):
                        unread.append(f"{path.relative_to(ROOT)}:{call.lineno}")
                    # else: it passes on a code raised elsewhere (a Rejected, an AppError)
    return codes, unread


@pytest.mark.thorough
def test_every_error_code_is_written_where_this_test_can_read_it() -> None:
    codes, unread = server_error_codes()
    assert unread == []
    assert {
        "not_your_turn",
        "game_not_found",
        "must_flip_own_first",
        "cannot_flip_own",
        "method_not_allowed",
        "internal_error",
        "rate_limited",
        "name_taken",
    } <= codes


@pytest.mark.thorough
def test_every_error_code_the_server_can_return_has_words_in_every_language() -> None:
    codes, _ = server_error_codes()
    wanted = {f"err.{code}" for code in codes | CLIENT_CODES | ANNOUNCED_CODES}
    assert wanted - set(GLOSSARY["en"]) == set()
    stale = {key for key in GLOSSARY["en"] if key.startswith("err.") and key.count(".") == 1} - wanted
    assert stale == set(), "words for codes nothing returns any more"
