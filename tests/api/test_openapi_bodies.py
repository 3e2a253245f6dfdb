"""The bodies of ``/openapi.json`` refuse what the server refuses: the schema-valid refusals
schemathesis found (ST202) are schema-invalid now, and what the schema allows the server takes."""

from __future__ import annotations

from typing import Any

import jsonschema_rs
import msgspec
import pytest

from services.api import bodies
from services.api.openapi import openapi_document
from tests.api.conftest import Api


def body_schema(name: str) -> dict[str, Any]:
    document = openapi_document()
    return {"$ref": f"#/components/schemas/{name}", "components": document["components"]}


def valid(name: str, body: Any) -> bool:
    validator = jsonschema_rs.Draft202012Validator(body_schema(name))
    return validator.is_valid(body)


REFUSED: list[tuple[str, Any]] = [
    ("Register", {"name": ""}),
    ("Register", {"name": "a"}),
    ("Register", {"name": "me"}),
    ("Register", {"name": "LogOut"}),
    ("Register", {"name": "0123456789abcdef"}),
    ("Register", {"name": "Ada\u034f"}),
    ("Register", {"name": "Ad  a"}),
    ("Register", {"name": "Ada", "password": "short"}),
    ("SetPassword", {"password": "x" * 257}),
    ("CreateGame", {"game": "skull", "players": 0}),
    ("CreateGame", {"game": "skull", "players": 7}),
    ("CreateGame", {"game": "skull", "players": 3, "options": {"first_player": 3}}),
    ("CreateGame", {"game": "six-nimmt", "players": 11}),
    ("CreateGame", {"game": "six-nimmt", "players": 4, "options": {"end_score": 0}}),
    ("CreateGame", {"game": "skull-king", "players": 4, "options": {"expire_minutes": 61}}),
    ("CreateGame", {"game": "skull-king", "players": 4, "options": {"seed": "zz"}}),
    ("CreateGame", {"game": "skull-king", "players": 4, "options": {"turn_seconds": None}}),
    ("JoinGame", {"name": None}),
    ("SendCommand", {"command_id": "c", "command": {"type": "pass"}, "expected_version": 2**64}),
    ("JoinGame", {}),
    ("JoinGame", {"name": "Ad\na"}),
    ("JoinGame", {"name": "B\u043eb"}),  # Latin with a Cyrillic o
]

ACCEPTED: list[tuple[str, Any]] = [
    ("CreateGame", {"game": "skull", "players": 12, "options": {"two_sets": True, "first_player": 11}}),
    ("CreateGame", {"game": "six-nimmt", "players": 2, "options": {"rounds": 3, "expire_minutes": 60}}),
    ("CreateGame", {"game": "skull-king", "players": 6, "options": {"seed": "ab" * 32, "turn_seconds": 0}}),
    ("JoinGame", {"name": "Żaneta Wójcik"}),
    ("JoinGame", {"name": "山田はなこ"}),
    ("JoinGame", {"name": "محمد الفارسي"}),
    ("JoinGame", {"name": "İsmail Çağlar"}),
    ("JoinGame", {"name": "O'Brien", "client_seed": "x"}),
]


@pytest.mark.parametrize(("schema", "body"), REFUSED)
def test_a_body_the_server_refuses_is_not_valid_by_the_schema(schema: str, body: Any) -> None:
    assert not valid(schema, body)


@pytest.mark.parametrize(("schema", "body"), ACCEPTED)
def test_a_body_valid_by_the_schema_is_taken_by_the_server(fake_api: Api, schema: str, body: Any) -> None:
    assert valid(schema, body)
    if schema == "CreateGame":
        response = fake_api.client.post("/games", json=body)
    else:
        game_id = fake_api.create("six-nimmt", 10)
        response = fake_api.client.post(f"/games/{game_id}/players", json=body)
    assert response.status_code == 201, response.text


def test_the_server_takes_integral_numbers_written_with_a_fraction(fake_api: Api) -> None:
    """JSON Schema calls 3.0 an integer, so the server does too."""
    response = fake_api.client.post("/games", json={"game": "skull", "players": 3.0})
    assert response.status_code == 201, response.text
    half = fake_api.client.post("/games", json={"game": "skull", "players": 3.5})
    assert half.status_code == 422


BLANK = ["\x1c", "\x1f", "\x85", "\ufeff", "\u00a0", "\u3000", " \t\n", "\x1e\ufeff\x85"]
WORDS = {"OpenDispute": "text", "ResolveDispute": "reason", "OperatorReason": "reason"}


@pytest.mark.parametrize("schema", sorted(WORDS))
@pytest.mark.parametrize("blank", BLANK)
def test_words_blank_to_python_or_to_a_json_schema_regex_are_refused_by_both(schema: str, blank: str) -> None:
    """U+001C-U+001F and U+0085 are white space to Python's regex only, U+FEFF to ECMAScript's only:
    schemathesis sent '\\x1c' as a dispute's text, valid by the schema, and the server refused it."""
    body_type = getattr(bodies, schema)

    def body(words: str) -> dict[str, str]:
        return {WORDS[schema]: words} | ({"verdict": "upheld"} if schema == "ResolveDispute" else {})

    with pytest.raises(msgspec.ValidationError, match="matching regex"):
        msgspec.convert(body(blank), body_type)
    assert not valid(schema, body(blank))
    assert msgspec.convert(body(f"{blank}x{blank}"), body_type)
    assert valid(schema, body(f"{blank}x{blank}"))
