"""The ``Idempotency-Key`` header of ``POST /games`` and ``POST /games/{id}/players``: a client's
secret, so it must be hard to guess (and its contract: the headers of those operations)."""

from __future__ import annotations

import re
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType
from starlette.requests import Request

from services.errors import InvalidError

MIN_KEY = 16
MAX_KEY = 128
_KEY = re.compile(rf"[!-~]{{{MIN_KEY},{MAX_KEY}}}")  # visible ASCII


def idempotency_key(request: Request) -> str | None:
    """The header's value, ``None`` when absent; 422 ``invalid_idempotency_key`` when malformed."""
    value = request.headers.get("idempotency-key")
    if value is None:
        return None
    if not _KEY.fullmatch(value):
        raise InvalidError(
            "invalid_idempotency_key",
            f"An Idempotency-Key has {MIN_KEY} to {MAX_KEY} visible ASCII characters; use a random one.",
        )
    return value


IdempotencyKey = Annotated[str, Meta(min_length=MIN_KEY, max_length=MAX_KEY, pattern="^[!-~]+$")]


class CreateGameHeaders(msgspec.Struct, rename={"idempotency_key": "Idempotency-Key"}):
    idempotency_key: (
        Annotated[
            IdempotencyKey,
            Meta(
                description="A secret of the client (16-128 visible ASCII characters): the same key and body "
                "within 24 hours answer with the same table and host token, creating nothing."
            ),
        ]
        | UnsetType
    ) = UNSET


class JoinGameHeaders(msgspec.Struct, rename={"idempotency_key": "Idempotency-Key"}):
    idempotency_key: (
        Annotated[
            IdempotencyKey,
            Meta(
                description="A secret of the client (16-128 visible ASCII characters): the same key and body "
                "within 24 hours answer with the same seat and token (also after a 503 not_replicated), "
                "seating nobody again; another body: 409 idempotency_key_reused; while a request with the "
                "key runs: 409 idempotency_key_in_use."
            ),
        ]
        | UnsetType
    ) = UNSET
