"""The OpenAPI of private tables' invite links and of rematch (``services.table.invitations``,
``services.people.rematch``), added to ``services.api.openapi``'s document."""

from __future__ import annotations

from typing import Any

INVITE = {
    "name": "invite",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "maxLength": 64},
    "description": "A private table's invite code (from its link): without it, or a token of the table, "
    "or the 'ts_invite_<game_id>' cookie its page sets, a private table answers as an unknown game",
}
GAME_ID = {
    "name": "game_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
}
_ID = {"type": ["string", "null"]}
_SEATS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["seat", "name", "bot", "answer"],
        "properties": {
            "seat": {"type": "integer", "minimum": 0},
            "name": {"type": "string"},
            "bot": {"type": "boolean"},
            "answer": {"enum": ["accepted", "declined", "pending", None]},
        },
    },
}
REMATCH = {
    "type": "object",
    "required": ["game_id", "status", "finished", "seats", "declined_by", "new_game_id", "your_seat"],
    "properties": {
        "game_id": {"type": "string"},
        "status": {"enum": ["open", "pending", "creating", "made", "declined"]},
        "finished": {"type": "boolean"},
        "seats": _SEATS,
        "declined_by": {"type": ["integer", "null"]},
        "new_game_id": _ID,
        "your_seat": {"type": ["integer", "null"]},
        "token": {
            "type": "string",
            "description": "The caller's seat token at the new table (its seat only)",
        },
    },
}
INVITE_ANSWER = {
    "type": "object",
    "required": ["game_id", "private", "invite", "link"],
    "properties": {
        "game_id": {"type": "string"},
        "private": {"type": "boolean"},
        "invite": _ID,
        "link": {"type": "string"},
    },
}


def _json(description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def invite_paths(error: Any, body: Any, body_errors: tuple[int, ...], retry_later: Any) -> dict[str, Any]:
    """The paths; ``error``, ``body`` and ``retry_later`` are ``services.api.openapi``'s builders."""
    rematch_errors = {
        "401": error("Not a seat's token (the game's seat token or 'ts_seat_<game_id>' cookie)"),
        "403": error("not_a_player: the seat was a bot's, or its player left during the game"),
        "404": error("No such game"),
        "409": error(
            "game_not_finished; rematch_declined (accepting after a decline); rematch_made (declining "
            "once every player accepted)"
        ),
    }
    return {
        "/games/{game_id}/invite": {
            "parameters": [GAME_ID],
            "get": {
                "summary": "The link that seats a friend (a private table's carries its invite code)",
                "description": "A private table's only for its code's holders and its own tokens' (a "
                "seat's or the host's, as the bearer or the browser's cookie); for anyone else it is an "
                "unknown game.",
                "parameters": [INVITE],
                "responses": {
                    "200": _json("private, invite, link", INVITE_ANSWER),
                    "404": error("No such game"),
                },
            },
        },
        "/games/{game_id}/rematch": {
            "parameters": [GAME_ID],
            "get": {
                "summary": "The rematch of a finished game: each human seat's answer, who declined, the "
                "new table once made (and to a seat's own caller its new seat and token, also set as "
                "the 'ts_seat_<new id>' cookie)",
                "parameters": [INVITE],
                "security": [{"bearer": []}, {}],
                "responses": {
                    "200": _json("The rematch", REMATCH),
                    "401": error("A bad token"),
                    "404": error("No such game"),
                },
            },
            "post": {
                "summary": "Play again (a seated player of the finished game): the last human seat to "
                "accept makes exactly one new table with the same game, options and seats",
                "parameters": [INVITE],
                "security": [{"bearer": []}, {}],
                "requestBody": body("Empty"),
                "responses": {
                    "200": _json("The rematch (with the caller's new token once the table exists)", REMATCH),
                    **{str(s): error("Bad request body") for s in body_errors},
                    **rematch_errors,
                    "429": retry_later("Rate limited: too many tables made from this client"),
                    "408": error("The request body did not arrive in time"),
                },
            },
        },
        "/games/{game_id}/rematch/decline": {
            "parameters": [GAME_ID],
            "post": {
                "summary": "Decline the rematch: no new table is made, and everyone sees who declined",
                "parameters": [INVITE],
                "security": [{"bearer": []}, {}],
                "requestBody": body("Empty"),
                "responses": {
                    "200": _json("The rematch", REMATCH),
                    **{str(s): error("Bad request body") for s in body_errors},
                    **rematch_errors,
                },
            },
        },
    }


def add_invite_parameter(paths: dict[str, Any]) -> None:
    """The optional ``invite`` query parameter on every route of one game."""
    for path, item in paths.items():
        if not path.startswith("/games/{game_id}"):
            continue
        for method, operation in item.items():
            if method in {"get", "post"}:
                parameters = operation.setdefault("parameters", [])
                if INVITE not in parameters:
                    parameters.append(INVITE)
