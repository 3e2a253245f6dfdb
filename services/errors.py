"""Application errors: a kind, a stable snake_case code and one human sentence.

The application (``services.table.commands``, ``services.table.queries``, ``services.table.callers``) raises
these;
it knows nothing of HTTP. ``services.api.error_responses`` is the one place that turns a kind into
a status code.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from domain.kernel import Rejected

ErrorKind = Literal[
    "malformed",
    "invalid",
    "rule",
    "unauthorized",
    "forbidden",
    "not_found",
    "timeout",
    "conflict",
    "too_large",
    "unsupported_media_type",
    "too_many",
    "unavailable",
]


class AppError(Exception):
    """The base of the family; ``details`` are extra fields of the error body."""

    kind: ClassVar[ErrorKind]

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


class MalformedError(AppError):
    """The input cannot be read at all (not JSON)."""

    kind = "malformed"


class InvalidError(AppError):
    """The input is readable but not of the expected shape."""

    kind = "invalid"


class RuleError(AppError):
    """The rules refuse the command itself."""

    kind = "rule"


class UnauthorizedError(AppError):
    """No valid credentials for what was asked."""

    kind = "unauthorized"


class ForbiddenError(AppError):
    """Valid credentials that may not do what was asked."""

    kind = "forbidden"


class NotFoundError(AppError):
    kind = "not_found"


class UnsupportedMediaTypeError(AppError):
    """A body of another media type than the route reads (JSON)."""

    kind = "unsupported_media_type"


class ConflictError(AppError):
    """Refused because of the game's current state (full, over, a newer version, a reused id)."""

    kind = "conflict"


class TooLargeError(AppError):
    kind = "too_large"


class RequestTimeoutError(AppError):
    """The client did not send its request in time."""

    kind = "timeout"


class RetryLaterError(AppError):
    """Refused for now; ``retry_after`` seconds is a fair wait before trying again."""

    def __init__(self, code: str, message: str, retry_after: int = 1, **details: Any) -> None:
        super().__init__(code, message, **details)
        self.retry_after = max(1, retry_after)


class TooManyError(RetryLaterError):
    """This client asked too often or holds too much (rate limits, live stream caps)."""

    kind = "too_many"


class UnavailableError(RetryLaterError):
    """The service cannot answer right now (Redis down, a global cap reached)."""

    kind = "unavailable"


def game_not_found(game_id: str) -> NotFoundError:
    return NotFoundError("game_not_found", f"There is no game with id {game_id!r}.")


def from_rejection(rejected: Rejected) -> AppError:
    """A refusal by the rules: a conflict for the table's state (full, over), else a rule error."""
    if rejected.kind == "conflict":
        return ConflictError(rejected.code, rejected.message)
    return RuleError(rejected.code, rejected.message)
