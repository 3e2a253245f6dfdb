"""Command handling: load the folded table, let the rules decide, append atomically, poke projections.

Without ``expected_version`` a lost race is retried against the newest state (the events of the
other writer are folded in and the rules decide again); with it, a stale version is the caller's
409. A command id seen before answers exactly as the first time and appends nothing.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Command, Event, Rejected
from domain.table import Table
from services.errors import ApiError, from_rejection, not_found
from services.folding import Folded, StateCache, advance, decode_entries, seeds_from_secret
from services.records import GENESIS_HASH, CommandRecord, command_fingerprint, encode_batch
from services.store import EventStore
from services.tokens import TokenStore

MAX_ATTEMPTS = 25
SEED_OPTION = "seed"

log = structlog.get_logger("tablestream.commands")

Poke = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class Outcome:
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


class CommandHandler:
    def __init__(self, store: EventStore, tokens: TokenStore, poke: Poke, cache: StateCache | None = None):
        self.store = store
        self.tokens = tokens
        self.poke = poke
        self.cache = cache or StateCache()
        self._seeds: dict[str, SecretSeeds] = {}

    # -- reading -----------------------------------------------------------------------------

    async def load(self, game_id: str) -> Folded:
        """The table folded to the newest stored version: cached state plus the events after it."""
        cached = self.cache.get(game_id)
        entries = await self.store.read(game_id, after=cached.version if cached else 0)
        if cached is None and not entries:
            raise not_found(game_id)
        folded = advance(game_id, cached, entries)
        self.cache.put(folded)
        return folded

    async def load_at(self, game_id: str, version: int) -> Folded:
        """The table as it was at ``version`` (time travel); folded from the start, never cached."""
        entries = await self.store.read(game_id, after=0, limit=version)
        if not entries:
            raise not_found(game_id)
        return advance(game_id, None, entries)

    async def seeds(self, game_id: str) -> SecretSeeds:
        if game_id not in self._seeds:
            secret = await self.store.secret(game_id)
            if secret is None:
                raise not_found(game_id)
            self._seeds[game_id] = seeds_from_secret(secret)
        return self._seeds[game_id]

    # -- writing -----------------------------------------------------------------------------

    async def create(self, game: Any, players: Any, options: Any) -> tuple[str, str]:
        """A new table; returns its id and the host's token."""
        table = _table_or_422(game)
        if not isinstance(options, dict):
            raise ApiError(422, "invalid_options", "The options must be a JSON object.")
        options = dict(options)
        practice_seed = options.pop(SEED_OPTION, None)
        root, master = _secret_material(practice_seed)
        seeds = SecretSeeds(root, master)
        game_id = secrets.token_hex(8)
        try:
            events = table.create(
                game_id, players, options, seeds.chain_commitment(0), practice_seed is not None
            )
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        record = CommandRecord(
            id="create", kind="create", body={"game": game, "players": players, "options": options}
        )
        entry = encode_batch(1, GENESIS_HASH, record, events)[0]
        await self.store.create(game_id, {"root": root.hex(), "master": master.hex()}, entry)
        host_token = await self.tokens.issue(game_id, "host")
        await self._poke(game_id)
        log.info("table_created", game_id=game_id, game=game, players=players, outcome="ok")
        return game_id, host_token

    async def join(self, game_id: str, name: Any, client_seed: Any) -> tuple[int, str]:
        """Seat a player at the next free seat; returns the seat and its token."""
        if not isinstance(name, str):
            raise ApiError(422, "invalid_name", "The player name must be a string.")
        if client_seed is None:
            client_seed = ""
        if not isinstance(client_seed, str):
            raise ApiError(422, "invalid_client_seed", "The client seed must be a string.")
        seeds = await self.seeds(game_id)
        token = secrets.token_urlsafe(24)
        for _ in range(MAX_ATTEMPTS):
            folded = await self.load(game_id)
            try:
                events = folded.table.join(folded.state, name, client_seed, seeds)
            except Rejected as rejected:
                raise from_rejection(rejected) from None
            seat = len(folded.state.seated)
            await self.tokens.bind(game_id, token, str(seat))
            # A fresh id per attempt: two players racing for one seat must conflict, not dedup.
            record = CommandRecord(
                id=f"join-{seat}-{secrets.token_hex(4)}",
                kind="join",
                body={"name": name, "client_seed": client_seed},
            )
            outcome = await self._append(folded, record, events, seat=None)
            if isinstance(outcome, Outcome):
                log.info("player_joined", game_id=game_id, seat=seat, outcome="ok")
                return seat, token
        raise _contention()

    async def command(
        self, game_id: str, seat: int, command_id: str, body: Any, expected_version: int | None
    ) -> Outcome:
        """Decide and append one player command (see the module docstring for the retry rules)."""
        started = time.perf_counter()
        outcome_name = "rejected"
        try:
            fingerprint = command_fingerprint(seat, {"command": body, "expected_version": expected_version})
            previous = await self._replay(game_id, command_id, fingerprint)
            if previous is not None:
                outcome_name = "dup"
                return previous
            seeds = await self.seeds(game_id)
            for _ in range(MAX_ATTEMPTS):
                folded = await self.load(game_id)
                command = _decode_command(folded, body)
                if expected_version is not None and expected_version != folded.version:
                    outcome_name = "conflict"
                    raise _version_conflict(folded.version)
                try:
                    events = folded.table.decide(folded.state, command, seat, seeds)
                except Rejected as rejected:
                    raise from_rejection(rejected) from None
                record = CommandRecord(
                    id=command_id, kind="command", seat=seat, body=msgspec.to_builtins(command)
                )
                outcome = await self._append(folded, record, events, seat, fingerprint)
                if isinstance(outcome, Outcome):
                    outcome_name = "dup" if outcome.duplicate else "ok"
                    return outcome
                if expected_version is not None:
                    outcome_name = "conflict"
                    raise _version_conflict(outcome)
            outcome_name = "conflict"
            raise _contention()
        finally:
            log.info(
                "command",
                game_id=game_id,
                command_id=command_id,
                seat=seat,
                outcome=outcome_name,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
            )

    async def _append(
        self,
        folded: Folded,
        record: CommandRecord,
        events: Sequence[Event],
        seat: int | None,
        fingerprint: str = "",
    ) -> Outcome | int:
        """Append a decided batch. Returns the outcome, or the newer head version after a lost race."""
        entries = encode_batch(folded.version + 1, folded.hash, record, events)
        result = await self.store.append(
            folded.game_id, folded.version, record.id, fingerprint or record.id, seat, entries
        )
        if result.status == "ok":
            new = advance(folded.game_id, folded, entries)
            self.cache.put(new)
            await self._poke(folded.game_id)
            return Outcome(
                folded.game_id,
                folded.table,
                result.first,
                result.last,
                list(zip(range(result.first, result.last + 1), events, strict=True)),
                entries[-1].hash,
                new.state.status == "finished",
            )
        if result.status == "dup":
            replayed = await self._replay(folded.game_id, record.id, fingerprint)
            assert replayed is not None
            return replayed
        return result.head

    async def _poke(self, game_id: str) -> None:
        """Tell the projections; the events are already stored, so a failed poke must not fail the
        command: the sweeper finds any game whose projection lags."""
        try:
            await self.poke(game_id)
        except Exception:
            log.warning("poke_failed", game_id=game_id, exc_info=True)

    async def _replay(self, game_id: str, command_id: str, fingerprint: str) -> Outcome | None:
        """The original answer of a command id already seen, or ``None`` for a new one."""
        entry = await self.store.command_entry(game_id, command_id)
        if entry is None:
            return None
        stored_fingerprint, first, last = entry
        if stored_fingerprint != fingerprint:
            raise ApiError(
                409, "command_id_reused", "This command id was already used for a different command."
            )
        folded = await self.load(game_id)
        entries = await self.store.read(game_id, after=first - 1, limit=last - first + 1)
        return Outcome(
            game_id,
            folded.table,
            first,
            last,
            decode_entries(folded.table, entries),
            entries[-1].hash,
            folded.state.status == "finished",
            duplicate=True,
        )


