"""The words' server side: the rules page's path serves the shell, and each language's glossary (the
common file and every game's own, merged) is served where the client's i18n.js loads it
(``<static>/lang/<lang>.json``, next to ``js/``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from domain.games import game_names
from projections.words import GLOSSARY, LANGUAGES
from services.api.assets import AssetTree
from tests.api.conftest import Api


@pytest.mark.parametrize("game", game_names())
def test_a_rules_page_path_serves_the_client_shell(fake_api: Api, game: str) -> None:
    response = fake_api.client.get(f"/rules/{game}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_languages_glossary_is_served_next_to_the_client_modules(fake_api: Api, lang: str) -> None:
    """The whole glossary the server reads, each game's words included, in one file per language."""
    response = fake_api.client.get(f"/static/lang/{lang}.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == GLOSSARY[lang]
    assert all(f"game.{game}" in response.json() for game in game_names())


def test_a_language_without_a_glossary_is_not_found(fake_api: Api) -> None:
    assert fake_api.client.get("/static/lang/de.json").status_code == 404


def test_a_language_file_is_served_as_its_glossary_files_merged_and_follows_each_of_them(
    tmp_path: Path,
) -> None:
    common, game = tmp_path / "common", tmp_path / "game"
    for folder, text in ((common, '{"nav.lobby": "Lobby"}'), (game, '{"game.x": "X"}')):
        folder.mkdir()
        (folder / "en.json").write_text(text)
    (game / "pl.json").write_text('{"game.x": "X"}')  # no common Polish file: no Polish glossary served
    tree = AssetTree(tmp_path / "static", [common, game], recheck_seconds=0)
    before = tree.current()
    assert set(before.files) == {"lang/en.json"}
    assert json.loads(before.files["lang/en.json"].body) == {"nav.lobby": "Lobby", "game.x": "X"}
    (game / "en.json").write_text('{"game.x": "Ex"}')
    after = tree.current()
    assert after.version != before.version and json.loads(after.files["lang/en.json"].body)["game.x"] == "Ex"
    (game / "en.json").write_text('{"nav.lobby": "Lobby"}')
    with pytest.raises(ValueError, match=r"'nav\.lobby' is in both"):
        tree.current()
