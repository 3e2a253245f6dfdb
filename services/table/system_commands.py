"""The commands the system plays on a table, and the lifecycle a host, a seat or an operator asks
for: bots filling seats, a seat left or taken back, a turn timed out, a bot's move, a hint, a waiting
table expired, a table closed. Each is one batch decided on the newest state (``system_batch``) with an
id of its own in a scope no player writes (``services.store.keys.dedup_field``). Each function takes
the ``GameCommands`` it serves (typed as ``outcomes.WriteSide``; ``GameCommands.leave`` and the
others call it), whose append it uses.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec
import structlog

from domain.fairness import SecretSeeds
from domain.kernel import Event, Rejected
from domain.table import BotSeated
from services.errors import ConflictError, ForbiddenError, from_rejection
from services.history.folding import Folded
from services.history.records import CommandRecord
from services.table.outcomes import (
    MAX_ATTEMPTS,
    CommandOutcome,
    WriteSide,
    contention,
    decode_command,
    version_conflict,
)
from services.telemetry import metrics

log = structlog.get_logger("tablestream.commands")

Decision = Callable[[Folded, SecretSeeds], tuple[CommandRecord, list[Event]]]
"""How a lifecycle request decides on the newest state: its record and its events."""

Suggest = Callable[[Folded, int, SecretSeeds], Awaitable[tuple[Mapping[str, Any], dict[str, Any] | None]]]
"""A hint for a seat of a folded table: the command suggested and its reason (``{"key", "params"}``
or ``None``), keyed by the game's secret seeds (``services.table.hints``)."""

Fallback = Callable[[Folded, int, SecretSeeds], Mapping[str, Any]]
"""The seat's bot move on a folded table (its chance keyed by the game's secret seeds), for a
timeout where the rules name no default."""


async def fill_with_bots(
    commands: WriteSide, game_id: str, level: str = "normal", count: int | None = None
) -> list[int]:
    """A bot of ``level`` in each of the ``count`` lowest free seats of a waiting table, or in
    every one (the host's request); returns those seats. The record's body names a level other
    than ``normal`` (as before levels: ``{}``) and the count when one was asked."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        return bots_record(level, count), folded.table.fill_with_bots(folded.state, seeds, level, count)

    outcome = await system_batch(commands, game_id, decide, None)
    return [seat for seat, _ in bot_seats(outcome)]


async def leave(commands: WriteSide, game_id: str, seat: int, token: str | None = None) -> int:
    """``seat`` leaves: freed while waiting, taken over by a bot during play; ``token`` (the
    seat's) stops working."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        events = folded.table.leave(folded.state, seat)
        record = CommandRecord(id=f"leave-{seat}-{secrets.token_hex(4)}", kind="leave", seat=seat, body={})
        return record, events

    await system_batch(commands, game_id, decide, None)
    if token is not None:
        await commands.tokens.revoke(game_id, token)
    log.info("seat_left", game_id=game_id, seat=seat)
    return seat


async def unseat_account(commands: WriteSide, game_id: str, account_id: str) -> list[int]:
    """A banned account's seats at ``game_id``: each one's tokens stop working (no move, no
    rematch, no taking the seat back), and a seat still in the game is left: freed while the
    table waits, taken over by a bot during play. Returns those seats."""
    folded = await commands.load(game_id)
    seats = [p.seat for p in folded.state.seated if p.account is not None and p.account.id == account_id]
    for seat in seats:
        await commands.tokens.revoke_role(game_id, str(seat))
        if folded.state.status in ("waiting", "playing") and folded.state.holds(seat):
            with contextlib.suppress(ConflictError):  # left, or the game ended, meanwhile
                await leave(commands, game_id, seat)
    return seats


async def reclaim(commands: WriteSide, game_id: str, seat: int) -> int:
    """``seat``'s player takes back the seat a bot took over after their timeouts; the bot's
    pending move (queued or paced) then finds the game moved on and does nothing, and the
    append arms the turn timer for the player again."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        events = folded.table.reclaim(folded.state, seat)
        record = CommandRecord(
            id=f"reclaim-{seat}-{secrets.token_hex(4)}", kind="reclaim", seat=seat, body={}
        )
        return record, events

    await system_batch(commands, game_id, decide, None)
    log.info("seat_reclaimed", game_id=game_id, seat=seat)
    return seat


async def timeout(
    commands: WriteSide, game_id: str, version: int, seat: int, fallback: Fallback
) -> CommandOutcome:
    """``seat``'s time ran out on the game as it was at ``version``: its default action (the
    rules' default, else ``fallback``, the seat's bot move), recorded as a timeout. Id
    ``timeout-<version>-<seat>`` and expected version ``version``: at most once, and a command
    that got in first wins (``version_conflict``)."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        table = folded.table
        command = table.default_command(folded.state, seat, seeds)
        if command is None:
            command = decode_command(folded, fallback(folded, seat, seeds))
        events = table.timeout(folded.state, seat, command, seeds)
        body = msgspec.to_builtins(command)
        record = CommandRecord(id=f"timeout-{version}-{seat}", kind="timeout", seat=seat, body=body)
        return record, events

    outcome = await system_batch(commands, game_id, decide, version, f"timeout-{version}-{seat}", seat)
    if not outcome.duplicate:
        metrics.timeout(outcome.table.name)
    return outcome


