"""One name rule for accounts and seats, over HTTP: hostile names are refused with a specific code
and sentence, international names are accepted, no seat impersonates a registered player, and an
account sits under its own name."""

# ruff: noqa: RUF001, RUF003 - lookalike letters are what this file is about

from __future__ import annotations

from typing import Any

import pytest

from tests.api.conftest import Api

REGISTERED = ("Ada", "Paypal", "Łukasz")

HOSTILE: list[tuple[str, str, str]] = [  # (name, code, a word of the sentence)
    ("Ada\u034f", "invalid_name", "U+034F"),  # combining grapheme joiner: draws nothing
    ("Ada\ufe0f", "invalid_name", "U+FE0F"),  # variation selector 16
    ("Ada\U000e0100", "invalid_name", "U+E0100"),  # variation selector 17
    ("Ad\u200ba", "invalid_name", "U+200B"),  # zero-width space
    ("Ad\u200da", "invalid_name", "U+200D"),  # zero-width joiner
    ("\u2060Ada", "invalid_name", "U+2060"),  # word joiner
    ("Ada\u00ad", "invalid_name", "U+00AD"),  # soft hyphen
    ("\u202eadA", "invalid_name", "U+202E"),  # right-to-left override
    ("Ada\u2066x\u2069", "invalid_name", "U+2066"),  # bidi isolate
    ("Ada\u200fx", "invalid_name", "U+200F"),  # right-to-left mark
    ("\u3164Ada", "invalid_name", "invisible"),  # Hangul filler (NFKC: U+1160), a "blank letter"
    ("Ad\na", "invalid_name", "U+000A"),  # newline
    ("Ad\x00a", "invalid_name", "U+0000"),  # NUL
    ("Ad\x1ba", "invalid_name", "U+001B"),  # escape
    ("A\u2028da", "invalid_name", "U+2028"),  # line separator
    ("Ada\ue000", "invalid_name", "U+E000"),  # private use
    ("Ad\u180ea", "invalid_name", "U+180E"),  # Mongolian vowel separator
    ("Ad  a", "invalid_name", "two spaces"),
    ("Za\u0301\u0302\u0303\u0304\u0305lgo", "invalid_name", "combining marks"),  # a stack of marks
    ("\u0301Ada", "invalid_name", "combining mark"),  # begins with a mark
    ("\ufdfa" * 3, "invalid_name", "characters"),  # 3 characters, 54 once in NFKC
    ("   ", "invalid_name", "1 to 40"),
    ("Аda", "name_confusable", "Ada"),  # Cyrillic А (U+0410) for Latin A
    ("Pаypal", "name_confusable", "Paypal"),  # Cyrillic а inside a Latin word
    ("Ada", "name_taken", "registered"),  # a registered player's exact name
    ("ADA", "name_taken", "registered"),  # up to case
    ("Ａｄａ", "name_taken", "registered"),  # full width: NFKC makes it "Ada"
    ("Paypa1", "name_confusable", "Paypal"),  # digit 1 for l
    ("ŁUKASZ", "name_taken", "registered"),
    ("Раураl", "name_confusable", "Paypal"),  # all Cyrillic lookalikes
    ("Bоb", "name_mixed_script", "Cyrillic"),  # Latin with a Cyrillic о, no registered lookalike
    ("Αlice", "name_mixed_script", "Greek"),  # Greek Alpha
]

INTERNATIONAL = [
    "Żaneta Wójcik",  # Polish
    "Grzegorz Brzęczyszczykiewicz",
    "François-Noël",  # French
    "Chloé d'Aubigné",
    "İsmail Çağlar",  # Turkish
    "Gülşen Ünal",
    "山田太郎",  # Japanese, Han
    "やまだ たろう",  # Hiragana
    "ヤマダ・タロウ",  # Katakana
    "山田はなこ",  # Han and Hiragana together
    "محمد الفارسي",  # Arabic
    "عبد الله",
    "דוד כהן",  # Hebrew
    "प्रिया शर्मा",  # Hindi
    "สมชาย ใจดี",  # Thai
    "김민준",  # Korean
    "王小明",  # Chinese
    "Ελένη",  # Greek alone
    "Иван Петров",  # Cyrillic alone
    "Nguyễn Văn An",  # Vietnamese
    "Søren Ødegård",
    "O'Brien",
    "P",  # a one-letter seat name, as ever
]


