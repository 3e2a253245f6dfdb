"""``/openapi.json``: OpenAPI 3.1, with request bodies and every game's commands as msgspec schemas."""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from domain.games import game_names, table_for
from services.api.bodies import CreateGame, JoinGame, Login, Register, SendCommand, SetPassword

REF = "#/components/schemas/{name}"


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": REF.format(name="Error")}}},
    }


def _ok(description: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    content = {"application/json": {"schema": schema or {"type": "object"}}}
    return {"description": description, "content": content}


def _body(name: str) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": {"$ref": REF.format(name=name)}}}}


GAME_ID = {"name": "game_id", "in": "path", "required": True, "schema": {"type": "string"}}
BEARER: list[dict[str, list[str]]] = [{"bearer": []}, {}]


def _query(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "schema": {"type": "integer", "minimum": 0},
        "description": description,
    }


ACCOUNT: dict[str, Any] = {"security": [{"bearer": []}]}
PAGE = [_query("offset", "Skip this many"), _query("limit", "At most this many (1-100, default 20)")]
ACCOUNT_PATHS: dict[str, Any] = {
    "/accounts": {
        "post": {
            "summary": "Register a display name (unique up to case, width and lookalike characters)",
            "requestBody": _body("Register"),
            "responses": {
                "201": _ok("account_id, name and the account token"),
                "409": _error("name_taken"),
                "422": _error("invalid_name, name_confusable, name_mixed_script, invalid_password"),
            },
        }
    },
    "/accounts/login": {
        "post": {
            "summary": "A fresh account token for a name and its password",
            "requestBody": _body("Login"),
            "responses": {
                "200": _ok("account_id, name and a new token"),
                "401": _error("invalid_credentials"),
            },
        }
    },
    "/accounts/me": {
        "get": {
            **ACCOUNT,
            "summary": "The token's account: public profile, ratings, has_password",
            "responses": {"200": _ok("The account"), "401": _error("Bad or missing account token")},
        }
    },
    "/accounts/me/password": {
        "post": {
            **ACCOUNT,
            "summary": "Set or change the password (Argon2id-hashed; enables /accounts/login)",
            "requestBody": _body("SetPassword"),
            "responses": {
                "200": _ok("Done"),
                "401": _error("Bad account token"),
                "422": _error("Bad password"),
            },
        }
    },
    "/accounts/{name_or_id}": {
        "parameters": [{"name": "name_or_id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {
            "summary": "A public profile: account id, display name, rating per game",
            "responses": {"200": _ok("The profile"), "404": _error("account_not_found")},
        },
    },
    "/accounts/{account_id}/history": {
        "parameters": [{"name": "account_id", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {
            "summary": "Finished games of an account, newest first: seats, result, rating change, links",
            "parameters": PAGE,
            "responses": {"200": _ok("total, offset, limit, games"), "404": _error("account_not_found")},
        },
    },
    "/leaderboards/{game}": {
        "parameters": [{"name": "game", "in": "path", "required": True, "schema": {"type": "string"}}],
        "get": {
            "summary": "Rated accounts of a game, best first (rating = mu - 3 sigma, Plackett-Luce)",
            "parameters": PAGE,
            "responses": {"200": _ok("total, offset, limit, entries"), "404": _error("unknown_game")},
        },
    },
}


@cache
def openapi_document() -> dict[str, Any]:
    command_unions = {table_for(name).command_type for name in game_names()}
    (create, join, send, *commands), components = msgspec.json.schema_components(
        [CreateGame, JoinGame, SendCommand, Register, Login, SetPassword, *command_unions], ref_template=REF
    )
    commands = commands[3:]  # the account bodies are components, referenced by name
    components["Error"] = {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message"],
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            }
        },
    }
    components["Command"] = {"anyOf": commands}
    send_schema = components["SendCommand"]
    send_schema["properties"]["command"] = {"$ref": REF.format(name="Command")}
    bad = {"400": _error("Malformed JSON"), "422": _error("Invalid input or a rule violation")}
    game = {"parameters": [GAME_ID]}
    paths: dict[str, Any] = {
        "/games": {
            "post": {
                "summary": "Create a table",
                "requestBody": _body("CreateGame"),
                "responses": {"201": _ok("The table id and the host token"), **bad},
            },
            "get": {"summary": "The lobby: open and running tables", "responses": {"200": _ok("Tables")}},
        },
        "/games/{game_id}/players": {
            **game,
            "post": {
                "summary": "Take the next seat; the last seat starts the game",
                "description": "With 'Authorization: Bearer <account token>' the seat is the account's "
                "(name optional, defaults to the display name); without it the seat is anonymous.",
                "security": [{"bearer": []}, {}],
                "requestBody": _body("JoinGame"),
                "responses": {
                    "201": _ok("The seat and its token"),
                    "401": _error("Bad account token"),
                    "409": _error("Full, started, or the account already sits here"),
                    **bad,
                },
            },
        },
        "/games/{game_id}/commands": {
            **game,
            "post": {
                "summary": "Send a command as the token's seat",
                "security": [{"bearer": []}],
                "requestBody": _body("SendCommand"),
                "responses": {
                    "200": _ok("Version, the events as this seat sees them, and a receipt"),
                    "401": _error("Bad or missing token"),
                    "409": _error("Conflict, reuse or game over"),
                    **bad,
                },
            },
        },
        "/games/{game_id}/view": {
            **game,
            "get": {
                "summary": "The caller's view (a spectator's without a token)",
                "security": BEARER,
                "parameters": [_query("at", "Time travel: the view as it was at this version")],
                "responses": {"200": _ok("The view"), "404": _error("No such game")},
            },
        },
        "/games/{game_id}/events": {
            **game,
            "get": {
                "summary": "Events as the caller may see them",
                "security": BEARER,
                "parameters": [
                    _query("after", "Only versions after this"),
                    _query("limit", "At most this many"),
                ],
                "responses": {"200": _ok("Events and the head version")},
            },
        },
        "/games/{game_id}/scores": {
            **game,
            "get": {"summary": "The scoreboard", "responses": {"200": _ok("Per round and totals")}},
        },
        "/games/{game_id}/live": {
            **game,
            "get": {
                "summary": "Server-sent events: one message per version with the caller's view",
                "security": BEARER,
                "responses": {"200": {"description": "text/event-stream; resumes from Last-Event-ID"}},
            },
        },
        "/games/{game_id}/audit": {
            **game,
            "get": {
                "summary": "Per finished round: seed, chain check, chance outcomes, events",
                "security": BEARER,
                "responses": {"200": _ok("The audit")},
            },
        },
        "/games/{game_id}/export": {
            **game,
            "get": {
                "summary": "A finished game as one self-contained document for the offline verifier",
                "responses": {"200": _ok("The export"), "409": _error("Game not finished")},
            },
        },
        **ACCOUNT_PATHS,
        "/healthz": {"get": {"summary": "Liveness and Redis reachability", "responses": {"200": _ok("ok")}}},
    }
    del create, join, send
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Tablestream",
            "version": "1",
            "description": "Skull, 6 nimmt! and Skull King: event-sourced, provably fair, auditable.",
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