async def bot_command(
    commands: WriteSide, game_id: str, version: int, seat: int, body: Mapping[str, Any]
) -> CommandOutcome:
    """A bot's command for ``seat`` on the game at ``version`` (id ``bot-<version>-<seat>``)."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        command = decode_command(folded, body)
        events = folded.table.bot_decide(folded.state, command, seat, seeds)
        record = CommandRecord(
            id=f"bot-{version}-{seat}", kind="bot", seat=seat, body=msgspec.to_builtins(command)
        )
        return record, events

    outcome = await system_batch(commands, game_id, decide, version, f"bot-{version}-{seat}", seat)
    if not outcome.duplicate:
        metrics.bot_move(outcome.table.name)
    return outcome


async def hint(commands: WriteSide, game_id: str, seat: int, suggest: Suggest) -> CommandOutcome:
    """``seat`` asks for a hint at a practice table (403 ``hints_not_allowed`` at any other):
    ``suggest`` (the ``strong`` bot, from the seat's own view; run in a worker thread by the
    caller's choice) names a legal command and maybe a reason, recorded as ``hint_given`` by the
    command ``hint-<version>-<seat>`` in the system's scope with expected version ``version``.
    Asked again while the game has not moved (the head is this seat's hint, or a concurrent
    request at the same version), the first answer comes back and nothing is computed."""
    folded = await commands.load(game_id)
    if not folded.state.practice:
        raise ForbiddenError(
            "hints_not_allowed", "Hints are given at practice tables only, never at rated or public ones."
        )
    command_id = f"hint-{folded.version}-{seat}"
    for asked in (command_id, f"hint-{folded.version - 1}-{seat}"):  # this version's, or the head's own
        previous = await commands._replay(game_id, seat, asked, asked, system=True)
        if previous is not None and previous.version in (folded.version, folded.version + 1):
            return previous
    try:
        folded.table.check_hint(folded.state, seat)
    except Rejected as rejected:
        raise from_rejection(rejected) from None
    seeds = await commands.seeds(game_id)
    body, reason = await suggest(folded, seat, seeds)

    def decide(now: Folded, _: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        command = decode_command(now, body)
        events = now.table.hint(now.state, seat, command, reason)
        record_body = {"command": msgspec.to_builtins(command), "reason": reason}
        return CommandRecord(id=command_id, kind="hint", seat=seat, body=record_body), events

    return await system_batch(commands, game_id, decide, folded.version, command_id, seat, keep_deadline=True)


async def expire(commands: WriteSide, game_id: str, version: int) -> CommandOutcome:
    """A waiting table, unchanged since ``version``, expires (id ``expire-<version>``)."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        record = CommandRecord(id=f"expire-{version}", kind="expire", body={})
        return record, folded.table.expire(folded.state)

    return await system_batch(commands, game_id, decide, version, f"expire-{version}")


async def close(commands: WriteSide, game_id: str, reason: str, operator: str) -> CommandOutcome:
    """An operator closes a waiting or running table (``services.operating.operator``): one batch,
    ``table_closed`` and the seeds still sealed, recorded as the command ``close`` by
    ``operator``. The append clears the table's timer (no status but waiting or playing has one),
    and a bot's queued move then finds nothing to do."""

    def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
        events = folded.table.close(folded.state, reason, operator, seeds)
        body = {"reason": reason.strip(), "operator": operator}
        record = CommandRecord(id=f"close-{folded.version}", kind="close", body=body)
        return record, events

    outcome = await system_batch(commands, game_id, decide, None)
    log.info("table_closed", game_id=game_id, operator=operator)
    return outcome


async def system_batch(
    commands: WriteSide,
    game_id: str,
    decide: Decision,
    expected_version: int | None,
    command_id: str | None = None,
    seat: int | None = None,
    keep_deadline: bool = False,
) -> CommandOutcome:
    """Decide on the newest state and append (``keep_deadline``: a batch that changes no turn);
    with ``command_id`` an id seen before answers as the first time, and with
    ``expected_version`` a newer game is a ``version_conflict``. Every such batch is the
    system's: its id lives in the system's scope, which no player writes."""
    if command_id is not None:
        previous = await commands._replay(game_id, seat, command_id, command_id, system=True)
        if previous is not None:
            return previous
    seeds = await commands.seeds(game_id)
    for _ in range(MAX_ATTEMPTS):
        folded = await commands.load(game_id)
        if expected_version is not None and expected_version != folded.version:
            raise version_conflict(folded.version)
        try:
            record, events = decide(folded, seeds)
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        outcome = await commands._append(
            folded,
            record,
            events,
            record.seat,
            command_id or record.id,
            system=True,
            keep_deadline=keep_deadline,
        )
        if isinstance(outcome, CommandOutcome):
            return outcome
        if expected_version is not None:
            raise version_conflict(outcome)
    raise contention()


def bots_record(level: str, count: int | None) -> CommandRecord:
    """A bots record: its body names a level other than ``normal`` (as before levels: ``{}``) and
    the count when one was asked."""
    body: dict[str, object] = {} if level == "normal" else {"level": level}
    if count is not None:
        body["count"] = count
    return CommandRecord(id=f"bots-{secrets.token_hex(4)}", kind="bots", body=body)


def bot_seats(outcome: CommandOutcome) -> list[tuple[int, str]]:
    return [(e.seat, e.name) for _, e in outcome.events if isinstance(e, BotSeated)]
