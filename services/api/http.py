"""HTTP plumbing shared by the routes: JSON in and out, callers and their tokens, query parameters."""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from services.errors import ApiError, not_found

Role = Literal["seat", "spectator", "host", "operator"]

_encoder = msgspec.json.Encoder()


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return content if isinstance(content, bytes) else _encoder.encode(content)


@dataclass(frozen=True)
class Caller:
    role: Role
    seat: int | None = None


MAX_BODY = 64 * 1024  # the largest command is a few hundred bytes


async def read_json(request: Request) -> Any:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise ApiError(413, "body_too_large", f"A request body may have at most {MAX_BODY} bytes.")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError(413, "body_too_large", f"A request body may have at most {MAX_BODY} bytes.")
    if not body:
        raise ApiError(400, "malformed_json", "The request body must be a JSON document.")
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise ApiError(400, "malformed_json", f"The request body is not valid JSON: {exc}.") from None
    except RecursionError:
        raise ApiError(400, "malformed_json", "The request body is nested too deeply.") from None


def convert(data: Any, type_: type[Any], code: str = "invalid_request") -> Any:
    try:
        return msgspec.convert(data, type_)
    except msgspec.ValidationError as exc:
        raise ApiError(422, code, f"The request is invalid: {exc}.") from None


GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def game_id_of(request: Request) -> str:
    """The game id of the path; one that no game can have is a 404 like any unknown game."""
    game_id: str = request.path_params["game_id"]
    if not GAME_ID.fullmatch(game_id):
        raise not_found(game_id)
    return game_id


def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(401, "unauthorized", "Send the token as 'Authorization: Bearer <token>'.")
    return token.strip()


async def identify(request: Request, game_id: str) -> Caller:
    """Who is asking: a seat, the host, the operator (admin token), or - without a token - a spectator."""
    token = bearer(request)
    if token is None:
        return Caller("spectator")
    admin = request.app.state.ts.settings.admin_token
    if admin and hmac.compare_digest(token.encode(), admin.encode()):
        return Caller("operator")
    role = await request.app.state.ts.tokens.role(game_id, token)
    if role is None:
        raise ApiError(401, "unauthorized", "The token is not valid for this game.")
    if role == "host":
        return Caller("host")
    return Caller("seat", int(role))


def int_query(
    request: Request, name: str, default: int | None, low: int = 0, high: int | None = None
) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(422, "invalid_query", f"The query parameter {name!r} must be an integer.") from None
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ApiError(422, "invalid_query", f"The query parameter {name!r} must be {bounds}.")
    return value
