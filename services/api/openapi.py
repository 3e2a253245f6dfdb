"""``/openapi.json``: OpenAPI 3.1, with request bodies and every game's commands as msgspec schemas."""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from domain.games import game_names, table_for
from projections.narration import LANGUAGES
from services.api.bodies import CreateGame, Empty, JoinGame, SendCommand

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


@cache
def openapi_document() -> dict[str, Any]:
    command_unions = {table_for(name).command_type for name in game_names()}
    (create, join, send, empty, *commands), components = msgspec.json.schema_components(
        [CreateGame, JoinGame, SendCommand, Empty, *command_unions], ref_template=REF
    )
    components["CreateGame"]["properties"]["options"]["description"] = (
        "The game's options, plus the table's: 'seed' (a practice table), 'turn_seconds' (0 = no "
        "turn timer; default 0 for practice tables, 60 otherwise), 'expire_minutes' (a waiting "
        "table expires after this, default 30), 'takeover_after' (timeouts in a row before a bot "
        "takes the seat, default 3)"
    )
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
                "requestBody": _body("JoinGame"),
                "responses": {"201": _ok("The seat and its token"), "409": _error("Full or started"), **bad},
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
                    {
                        "name": "lang",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "string", "enum": list(LANGUAGES)},
                        "description": "Add a narrated 'text' to each event in this language",
                    },
                ],
                "responses": {
                    "200": _ok(
                        "Events and the head version; each event says 'by' whom its batch came: "
                        "'player', 'bot' or 'timeout'"
                    )
                },
            },
        },
        "/games/{game_id}/bots": {
            **game,
            "post": {
                "summary": "The host fills every empty seat with a bot (host token or ts_host_<id> cookie)",
                "security": [{"bearer": []}],
                "requestBody": _body("Empty"),
                "responses": {
                    "200": _ok("The seats the bots took: {'seats': [..]}"),
                    "401": _error("Missing token"),
                    "403": _error("Not the host"),
                    "409": _error("The table is not waiting"),
                    **bad,
                },
            },
        },
        "/games/{game_id}/leave": {
            **game,
            "post": {
                "summary": "Leave the table: while waiting the seat is freed; during play a bot takes it",
                "security": [{"bearer": []}],
                "requestBody": _body("Empty"),
                "responses": {
                    "200": _ok("The seat left: {'seat': i}"),
                    "401": _error("Bad or missing token"),
                    "409": _error("Already left, or the game is over"),
                    **bad,
                },
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
        "/healthz": {"get": {"summary": "Liveness and Redis reachability", "responses": {"200": _ok("ok")}}},
    }
    del create, join, send, empty
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
