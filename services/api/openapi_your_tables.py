"""``/openapi.json``'s part for "Your tables" (``services.api.your_tables_routes``)."""

from __future__ import annotations

from typing import Any

from services.api.openapi_live import event, stream

TABLE_ENTRY: dict[str, Any] = {
    "type": "object",
    "required": [
        "game_id",
        "game",
        "status",
        "version",
        "seat",
        "name",
        "opponents",
        "seats",
        "seats_taken",
        "awaiting",
        "taken_over",
        "turn_based",
        "practice",
        "turn_seconds",
        "deadline_ms",
        "account",
        "here",
    ],
    "properties": {
        "game_id": {"type": "string"},
        "game": {"type": "string"},
        "status": {"enum": ["waiting", "playing"]},
        "version": {"type": "integer"},
        "seat": {"type": "integer", "minimum": 0},
        "name": {"type": "string"},
        "opponents": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["seat", "name", "bot"],
                "properties": {
                    "seat": {"type": "integer"},
                    "name": {"type": "string"},
                    "bot": {"type": "boolean"},
                },
            },
        },
        "seats": {"type": "integer"},
        "seats_taken": {"type": "integer"},
        "awaiting": {"type": "boolean", "description": "The game waits for your move"},
        "taken_over": {"anyOf": [{"enum": ["left", "timeouts", "host"]}, {"type": "null"}]},
        "turn_based": {"type": "boolean"},
        "practice": {"type": "boolean"},
        "turn_seconds": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "deadline_ms": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "account": {"type": "boolean", "description": "The account's seat (playable from any device)"},
        "here": {"type": "boolean", "description": "This browser holds the seat's token (its cookie)"},
    },
}
LISTING: dict[str, Any] = {
    "type": "object",
    "required": ["tables", "awaiting", "now_ms", "account"],
    "properties": {
        "tables": {"type": "array", "items": TABLE_ENTRY},
        "awaiting": {"type": "integer", "minimum": 0},
        "now_ms": {"type": "integer"},
        "account": {"type": "boolean"},
    },
}
WHO = (
    "The caller is the account of the Authorization header or the browser's 'ts_account' cookie (a "
    "cookie that no longer works counts as none) plus the seats of the browser's 'ts_seat_<id>' "
    "cookies. Tables awaiting your move first (the nearest deadline first), then running, then waiting "
    "ones; tables that ended are left out."
)


def your_tables_paths(
    game: dict[str, Any], body_errors: tuple[int, ...], error: Any, ok: Any
) -> dict[str, Any]:
    """The paths, with openapi.py's helpers (``error(description)``, ``ok(description, schema)``)."""
    security = [{"bearer": []}, {"account_cookie": []}, {}]
    return {
        "/me/tables": {
            "get": {
                "summary": "Your tables: every table where you hold a seat, those awaiting you first",
                "description": WHO,
                "security": security,
                "responses": {
                    "200": ok("The tables", LISTING),
                    "401": error("invalid_account_token: a bad account token in the header"),
                },
            },
        },
        "/me/live": {
            "get": {
                "summary": "Server-sent events: 'tables' (the body of GET /me/tables) at once and on change",
                "description": WHO + " Woken by the tables' own live channels; the list is read again every "
                "10 s besides (a seat taken on another device). Counted in the live-stream caps.",
                "security": security,
                "responses": {
                    "200": stream(
                        "retry: 1000, then an event 'tables' (the body of GET /me/tables) at once and "
                        "per change",
                        event("tables", LISTING),
                    ),
                    "401": error("invalid_account_token: a bad account token in the header"),
                },
            },
        },
        "/me/tables/{game_id}/seat": {
            **game,
            "post": {
                "summary": "Open your account's seat at this table on this device",
                "description": "A new token for the seat the account holds (also set as the browser's "
                "'ts_seat_<game_id>' cookie), while the game runs: a game begun on one device goes on "
                "from another where the account is logged in.",
                "security": [{"bearer": []}, {"account_cookie": []}],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Empty"}}},
                },
                "responses": {
                    "200": ok("{'seat': i, 'token': '...'}"),
                    **{str(s): error("A malformed body") for s in body_errors},
                    "401": error("unauthorized (no account token), invalid_account_token"),
                    "403": error("no_seat_here: the account holds no seat at this table"),
                    "404": error("game_not_found"),
                    "409": error("not_started (the table still waits for players), game_over"),
                },
            },
        },
    }