def _table_or_422(game: Any) -> Any:
    try:
        return table_for(game)
    except Rejected as rejected:
        raise ApiError(422, rejected.code, rejected.message) from None


def _decode_command(folded: Folded, body: Any) -> Command:
    if not isinstance(body, dict) or not isinstance(body.get("type"), str):
        raise ApiError(422, "invalid_command", "The command must be an object with a string 'type'.")
    try:
        command: Command = msgspec.convert(body, folded.table.command_type)
    except msgspec.ValidationError as exc:
        message = str(exc)
        if "Invalid value" in message and "$.type" in message:
            raise ApiError(
                422, "unknown_command", f"{body['type']!r} is not a command of {folded.table.name}."
            ) from None
        raise ApiError(422, "invalid_command", f"The command is malformed: {message}.") from None
    return command


def _secret_material(practice_seed: Any) -> tuple[bytes, bytes]:
    if practice_seed is None:
        return secrets.token_bytes(32), secrets.token_bytes(32)
    if not isinstance(practice_seed, str) or len(practice_seed) != 64:
        raise ApiError(422, "invalid_options", "The option 'seed' must be 64 hexadecimal characters.")
    try:
        seed = bytes.fromhex(practice_seed)
    except ValueError:
        raise ApiError(
            422, "invalid_options", "The option 'seed' must be 64 hexadecimal characters."
        ) from None
    return seed, seed


def _version_conflict(current: int) -> ApiError:
    return ApiError(
        409,
        "version_conflict",
        f"The game is at version {current}, not the expected one.",
        current_version=current,
    )


def _contention() -> ApiError:
    return ApiError(409, "version_conflict", "The game changed too often to apply the command; try again.")
