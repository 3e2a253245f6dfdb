"""HTTP plumbing shared by the routes: JSON in and out, path and query values, the caller and the
browser's token cookies (a table's seat and host tokens; the account's ``ts_account``)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from services.api.context import app_context
from services.errors import (
    ForbiddenError,
    InvalidError,
    MalformedError,
    RequestTimeoutError,
    TooLargeError,
    UnauthorizedError,
    UnavailableError,
    UnsupportedMediaTypeError,
    game_not_found,
)
from services.operating.config import IPNetwork
from services.table.callers import Caller, TokenChanged

T = TypeVar("T")

MAX_BODY = 64 * 1024  # the largest command is a few hundred bytes
MAX_VERSION = 2**53 - 1  # the largest version a query may name (exact in JSON, far below Redis's 2^64)
GAME_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

_encoder = msgspec.json.Encoder()


class JSONResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return content if isinstance(content, bytes) else _encoder.encode(content)


async def read_body(request: Request, body_type: type[T]) -> T:
    """The request body as ``body_type``: 413 past ``MAX_BODY``, 408 when it does not arrive within
    the body timeout (a slow sender holds no worker forever), 503 ``shutting_down`` when it is still
    arriving ``BODY_GRACE`` after the drain began (``services.api.drain``), 400 if not JSON, 422 if
    not that shape. A body not declared ``Content-Type: application/json`` is refused unread: 415
    ``unsupported_media_type`` (an HTML form or a "simple" cross-origin ``fetch`` can send only
    ``text/plain``, form or multipart bodies; a JSON one needs a CORS preflight, which this service
    never grants)."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaTypeError(
            "unsupported_media_type",
            "A request body must be JSON, sent with 'Content-Type: application/json'.",
        )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        raise TooLargeError("body_too_large", f"A request body may have at most {MAX_BODY} bytes.")
    context = app_context(request)
    limit = context.settings.body_timeout_seconds
    with context.drain.body(limit) as scope:
        body = await _receive_body(request)
    if scope.cancelled_caught:
        if context.drain.draining:  # cut short by the drain: another server (or this one again) will do
            raise UnavailableError("shutting_down", "This server is shutting down; send the request again.")
        raise RequestTimeoutError("body_timeout", f"The request body did not arrive within {limit:g} s.")
    return decode_body(body, body_type)


def decode_body(body: bytes, body_type: type[T]) -> T:
    """A received body as ``body_type`` (``read_body``'s rules: 400 if not JSON, 422 if not that
    shape; numbers with no fraction taken as integers)."""
    if not body:
        raise MalformedError("malformed_json", "The request body must be a JSON document.")
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        raise MalformedError("malformed_json", f"The request body is not valid JSON: {exc}.") from None
    except RecursionError:
        raise MalformedError("malformed_json", "The request body is nested too deeply.") from None
    try:
        data = _integral(data)
    except RecursionError:
        raise MalformedError("malformed_json", "The request body is nested too deeply.") from None
    try:
        return msgspec.convert(data, body_type)
    except msgspec.ValidationError as exc:
        raise InvalidError("invalid_request", f"The request is invalid: {exc}.") from None


