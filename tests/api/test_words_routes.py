"""The words' server side: the rules page's path serves the shell, and each language's glossary is
served where the client's i18n.js loads it (``<static>/lang/<lang>.json``, next to ``js/``)."""

from __future__ import annotations

import pytest

from projections.words import GLOSSARY, LANGUAGES
from tests.api.conftest import Api


@pytest.mark.parametrize("game", ["skull", "six-nimmt", "skull-king"])
def test_a_rules_page_path_serves_the_client_shell(fake_api: Api, game: str) -> None:
    response = fake_api.client.get(f"/rules/{game}")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_languages_glossary_is_served_next_to_the_client_modules(fake_api: Api, lang: str) -> None:
    response = fake_api.client.get(f"/static/lang/{lang}.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == GLOSSARY[lang]


def test_a_language_without_a_glossary_is_not_found(fake_api: Api) -> None:
    assert fake_api.client.get("/static/lang/de.json").status_code == 404
