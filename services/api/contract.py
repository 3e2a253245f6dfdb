"""The API's contract, declared once per operation next to its handler: an ``Operation`` names its
method, path and handler, its typed body, query and headers (msgspec Structs), its answers (msgspec
types, or an event stream of typed events) and the errors it may give. ``services.api.app`` builds
its Starlette routes from the declarations (a route cannot exist without its contract) and
``services.api.openapi`` generates ``/openapi.json`` from the same declarations.

A declaration without ``summary`` takes the first paragraph of its handler's docstring (and the
rest as ``description``). Every error answer is the JSON error shape (``Error``); the answers of
hardening every operation may give (503, a cross-site 403, 429 and 408 of a rate-limited or capped
route) are added by the generator from ``rate_limited`` and ``capped``."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec
from msgspec import Meta
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from projections.narration import LANGUAGES

Handler = Callable[[Request], Awaitable[Response]]

ERRORS = {
    400: "Malformed JSON",
    401: "A bad or malformed token",
    403: "A token that may not do this",
    404: "No such game",
    409: "A conflict with the table's state",
    413: "The request body is too large",
    415: "The body is not declared 'Content-Type: application/json' (unsupported_media_type)",
    422: "Invalid input or a rule violation",
}
BODY_ERRORS = (400, 413, 415, 422)
"""What any operation with a JSON body may answer (added to every declaration with a ``body``)."""

BEARER: tuple[dict[str, list[str]], ...] = ({"bearer": []}, {})
"""A token (bearer header or one of the table's cookies) or none (a spectator)."""
TOKEN: tuple[dict[str, list[str]], ...] = ({"bearer": []},)
ACCOUNT: tuple[dict[str, list[str]], ...] = ({"bearer": []}, {"account_cookie": []})
MAYBE_ACCOUNT: tuple[dict[str, list[str]], ...] = ({"bearer": []}, {"account_cookie": []}, {})
COOKIES = (
    "Without the header, a browser's 'ts_seat_<game_id>' cookie (else its 'ts_host_<game_id>' cookie) "
    "identifies it; creating and joining set these HttpOnly cookies."
)
BANNED_OR_CROSS_SITE = (
    "account_banned (an operator banned the account of the header or cookie), or cross_origin (a "
    "browser's request from a page of another site)"
)
"""The 403 of an operation open to anyone that takes an account when one is sent: the refusal of a
banned account beside the cross-site guard's (which any POST may give)."""

GAME_ID_PATTERN = "^[A-Za-z0-9_-]{1,64}$"
HEX16 = "^[0-9a-f]{16}$"
PATH_PARAMETERS: dict[str, dict[str, Any]] = {
    "game_id": {"type": "string", "pattern": GAME_ID_PATTERN},
    "dispute_id": {"type": "string", "pattern": HEX16},
    "ticket": {"type": "string", "pattern": HEX16},
}
"""The schema of each path parameter by its name (any other: a string)."""
Narration = Annotated[
    str,
    Meta(
        extra_json_schema={"enum": list(LANGUAGES)},
        description="Add each event's sentence in this language under 'text' (saying what the caller sees)",
    ),
]
"""A query's ``lang``: the narration's language."""
ReasonLanguage = Annotated[
    str,
    Meta(
        extra_json_schema={"enum": list(LANGUAGES)},
        description="The language of the words ('text'); default: the Accept-Language header's (hint) or en",
    ),
]
"""A hint's or a review's ``lang``."""


def errors(*statuses: int, **descriptions: str) -> dict[int, str]:
    """Error answers by status with the usual words; ``descriptions`` override them by status,
    e.g. ``s409="name_taken"``."""
    return {status: descriptions.get(f"s{status}", ERRORS[status]) for status in statuses}


@dataclass(frozen=True)
class Answer:
    """An answer: its words and the msgspec type of its body (``None``: any JSON object); the
    headers it carries (name -> description, an integer, e.g. ``Retry-After``)."""

    description: str
    type: Any = None
    media_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    """One kind of server-sent event: ``name`` in its ``event`` field, ``data`` the msgspec type of
    its JSON; its ``id`` where the stream sends one (matching ``id_pattern``), ``retry`` where sent."""

    name: str
    data: Any
    id_pattern: str | None = None
    retry: bool = False


@dataclass(frozen=True)
class Stream:
    """A 200 answer that is a ``text/event-stream`` of these kinds of events (its schema: one event,
    as OpenAPI 3.2 calls ``itemSchema``; the document stays 3.1)."""

    description: str
    events: tuple[Event, ...]


@dataclass(frozen=True)
class Operation:
    """One operation of the API, its route and its contract (see the module)."""

    method: str
    path: str
    handler: Handler
    answers: Mapping[int, Answer | Stream]
    errors: Mapping[int, str] = field(default_factory=dict)
    body: Any = None
    query: type[msgspec.Struct] | None = None
    headers: type[msgspec.Struct] | None = None
    summary: str | None = None
    description: str | None = None
    security: tuple[dict[str, list[str]], ...] | None = None
    rate_limited: bool | str = False
    """True, or the words of its 429: limited per client (429 and 408 with ``Retry-After``)."""
    capped: bool = False
    """A live stream: capped per client (429 with ``Retry-After``)."""
    route_path: str | None = None
    """The route's own path where it differs (a convertor, ``{name:profile_ref}``)."""

    def route(self) -> Route:
        return Route(self.route_path or self.path, self.handler, methods=[self.method])

    def words(self) -> tuple[str, str | None]:
        """The summary and description: as declared, else from the handler's docstring."""
        if self.summary is not None:
            return self.summary, self.description
        doc = inspect.getdoc(self.handler) or ""
        first, _, rest = doc.partition("\n\n")
        return " ".join(first.split()), self.description or (" ".join(rest.split()) or None)


TICKET: tuple[dict[str, list[str]], ...] = ({"bearer": []}, {"quickplay_cookie": []})
