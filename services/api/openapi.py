"""``/openapi.json``: OpenAPI 3.1 generated from the operations' declarations (``services.api.contract``,
one per route, next to its handler): every body, query, header and answer type is a msgspec type whose
schema is ``msgspec.json.schema_components``'s, under ``#/components/schemas``; the bodies then as
tight as the server's own checks (``services.api.body_schemas``) and every game's commands from the
games' types. The document is the one the routes are served from: ``services.api.app`` builds its
routes from the same declarations (``services.api.operations``)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec

from domain.games import game_names, table_for
from services.api.answers import Error
from services.api.body_schemas import refine
from services.api.contract import BODY_ERRORS, ERRORS, PATH_PARAMETERS, Answer, Operation, Stream
from services.api.operations import OPERATIONS

REF = "#/components/schemas/{name}"
RETRY_AFTER = {
    "Retry-After": {"description": "Seconds to wait before retrying", "schema": {"type": "integer"}}
}
INVITE = {
    "name": "invite",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "maxLength": 64},
    "description": "A private table's invite code (from its link): without it, or a token of the table, "
    "or the 'ts_invite_<game_id>' cookie its page sets, a private table answers as an unknown game",
}
"""On every operation of one game (``services.api.invite_gate`` answers before the route)."""
UNGUARDED = {"/healthz", "/livez", "/openapi.json"}
"""Answered whatever Redis and the drain do: no 503."""


def _types(operations: Iterable[Operation]) -> list[Any]:
    """Every body, answer and event type, once, in the order declared."""
    found: dict[Any, None] = {Error: None}
    for operation in operations:
        if operation.body is not None:
            found[operation.body] = None
        for answer in operation.answers.values():
            if isinstance(answer, Stream):
                found.update((event.data, None) for event in answer.events)
            elif answer.type is not None:
                found[answer.type] = None
    return list(found)


def _parameters(struct: type[msgspec.Struct] | None, where: str) -> list[dict[str, Any]]:
    """A query's or headers' Struct as parameters: one per field, its schema the field's."""
    if struct is None:
        return []
    (_,), components = msgspec.json.schema_components([struct], ref_template=REF)
    schema = components[struct.__name__]
    parameters = []
    for name, field_schema in schema["properties"].items():
        field_schema = dict(field_schema)
        description = field_schema.pop("description", None)
        field_schema.pop("default", None)
        parameter = {"name": name, "in": where, "required": name in schema.get("required", ())}
        parameter["schema"] = field_schema
        if description is not None:
            parameter["description"] = description
        parameters.append(parameter)
    return parameters


def _error(description: str, status: int) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": REF.format(name="Error")}}},
    }
    if status in (429, 503):
        answer["headers"] = RETRY_AFTER
    return answer


def _event(event: Any, schema_of: dict[Any, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "event": {"const": event.name},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "contentSchema": schema_of[event.data],
        },
    }
    required = ["event", "data"]
    if event.id_pattern is not None:
        properties["id"] = {"type": "string", "pattern": event.id_pattern}
        required.append("id")
    if event.retry:
        properties["retry"] = {"type": "integer", "minimum": 0}
    return {
        "title": f"event: {event.name}",
        "type": "object",
        "required": required,
        "properties": properties,
        "additionalProperties": False,
    }


def _answer(answer: Answer | Stream, schema_of: dict[Any, Any], components: dict[str, Any]) -> dict[str, Any]:
    if isinstance(answer, Stream):
        events = [_event(event, schema_of) for event in answer.events]
        item = events[0] if len(events) == 1 else {"oneOf": events}
        return {"description": answer.description, "content": {"text/event-stream": {"schema": item}}}
    schema = {"type": "object"} if answer.type is None else schema_of[answer.type]
    if "$ref" in schema:  # the answer's own type inline (a reader sees its fields), its parts by reference
        schema = dict(components[schema["$ref"].rpartition("/")[2]])
    described: dict[str, Any] = {
        "description": answer.description,
        "content": {answer.media_type: {"schema": schema}},
    }
    if answer.headers:
        described["headers"] = {
            name: {"description": words, "schema": {"type": "integer"}}
            for name, words in answer.headers.items()
        }
    return described


