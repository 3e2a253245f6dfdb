"""The request bodies of API.md as msgspec Structs (also the schemas of ``/openapi.json``)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec


class CreateGame(msgspec.Struct, forbid_unknown_fields=True):
    game: str
    players: int
    options: dict[str, Any] = {}


class JoinGame(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    client_seed: Annotated[str, msgspec.Meta(max_length=64)] | None = None


class SendCommand(msgspec.Struct, forbid_unknown_fields=True):
    command_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    command: dict[str, Any]
    expected_version: Annotated[int, msgspec.Meta(ge=0)] | None = None


class Empty(msgspec.Struct, forbid_unknown_fields=True):
    """A body with nothing to say: ``{}``."""