def _integral(data: Any) -> Any:
    """JSON numbers with no fraction (``3.0``) as integers: JSON Schema (so ``/openapi.json``) calls
    them integers, and a client's JSON library may well write them so."""
    if isinstance(data, float) and data.is_integer() and abs(data) <= 2**53:
        return int(data)
    if isinstance(data, dict):
        return {key: _integral(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_integral(value) for value in data]
    return data


async def _receive_body(request: Request) -> bytes:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise TooLargeError("body_too_large", f"A request body may have at most {MAX_BODY} bytes.")
    return body


def game_id_of(request: Request) -> str:
    """The game id of the path; one that no game can have is a 404 like any unknown game."""
    game_id: str = request.path_params["game_id"]
    if not GAME_ID.fullmatch(game_id):
        raise game_not_found(game_id)
    return game_id


def bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise UnauthorizedError("unauthorized", "Send the token as 'Authorization: Bearer <token>'.")
    return token.strip()


async def caller_of(request: Request, game_id: str, assume: bool = False) -> Caller:
    """Who is asking (see ``services.table.callers``): the ``Authorization`` header wins; without one, a
    browser's ``ts_seat_<id>`` cookie, else its ``ts_host_<id>`` cookie (a stale one is ignored).
    ``assume``: from this process's memory of the token when it can, to be verified by its use."""
    callers = app_context(request).callers
    token = bearer(request)
    if token is not None:
        return await callers.identify(game_id, token, assume)
    return await callers.remembered(game_id, remembered_tokens(request, game_id), assume)


async def identified(
    request: Request, game_id: str, use: Callable[[Caller], Awaitable[T]], assumed: Caller | None = None
) -> T:
    """``use(caller)``, the caller assumed from memory when its token is remembered (``use`` verifies
    it in its own round trip; ``assumed``: already identified so by the route); if the token no longer
    holds that role, the caller is identified afresh from Redis and ``use`` runs again (nothing was
    shown or decided for the assumption)."""
    caller = assumed if assumed is not None else await caller_of(request, game_id, assume=True)
    if caller.check is None:
        return await use(caller)
    try:
        return await use(caller)
    except TokenChanged as changed:
        app_context(request).callers.forget(changed.check)
    return await use(await caller_of(request, game_id))


TokenKind = Literal["seat", "host"]


def cookie_name(kind: TokenKind, game_id: str) -> str:
    """``ts_seat_<game_id>`` or ``ts_host_<game_id>``: a browser's token for one table."""
    return f"ts_{kind}_{game_id}"


def remembered_tokens(request: Request, game_id: str) -> list[str]:
    """The tokens a browser remembers for a table: its seat's first, then its host's."""
    found = (request.cookies.get(cookie_name(kind, game_id)) for kind in ("seat", "host"))
    return [token for token in found if token]


def set_token_cookie(request: Request, response: Response, kind: TokenKind, game_id: str, token: str) -> None:
    """Remember a browser's token in an HttpOnly, SameSite=Strict cookie that scripts cannot read."""
    response.set_cookie(
        cookie_name(kind, game_id),
        token,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",
    )


ACCOUNT_COOKIE = "ts_account"
ACCOUNT_COOKIE_SECONDS = 180 * 24 * 3600  # a player who comes back stays logged in for half a year


def account_token(request: Request) -> tuple[str, Literal["header", "cookie"]] | None:
    """The account token of a request and where it came from: the ``Authorization`` header wins,
    else the browser's ``ts_account`` cookie."""
    token = bearer(request)
    if token is not None:
        return token, "header"
    cookie = request.cookies.get(ACCOUNT_COOKIE)
    return (cookie, "cookie") if cookie else None


def set_account_cookie(request: Request, response: Response, token: str) -> None:
    """Keep a browser logged in: the account token in an HttpOnly, SameSite=Strict cookie."""
    response.set_cookie(
        ACCOUNT_COOKIE,
        token,
        max_age=ACCOUNT_COOKIE_SECONDS,
        httponly=True,
        samesite="strict",
        path="/",
        secure=request.url.scheme == "https",
    )


def clear_account_cookie(request: Request, response: Response) -> None:
    response.delete_cookie(
        ACCOUNT_COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https"
    )


async def host_of(request: Request, game_id: str) -> Caller:
    """The host, by the ``Authorization`` header or the ``ts_host_<game id>`` cookie; 401 without a
    token, 403 for any other caller."""
    token = bearer(request) or request.cookies.get(cookie_name("host", game_id))
    if token is None:
        raise UnauthorizedError("unauthorized", "Only the host may do this: send the host token.")
    caller = await app_context(request).callers.identify(game_id, token)
    if caller.role != "host":
        raise ForbiddenError("not_the_host", "Only the table's host may do this.")
    return caller


def int_query(request: Request, name: str, default: int, low: int = 0, high: int | None = None) -> int:
    value = optional_int_query(request, name, low, high)
    return default if value is None else value


def optional_int_query(request: Request, name: str, low: int = 0, high: int | None = None) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidError("invalid_query", f"The query parameter {name!r} must be an integer.") from None
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidError("invalid_query", f"The query parameter {name!r} must be {bounds}.")
    return value


def client_address(request: Request) -> str:
    """Who to count a request against (every per-address limit: rates, logins, registrations, stream
    caps): the peer's address, unless the peer is one of the ``trusted_proxies`` (default none).
    Then ``X-Forwarded-For`` is read from its right end (each proxy appends the address it saw),
    skipping trusted proxies: the first address no trusted proxy is, is the client. An entry that is
    not an address stops the walk at the hop that wrote it; what a client writes itself at the left
    end is never believed. An IPv6 client counts as its /64 (one host commonly holds a whole /64)."""
    peer = request.client.host if request.client is not None else "unknown"
    trusted = app_context(request).settings.trusted_networks
    if not trusted or not _is_trusted(peer, trusted):
        return _counted(peer)
    hops = [hop.strip() for value in request.headers.getlist("x-forwarded-for") for hop in value.split(",")]
    client = peer
    for hop in reversed(hops):
        try:
            address = ipaddress.ip_address(hop)
        except ValueError:
            return _counted(client)
        client = str(address)
        if not _is_trusted(client, trusted):
            return _counted(client)
    return _counted(client)


def _counted(host: str) -> str:
    """The key a client is counted under: an IPv4 address as it is, an IPv6 one as its /64."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return host


def network_of(address: str) -> str:
    """The block a client address (``client_address``) belongs to, for budgets one network shares:
    an IPv4 /24, an IPv6 /48 (the address may already be the /64 a client counts as). Not an
    address: itself."""
    try:
        network = ipaddress.ip_network(address, strict=False)
    except ValueError:
        return address
    prefix = 24 if network.version == 4 else 48
    return str(network.supernet(new_prefix=prefix)) if network.prefixlen > prefix else str(network)


def _is_trusted(host: str, trusted: tuple[IPNetwork, ...]) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return any(address in network for network in trusted)
