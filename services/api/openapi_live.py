"""The live streams' part of ``/openapi.json``: every server-sent event of ``/games/{game_id}/live``
and ``/lobby/live`` (``/me/live``'s in ``services.api.openapi_your_tables``).

The schema of a ``text/event-stream`` answer describes one event, as tools read such a schema in an
OpenAPI 3.1 document (3.2 calls it ``itemSchema``; the document stays 3.1, which Swagger UI renders
at ``/docs``): the event's ``event`` name, its ``id`` and ``retry`` where the stream sends them, and
its ``data``, a JSON document whose shape is the ``contentSchema``. A comment line (``: keep-alive``)
and a block without data (``/me/live``'s opening ``retry``) are no events. A client or a conformance
tool reads each event against the schema of its name (``tests/api/test_live_schema.py`` checks every
event of played games against it, with schemathesis's own response validation).
"""

from __future__ import annotations

from typing import Any

from services.people.chat import REACTIONS

REF = "#/components/schemas/{name}"
GAME_EVENT_ID = r"^[0-9]+(\.[0-9]+)?$"
"""A game stream's event id: the version, and on a chat stream ``<version>.<chat n>``."""


def event(
    name: str, data: dict[str, Any], *, id_pattern: str | None = None, retry: bool = False
) -> dict[str, Any]:
    """One kind of event: ``name`` in its ``event`` field, ``data`` the schema of its JSON."""
    properties: dict[str, Any] = {
        "event": {"const": name},
        "data": {"type": "string", "contentMediaType": "application/json", "contentSchema": data},
    }
    required = ["event", "data"]
    if id_pattern is not None:
        properties["id"] = {"type": "string", "pattern": id_pattern}
        required.append("id")
    if retry:
        properties["retry"] = {"type": "integer", "minimum": 0}
    return {
        "title": f"event: {name}",
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": False,
    }


def stream(description: str, *events: dict[str, Any]) -> dict[str, Any]:
    """A 200 answer that is an event stream of these kinds of events (its schema: one event)."""
    item = events[0] if len(events) == 1 else {"oneOf": list(events)}
    return {"description": description, "content": {"text/event-stream": {"schema": item}}}


def live_schemas(games: list[str]) -> dict[str, Any]:
    """The components the streams' events (and the answers that send the same documents) refer to."""
    nullable_int = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    return {
        "View": {
            "title": "View",
            "description": "What the caller may see of a table at one version: the public part every "
            "viewer sees alike and the caller's own (a seat's hand, its choices); the fields of each "
            "game's state are the game's (docs/api.md)",
            "type": "object",
            "required": ["game", "game_id", "version", "status", "phase", "seats", "players", "to_act"],
            "properties": {
                "game": {"enum": games},
                "game_id": {"type": "string"},
                "version": {"type": "integer", "minimum": 0},
                "status": {"enum": ["waiting", "playing", "finished", "expired", "closed"]},
                "phase": {"type": "string"},
                "seats": {"type": "integer", "minimum": 1},
                "players": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["seat", "name", "bot", "left"],
                        "properties": {
                            "seat": {"type": "integer", "minimum": 0},
                            "name": {"type": "string"},
                            "bot": {"type": "boolean"},
                            "left": {"type": "boolean"},
                        },
                    },
                },
                "to_act": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                "clock": {"anyOf": [{"type": "object"}, {"type": "null"}]},
            },
        },
        "ChatRecord": {
            "title": "ChatRecord",
            "description": "A record of the table's chat: a message or reaction ('message'), or the "
            "host turning chat off or on ('settings'). 'n' numbers it in the table's chat, or, with "
            "'numbering': 'table', among the messages a person at the table sees while the game runs",
            "type": "object",
            "required": ["n", "kind", "at", "version"],
            "properties": {
                "n": {"type": "integer", "minimum": 1},
                "kind": {"enum": ["message", "settings"]},
                "channel": {"enum": ["table", "rail"]},
                "name": {"type": "string"},
                "seat": nullable_int,
                "text": {"type": "string"},
                "reaction": {"enum": list(REACTIONS)},
                "enabled": {"type": "boolean"},
                "at": {"type": "integer", "description": "The server's time, ms since the epoch"},
                "version": {"type": "integer", "minimum": 0, "description": "The game's head then"},
                "numbering": {"const": "table"},
            },
        },
        "LobbyTable": {
            "title": "LobbyTable",
            "description": "A table as the lobby lists it ('first': an established player's, listed "
            "first; 'turn_based' only when it is)",
            "type": "object",
            "required": ["game_id", "game", "seats", "seats_taken", "status", "practice", "version"],
            "properties": {
                "game_id": {"type": "string"},
                "game": {"enum": games},
                "seats": {"type": "integer", "minimum": 1},
                "seats_taken": {"type": "integer", "minimum": 0},
                "status": {"enum": ["waiting", "playing", "finished", "expired", "closed"]},
                "practice": {"type": "boolean"},
                "turn_based": {"const": True},
                "first": {"const": True},
                "version": {"type": "integer", "minimum": 0},
            },
        },
    }


def game_stream() -> dict[str, Any]:
    return stream(
        "One event 'view' per version with the caller's view (its id the version). With the query "
        "'chat=1' the table's chat comes too, one event 'chat' per record (a person at the table "
        "(seat, host or seated account) gets no 'rail' record until the game ended), every id is "
        "'<version>.<chat n>', and 'chat_after=<n>' resumes the chat of a new stream. Resumes from "
        "Last-Event-ID; ends when the game is over (a chat stream a little later), or the seat's "
        "player left",
        event("view", {"$ref": REF.format(name="View")}, id_pattern=GAME_EVENT_ID),
        event("chat", {"$ref": REF.format(name="ChatRecord")}, id_pattern=GAME_EVENT_ID),
    )


def lobby_stream() -> dict[str, Any]:
    lobby = {
        "type": "object",
        "required": ["games"],
        "properties": {"games": {"type": "array", "items": {"$ref": REF.format(name="LobbyTable")}}},
    }
    return stream(
        "Every (re)connection starts with the whole lobby (event 'lobby', the first with 'retry'), "
        "then one event 'table' per table whose summary changed; the whole lobby again after the "
        "server lost its feed",
        event("lobby", lobby, retry=True),
        event("table", {"$ref": REF.format(name="LobbyTable")}),
    )
