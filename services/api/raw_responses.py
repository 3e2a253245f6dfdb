"""Answers sent straight from the ASGI lanes ahead of the middleware and the router (``/healthz``
and ``/livez``: ``services.api.probes``; kept views: ``services.api.view_lane``), and the request
id every answer carries (``services.api.middleware`` echoes it on the others)."""

from __future__ import annotations

import itertools
import re
import secrets
from collections.abc import Sequence

from starlette.types import Scope, Send

_REQUEST_IDS = itertools.count(1)
_PROCESS_ID = secrets.token_hex(6)  # random per process: ids stay unique across API processes
PLAIN_ID = re.compile(rb"[A-Za-z0-9._:-]{1,64}")
"""A request id a client may choose: letters, digits, ``._:-``, at most 64 characters."""


def new_request_id() -> str:
    """A request id unique across processes (a random process prefix and a counter; cheaper than a
    UUID per request, and a request id needs to be unique, not secret)."""
    return f"{_PROCESS_ID}-{next(_REQUEST_IDS):x}"


def request_id(scope: Scope) -> bytes:
    """The client's ``X-Request-ID`` if it is a plain id (``PLAIN_ID``), else a new one."""
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            if PLAIN_ID.fullmatch(value):
                return bytes(value)
            break
    return new_request_id().encode()


async def send_json(
    scope: Scope,
    send: Send,
    status: int,
    body: bytes,
    extra: Sequence[tuple[bytes, bytes]] = (),
    echoed: bytes | None = None,
) -> None:
    """A JSON response sent straight from a lane ahead of the middleware, with the request id
    (``echoed``, else ``request_id(scope)``)."""
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"x-request-id", echoed or request_id(scope)),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
