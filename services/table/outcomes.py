"""What every write of the table's write side shares (``services.table.commands``, ``seating``,
``system_commands``): the outcome of an appended batch, how many times a lost race is retried, the
salts of a new batch, a command decoded for its game's rules and decided, the conflicts a write
answers with;
and ``WriteSide``, what of the ``GameCommands`` they serve the functions of ``seating`` and
``system_commands`` use (typed here so that they never import it back).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from domain.fairness import SecretSeeds
from domain.kernel import Command, Event, Rejected
from domain.table import Table
from services.errors import AppError, ConflictError, InvalidError, from_rejection
from services.history.folding import Folded
from services.history.records import CommandRecord
from services.store.event_store import EventStore
from services.store.idempotency import IdempotencyStore, JoinIdempotency
from services.store.operations import Handover
from services.store.tokens import TokenStore
from services.table.callers import TokenCheck

MAX_ATTEMPTS = 25


@dataclass(frozen=True)
class CommandOutcome:
    """An accepted (or replayed) command: the batch it appended and the receipt for its head."""

    game_id: str
    table: Table
    first: int
    version: int
    events: list[tuple[int, Event]]
    hash: str
    finished: bool
    duplicate: bool = False

    def receipt(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "version": self.version, "hash": self.hash}


def fresh_salts(count: int) -> list[str]:
    """One 128-bit salt per entry to store, from the CSPRNG (docs/fairness.md "Hiding")."""
    return [secrets.token_hex(16) for _ in range(count)]


def decode_command(folded: Folded, body: Mapping[str, Any]) -> Command:
    kind = body.get("type")
    if not isinstance(kind, str):
        raise InvalidError("invalid_command", "The command must be an object with a string 'type'.")
    try:
        command: Command = msgspec.convert(body, folded.table.command_type)
    except msgspec.ValidationError as exc:
        message = str(exc)
        if "Invalid value" in message and "$.type" in message:
            raise InvalidError(
                "unknown_command", f"{kind!r} is not a command of {folded.table.name}."
            ) from None
        raise InvalidError("invalid_command", f"The command is malformed: {message}.") from None
    return command


@dataclass(frozen=True, slots=True)
class Decided:
    """A player's command as the rules took it: the record to store with its batch, and the batch."""

    record: CommandRecord
    events: Sequence[Event]


def decide(
    folded: Folded,
    seat: int,
    command_id: str,
    body: Mapping[str, Any],
    expected_version: int | None,
    seeds: SecretSeeds,
) -> Decided:
    """A player's command (``body``, sent as ``command_id``) decoded for the game's rules and decided
    on ``folded``. Refused in this order: a malformed command (422), a head other than
    ``expected_version`` (409 ``version_conflict``), the rules (``from_rejection``)."""
    command = decode_command(folded, body)
    if expected_version is not None and expected_version != folded.version:
        raise version_conflict(folded.version)
    try:
        events = folded.table.decide(folded.state, command, seat, seeds)
    except Rejected as rejected:
        raise from_rejection(rejected) from None
    return Decided(
        CommandRecord(id=command_id, kind="command", seat=seat, body=msgspec.to_builtins(command)), events
    )


def version_conflict(current: int) -> AppError:
    return ConflictError(
        "version_conflict",
        f"The game is at version {current}, not the expected one.",
        current_version=current,
    )


def contention() -> AppError:
    return ConflictError("version_conflict", "The game changed too often to apply the command; try again.")


class WriteSide(Protocol):
    """The ``GameCommands`` (``services.table.commands``) a function of ``seating`` or
    ``system_commands`` serves: its collaborators, its reads and its append."""

    store: EventStore
    tokens: TokenStore
    idempotency: IdempotencyStore
    join_idempotency: JoinIdempotency
    bot_pace_ms: int

    async def load(self, game_id: str) -> Folded: ...

    async def seeds(self, game_id: str) -> SecretSeeds: ...

    async def _append(
        self,
        folded: Folded,
        record: CommandRecord,
        events: Sequence[Event],
        seat: int | None,
        fingerprint: str = "",
        marked: bool = False,
        timer: dict[str, str] | None = None,
        system: bool = False,
        check: TokenCheck | None = None,
        blind: bool = False,
        keep_deadline: bool = False,
    ) -> CommandOutcome | int: ...

    async def _after(self, folded: Folded, armed: bool) -> None: ...

    async def _notify(self, game_id: str, handover: Handover) -> None: ...

    async def _replay(
        self,
        game_id: str,
        seat: int | None,
        command_id: str,
        fingerprint: str,
        system: bool = False,
        confirmed: bool = False,
    ) -> CommandOutcome | None: ...
