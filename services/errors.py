"""Errors the shell answers with: a status, a stable snake_case code and one human sentence."""

from __future__ import annotations

from typing import Any

from domain.kernel import Rejected


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, **self.extra}}


def from_rejection(rejected: Rejected) -> ApiError:
    """A refusal by the rules: 409 for the table's state (full, over), 422 for the command itself."""
    return ApiError(409 if rejected.kind == "conflict" else 422, rejected.code, rejected.message)


def not_found(game_id: str) -> ApiError:
    return ApiError(404, "game_not_found", f"There is no game with id {game_id!r}.")
