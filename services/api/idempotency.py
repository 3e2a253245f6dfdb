"""The ``Idempotency-Key`` header of ``POST /games`` and ``POST /games/{id}/players``: a client's
secret, so it must be hard to guess."""

from __future__ import annotations

import re

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