@pytest.fixture
def names_api(fake_api: Api) -> Api:
    for name in REGISTERED:
        response = fake_api.client.post("/accounts", json={"name": name})
        assert response.status_code == 201, response.text
    return fake_api


def seat(api: Api, name: str | None, headers: dict[str, str] | None = None) -> Any:
    game_id = api.create("six-nimmt", 10)
    body = {} if name is None else {"name": name}
    return api.client.post(f"/games/{game_id}/players", json=body, headers=headers or {})


@pytest.mark.parametrize(("name", "code", "word"), HOSTILE, ids=[repr(h[0]) for h in HOSTILE])
def test_a_hostile_seat_name_is_refused_with_its_code_and_a_sentence_naming_the_problem(
    names_api: Api, name: str, code: str, word: str
) -> None:
    response = seat(names_api, name)
    assert response.status_code == (409 if code == "name_taken" else 422), response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert word in error["message"] and error["message"].endswith(".")


@pytest.mark.parametrize(("name", "code", "word"), HOSTILE[:22], ids=[repr(h[0]) for h in HOSTILE[:22]])
def test_the_same_characters_are_refused_in_an_account_name(
    names_api: Api, name: str, code: str, word: str
) -> None:
    response = names_api.client.post("/accounts", json={"name": name})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == code


@pytest.mark.parametrize("word", ["me", "login", "logout", "LOGOUT"])
def test_the_path_words_of_accounts_are_no_account_names(fake_api: Api, word: str) -> None:
    response = fake_api.client.post("/accounts", json={"name": word})
    assert response.status_code == 422 and response.json()["error"]["code"] == "invalid_name"
    assert "reserved" in response.json()["error"]["message"]


def test_a_registered_name_plus_an_invisible_character_is_no_new_account(names_api: Api) -> None:
    for invisible in ("\u034f", "\ufe0f", "\U000e0100", "\u200b", "\u2064"):
        response = names_api.client.post("/accounts", json={"name": "Ada" + invisible})
        assert response.status_code == 422, response.text
        assert f"U+{ord(invisible):04X}" in response.json()["error"]["message"]


@pytest.mark.parametrize("name", INTERNATIONAL)
def test_an_international_name_takes_a_seat_as_written(names_api: Api, name: str) -> None:
    response = seat(names_api, name)
    assert response.status_code == 201, response.text


@pytest.mark.parametrize("name", [n for n in INTERNATIONAL if 2 <= len(n) <= 24])
def test_an_international_name_registers_an_account(fake_api: Api, name: str) -> None:
    response = fake_api.client.post("/accounts", json={"name": name})
    assert response.status_code == 201, response.text
    assert response.json()["name"] == name


def test_an_account_sits_under_its_own_name_and_only_it_may_use_it(names_api: Api) -> None:
    login = names_api.client.post("/accounts", json={"name": "Zofia"}).json()
    headers = {"Authorization": f"Bearer {login['token']}"}
    assert seat(names_api, None, headers).status_code == 201
    assert seat(names_api, "zofia", headers).status_code == 201  # its own name, up to case
    other = seat(names_api, "Ada", headers)
    assert other.status_code == 422 and other.json()["error"]["code"] == "name_not_yours"
    anonymous = seat(names_api, "Zofia")
    assert anonymous.status_code == 409 and anonymous.json()["error"]["code"] == "name_taken"
    game_id = names_api.create("six-nimmt", 3)
    names_api.client.post(f"/games/{game_id}/players", json={}, headers=headers)
    assert [p["name"] for p in names_api.view(game_id)["players"]] == ["Zofia"]


def test_a_seat_name_is_stored_in_nfkc(names_api: Api) -> None:
    game_id = names_api.create("six-nimmt", 3)
    names_api.join(game_id, "Ｚｏｅ ①")  # full-width letters, a circled digit
    assert [p["name"] for p in names_api.view(game_id)["players"]] == ["Zoe 1"]
