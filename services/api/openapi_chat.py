"""The table chat's part of ``/openapi.json`` (``services.api.chat_routes``): its paths and bodies,
as tight as the server's checks (a text the schema calls valid is one the server stores)."""

from __future__ import annotations

from typing import Any

from services.api.http import MAX_VERSION
from services.people.chat import MAX_PAGE, MAX_REPORTED, MAX_TEXT, REACTIONS, REPORT_REASONS

REF = "#/components/schemas/{name}"
# A subset of what the server takes: letters, digits, spaces and common punctuation, not blank (the
# server also takes any other printable character, and refuses control characters: 422).
_TEXT = r"^[ ]*[\p{L}\p{N}.,!?'()\-:;][\p{L}\p{N} .,!?'()\-:;]*$"
CHAT_PATHS_RATE_LIMITED = {("/games/{game_id}/chat", "post"), ("/games/{game_id}/chat/report", "post")}


def chat_schemas() -> dict[str, Any]:
    text = {"type": "string", "minLength": 1, "maxLength": MAX_TEXT, "pattern": _TEXT}
    return {
        "ChatPost": {
            "title": "ChatPost",
            "description": f"A text (trimmed, 1-{MAX_TEXT} characters, no control characters) or a "
            "reaction key, exactly one",
            "oneOf": [
                {
                    "type": "object",
                    "required": ["text"],
                    "properties": {"text": text},
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "required": ["reaction"],
                    "properties": {"reaction": {"enum": list(REACTIONS)}},
                    "additionalProperties": False,
                },
            ],
        },
        "ChatReport": {
            "title": "ChatReport",
            "type": "object",
            "required": ["messages", "reason"],
            "properties": {
                "messages": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_REPORTED,
                    "items": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
                },
                "reason": {"enum": list(REPORT_REASONS)},
            },
            "additionalProperties": False,
        },
        "ChatSettings": {
            "title": "ChatSettings",
            "type": "object",
            "required": ["enabled"],
            "properties": {"enabled": {"type": "boolean"}},
            "additionalProperties": False,
        },
    }


def chat_paths(
    game: dict[str, Any],
    body: Any,
    ok: Any,
    errors: Any,
    body_errors: tuple[int, ...],
) -> dict[str, Any]:
    who = (
        "A seat (its token, or the browser's ts_seat_<id> cookie) speaks in channel 'table'; anyone "
        "else in channel 'rail': an account (its token as the bearer, or the ts_account cookie), else "
        "this browser (an HttpOnly ts_rail cookie, set by its first message)."
    )
    return {
        "/games/{game_id}/chat": {
            **game,
            "post": {
                "summary": "Send a chat message or a reaction to the table",
                "description": who,
                "security": [{"bearer": []}, {}],
                "requestBody": body("ChatPost"),
                "responses": {
                    "201": ok(
                        "The stored record: {'message': {n, kind, channel, from, name, seat, "
                        "text | reaction, at, version, numbering?}} (numbering 'table': n is the "
                        "speaker's table number, a person at the table while the game runs)"
                    ),
                    **errors(
                        *body_errors,
                        401,
                        403,
                        404,
                        409,
                        s413="chat_message_too_long (past the message limit) or body_too_large",
                        s422="chat_message_empty, chat_control_characters, invalid_request",
                        s403=(
                            "chat_off: the host turned chat off; rail_closed_at_table: a person at "
                            "the table may not speak on the rail while the game runs (or cross_origin)"
                        ),
                        s409="chat_full: the table's chat holds its cap of messages",
                    ),
                },
            },
            "get": {
                "summary": (
                    "The chat this caller may see: a person at the table sees no 'rail' message "
                    "until the game ended"
                ),
                "security": [{"bearer": []}, {}],
                "parameters": [
                    {
                        "name": "after",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 0, "maximum": MAX_VERSION},
                        "description": "Records after this number (0: from the first)",
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
                        "description": "Read at most this many records",
                    },
                ],
                "responses": {
                    "200": ok("{messages, next, more, merged, enabled}"),
                    **errors(401, 404, 422),
                },
            },
        },
        "/games/{game_id}/chat/report": {
            **game,
            "post": {
                "summary": "Report chat messages (by number) to the operators",
                "security": [{"bearer": []}, {}],
                "requestBody": body("ChatReport"),
                "responses": {
                    "201": ok("{'report': <id of the record in the operators' stream>}"),
                    **errors(
                        *body_errors,
                        401,
                        404,
                        409,
                        s404="game_not_found, chat_message_not_found (not one you can see)",
                        s409="chat_reports_full: the table's chat was reported chat_max_reports times",
                    ),
                },
            },
        },
        "/games/{game_id}/chat/settings": {
            **game,
            "post": {
                "summary": "The host turns the table's chat off or on (host token or ts_host_<id> cookie)",
                "security": [{"bearer": []}],
                "requestBody": body("ChatSettings"),
                "responses": {
                    "200": ok("{enabled, n}"),
                    **errors(*body_errors, 401, 403, 404, s401="Missing token", s403="Not the host"),
                },
            },
        },
    }
