"""``/openapi.json``: OpenAPI 3.1, with request bodies and every game's commands as msgspec schemas."""

from __future__ import annotations

from functools import cache
from typing import Any

import msgspec

from domain.games import game_names, table_for
from services.api.bodies import CreateGame, JoinGame, SendCommand

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


RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}
}
RATE_LIMITED = {
    ("/games", "post"),
    ("/games/{game_id}/players", "post"),
    ("/games/{game_id}/commands", "post"),
}
CAPPED = {("/games/{game_id}/live", "get")}


def _retry_later(description: str) -> dict[str, Any]:
    return {**_error(description), "headers": RETRY_AFTER}


def _add_refusals(paths: dict[str, Any]) -> None:
    """The answers of hardening (README's Settings) every operation may give: 503 when Redis is
    unreachable, 429 past a client's rate or stream cap, 408 when a body arrives too slowly."""
    for path, item in paths.items():
        for method, operation in item.items():
            if method not in {"get", "post"} or path in {"/healthz", "/livez", "/openapi.json"}:
                continue
            responses = operation["responses"]
            responses.setdefault("503", _retry_later("Redis unreachable, or a server-wide cap reached"))
            if (path, method) in RATE_LIMITED:
                responses.setdefault("429", _retry_later("Rate limited: too many from this client"))
                responses.setdefault("408", _error("The request body did not arrive in time"))
            if (path, method) in CAPPED:
                responses.setdefault("429", _retry_later("Too many live streams from this client"))


@cache
def openapi_document() -> dict[str, Any]:
    command_unions = {table_for(name).command_type for name in game_names()}
    (create, join, send, *commands), components = msgspec.json.schema_components(
        [CreateGame, JoinGame, SendCommand, *command_unions], ref_template=REF
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
        "/healthz": {
            "get": {
                "summary": "Readiness: Redis answers and no projection lags past the threshold",
                "responses": {"200": _ok("ok"), "503": _retry_later("Not ready: the reason is in the body")},
            }
        },
        "/livez": {"get": {"summary": "Liveness: the process answers", "responses": {"200": _ok("alive")}}},
    }
    _add_refusals(paths)
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