def _refusals(operation: Operation, responses: dict[str, Any]) -> None:
    """The answers of hardening (README's Settings) an operation may give: 503 when Redis is
    unreachable or the server drains, a browser's cross-site POST 403, 429 past a client's rate or
    stream cap (and 408 when a limited body arrives too slowly)."""
    method = operation.method.lower()
    if method not in {"get", "post"} or operation.path in UNGUARDED:
        return
    unavailable = "Redis unreachable, a server-wide cap reached, or the server shutting down"
    responses.setdefault("503", _error(unavailable, 503))
    if method == "post":  # services.api.middleware.RequestGuard
        responses.setdefault(
            "403", _error("A browser's request from a page of another site (cross_origin)", 403)
        )
    if operation.rate_limited:
        limited = "Rate limited: too many from this client"
        words = operation.rate_limited if isinstance(operation.rate_limited, str) else limited
        responses.setdefault("429", _error(words, 429))
        responses.setdefault("408", _error("The request body did not arrive in time", 408))
    if operation.capped:
        responses.setdefault("429", _error("Too many live streams from this client", 429))


def _operation(operation: Operation, schema_of: dict[Any, Any], components: dict[str, Any]) -> dict[str, Any]:
    summary, description = operation.words()
    described: dict[str, Any] = {"summary": summary}
    if description:
        described["description"] = description
    if operation.security is not None:
        described["security"] = [dict(scheme) for scheme in operation.security]
    parameters = _parameters(operation.headers, "header") + _parameters(operation.query, "query")
    if operation.path.startswith("/games/{game_id}") and operation.method in {"GET", "POST"}:
        parameters.append(INVITE)
    if parameters:
        described["parameters"] = parameters
    errors = dict(operation.errors)
    if operation.body is not None:
        schema = schema_of[operation.body]
        described["requestBody"] = {"required": True, "content": {"application/json": {"schema": schema}}}
        errors = {status: ERRORS[status] for status in BODY_ERRORS} | errors
    responses = {
        str(status): _answer(answer, schema_of, components) for status, answer in operation.answers.items()
    }
    responses |= {str(status): _error(words, status) for status, words in sorted(errors.items())}
    _refusals(operation, responses)
    described["responses"] = responses
    return described


def generate(operations: Iterable[Operation]) -> dict[str, Any]:
    """The document of ``operations``."""
    operations = list(operations)
    types = _types(operations)
    commands = [table_for(name).command_type for name in game_names()]
    schemas, components = msgspec.json.schema_components([*types, *commands], ref_template=REF)
    schema_of = dict(zip(types, schemas, strict=False))
    refine(components, list(schemas[len(types) :]))
    for schema in components.values():  # a type's docstring, as one line
        if isinstance(schema.get("description"), str):
            schema["description"] = " ".join(schema["description"].split())
    paths: dict[str, Any] = {}
    for operation in operations:
        item = paths.setdefault(operation.path, {})
        names = re.findall(r"{(\w+)}", operation.path)
        if names:
            item["parameters"] = [
                {
                    "name": name,
                    "in": "path",
                    "required": True,
                    "schema": PATH_PARAMETERS.get(name, {"type": "string"}),
                }
                for name in names
            ]
        item[operation.method.lower()] = _operation(operation, schema_of, components)
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
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "account_cookie": {"type": "apiKey", "in": "cookie", "name": "ts_account"},
                "quickplay_cookie": {"type": "apiKey", "in": "cookie", "name": "ts_quickplay"},
            },
        },
    }


@cache
def openapi_document() -> dict[str, Any]:
    return generate(OPERATIONS)
