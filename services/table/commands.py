"""The write side: create a table, take a seat, send a command. Load the folded table, let the rules
decide, append atomically (the append announces itself to live streams and view caches), notify
projections. No HTTP here: the API and, later, workers (bots, turn timers) call the same methods
with typed values.

Without ``expected_version`` a lost race is retried against the newest state (the events of the
other writer are folded in and the rules decide again); with it, a stale version is the caller's
409. A command id seen before (ids are scoped per seat) answers exactly as the first time and appends
nothing, even when the first send is still running: a retry refused by the state its original made
answers with the original's outcome.

The commands the system plays (timeouts, bots, expiry, leaves, reclaims, filling seats with bots)
have ids of their own (``timeout-<version>-<seat>``, ``bot-<version>-<seat>``, ...), deduplicated in
a scope no player reaches (``services.store.keys.dedup_field``), and a player's id may not begin like
one (``RESERVED_PREFIXES``: 422 ``reserved_command_id``), so an export never shows a player's command
under a system id either.

This module holds the move path, the hot one, walked once down (``GameCommands.command``: the
head, ``outcomes.decide`` for the rules, ``_append``, the hand-over), and the append every other
write uses; creating a table and joining it
are in ``services.table.seating``, the commands the system plays and the lifecycle requests in
``services.table.system_commands``, what they all share in ``services.table.outcomes``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import structlog

from domain.fairness import SecretSeeds
from domain.kernel import Event
from domain.table import Account, BotSeated, BotTookOver
from services.errors import AppError, ConflictError, InvalidError, game_not_found
from services.history.folding import Folded, StateCache, advance
from services.history.records import CommandRecord, command_fingerprint, encode_batch, stored_fingerprint
from services.store.event_store import EventStore
from services.store.idempotency import IdempotencyStore, JoinAttempt, JoinIdempotency
from services.store.operations import Handover, TimerPlan
from services.store.tokens import TokenStore
from services.table import seating, system_commands, tracing
from services.table.callers import TokenChanged, TokenCheck, verify
from services.table.lifecycle import Lifecycle
from services.table.lru import LRU
from services.table.outcomes import (
    MAX_ATTEMPTS as MAX_ATTEMPTS,
)
from services.table.outcomes import (
    CommandOutcome as CommandOutcome,
)
from services.table.outcomes import (
    contention,
    decide,
    version_conflict,
)
from services.table.outcomes import (
    fresh_salts as fresh_salts,
)
from services.table.seating import SEED_OPTION as SEED_OPTION  # the names this module had, kept
from services.table.seating import Reservation as Reservation
from services.table.seating import TableNotReplicated as TableNotReplicated
from services.table.system_commands import Decision as Decision
from services.table.system_commands import Fallback as Fallback
from services.table.system_commands import Suggest as Suggest
from services.telemetry import metrics

RESERVED_PREFIXES = (
    "timeout-",
    "bot-",
    "bots-",
    "expire-",
    "join-",
    "leave-",
    "reclaim-",
    "create",
    "close-",
    "hint-",
)
"""How the ids of the commands the system records begin; a player's command id may not (letters and
dashes only: ``/openapi.json`` puts them in a pattern as they are)."""

log = structlog.get_logger("tablestream.commands")

Notify = Callable[[str, Handover], Awaitable[None]]
"""Called after every append with the game id and what the append left to do for the projection
workers and the timer index (``services.store.queue.AppendNotifier``)."""

SEEDS_KEPT = 4096  # games whose secret seeds a process keeps (the fold cache's size)


def check_command_id(command_id: str) -> None:
    """A player's command id may not begin like the ids of the commands the system records."""
    if command_id.startswith(RESERVED_PREFIXES):
        raise InvalidError(
            "reserved_command_id",
            "Command ids beginning with "
            + ", ".join(repr(p) for p in RESERVED_PREFIXES)
            + " are kept for the commands the server plays itself; choose another id.",
        )


class GameCommands:
    """The write side. ``cache`` may be shared with the read side of the same process."""

    def __init__(
        self,
        store: EventStore,
        tokens: TokenStore,
        notify: Notify,
        cache: StateCache | None = None,
        lifecycle: Lifecycle | None = None,
        bot_pace_ms: int = 0,
        fast_path: bool = True,
    ) -> None:
        self.store = store
        self.tokens = tokens
        self.notify = notify
        self.cache = cache if cache is not None else StateCache()
        self.lifecycle = lifecycle  # timers and bots; None: neither is scheduled
        self.bot_pace_ms = bot_pace_ms  # a new table's bot pace unless its options say (the server's)
        self.fast_path = fast_path  # a command on a held head: one round trip (``command``)
        self._seeds: LRU[str, SecretSeeds] = LRU(SEEDS_KEPT)  # as many games as the fold cache holds
        self.idempotency = IdempotencyStore(store.redis)
        self.join_idempotency = JoinIdempotency(store.redis)

    async def load(self, game_id: str) -> Folded:
        """The table folded to the newest stored version; ``game_not_found`` for an unknown game."""
        folded = await self.store.load(game_id, self.cache)
        if folded is None:
            raise game_not_found(game_id)
        return folded

    async def seeds(self, game_id: str) -> SecretSeeds:
        """The game's secret seeds (and the draws derived from them so far), kept for the games
        played lately: a game dropped from memory reads its secret again."""
        seeds = self._seeds.get(game_id)
        return seeds if seeds is not None else self._kept_seeds(game_id, await self.store.secret(game_id))

    async def command(
        self,
        game_id: str,
        seat: int,
        command_id: str,
        body: Mapping[str, Any],
        expected_version: int | None,
        check: TokenCheck | None = None,
    ) -> CommandOutcome:
        """Decide and append one player command (see the module docstring for the retry rules), in one
        pass: the head, the rules, the append, the hand-over.

        The head is first the one this process holds (its fold cache and the game's seeds), the
        command appended on it in one round trip: the append script checks ``check`` (the seat was
        assumed from memory), the command id and the expected head, and arms the timer planned blind
        (it keeps a stored turn deadline as ``plan_timer`` would). When that head was behind (the
        append found another, or the rules or the expected version refused the command: a newer head
        may answer otherwise; nothing was written), the head is loaded with the command id's record,
        the timer, the token's role and, when not held, the seeds, in one round trip
        (``command_load``), and the command decided again on it."""
        started = time.perf_counter()
        outcome_name = "rejected"
        game = "other"  # until the head is known
        path = ""  # which head the command was decided on: fast (held), fallback (held, then loaded), load
        try:
            check_command_id(command_id)
            fingerprint = command_fingerprint(seat, {"command": body, "expected_version": expected_version})
            folded = self.cache.get(game_id) if self.fast_path else None
            seeds = self._seeds.get(game_id)
            held = folded is not None and seeds is not None
            path = "fast" if held else "load"
            timer: dict[str, str] | None = None
            for _ in range(MAX_ATTEMPTS + held):
                if not held:
                    load = await self.store.command_load(
                        game_id, seat, command_id, self.cache, check.digest if check else None, seeds is None
                    )
                    verify(check, load.token_role)
                    if load.folded is not None:
                        game = load.folded.table.name
                    if load.record is not None:
                        outcome_name = "dup"
                        return await self._replayed(
                            game_id, load.record, fingerprint, (seat, command_id, False)
                        )
                    if load.folded is None:
                        raise game_not_found(game_id)
                    folded, timer = load.folded, load.timer
                    seeds = seeds or self._kept_seeds(game_id, load.secret)
                assert folded is not None and seeds is not None
                game = folded.table.name
                try:
                    decided = decide(folded, seat, command_id, body, expected_version, seeds)
                except AppError as refused:
                    if held:  # the held head may be behind: load it and decide again
                        held, path = False, "fallback"
                        continue
                    outcome_name = "conflict" if refused.code == "version_conflict" else outcome_name
                    raise
                outcome = await self._append(
                    folded,
                    decided.record,
                    decided.events,
                    seat,
                    fingerprint,
                    marked=self.store.append_marks if held else True,  # command_load marked it
                    timer=timer,
                    check=check if held else None,
                    blind=held,
                )
                if isinstance(outcome, CommandOutcome):
                    outcome_name = "dup" if outcome.duplicate else "ok"
                    return outcome
                if expected_version is not None and not held:
                    outcome_name = "conflict"
                    raise version_conflict(outcome)
                held, path = False, "fallback" if held else path
            outcome_name = "conflict"
            raise contention()
        except TokenChanged:
            outcome_name = "token_changed"
            raise
        finally:
            if path:
                metrics.command_path(path)
            metrics.command(game, outcome_name)
            # on the request's one log line (services.api.request_log), not a line of its own
            structlog.contextvars.bind_contextvars(
                game_id=game_id,
                command_id=command_id,
                seat=seat,
                outcome=outcome_name,
                command_ms=round((time.perf_counter() - started) * 1000, 3),
            )

    def _kept_seeds(self, game_id: str, secret: Mapping[str, str] | None) -> SecretSeeds:
        """The game's secret seeds from its stored ``secret``, kept for the games played lately."""
        if secret is None:
            raise game_not_found(game_id)
        seeds = SecretSeeds(bytes.fromhex(secret["root"]), bytes.fromhex(secret["master"]))
        self._seeds.put(game_id, seeds)
        return seeds

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
    ) -> CommandOutcome | int:
        """Append a decided batch. Returns the outcome, or the newer head version after a lost race.
        The append arms the game's timer for the new head in the same atomic step, planned from
        ``timer`` (the game's timer read with the state decided on; ``None``: read now; ``blind``:
        not read, the script keeps what the stored timer says to keep). ``system``: a command the
        system plays (its id in the system's own scope). ``check``: an identity assumed from memory,
        verified by the append script first (``TokenChanged``: nothing was written)."""
        entries = encode_batch(folded.version + 1, folded.hash, record, events, fresh_salts(len(events)))
        new = advance(folded.game_id, folded, entries)
        if blind:
            plan = self.lifecycle.blind_timer_plan(new) if self.lifecycle is not None else None
        else:
            plan = await self._timer_plan(new, timer, keep_deadline)
        with tracing.span("store.append", **{tracing.GAME_ID: folded.game_id}) as span:
            result = await self.store.append(
                folded.game_id,
                folded.version,
                record.id,
                fingerprint or record.id,
                seat,
                entries,
                marked,
                plan,
                system,
                (check.digest, check.role) if check is not None else None,
            )
            if span is not None:
                span.set_attribute("tablestream.append.status", result.status)
                span.set_attribute(tracing.VERSION, result.last if result.status == "ok" else folded.version)
        if result.status == "token":
            assert check is not None
            raise TokenChanged(check)
        if result.status == "ok":
            self.cache.put(new)
            for event in events:
                if isinstance(event, BotTookOver):
                    metrics.takeover(folded.table.name, event.reason)
                elif isinstance(event, BotSeated):  # the host gave the seat to a bot (domain.table)
                    metrics.takeover(folded.table.name, "host")
            await self._after(new, armed=True)  # bots; the timer was armed with the batch
            await self._notify(folded.game_id, result.handover())
            return CommandOutcome(
                folded.game_id,
                folded.table,
                result.first,
                result.last,
                list(zip(range(result.first, result.last + 1), events, strict=True)),
                entries[-1].hash,
                new.state.status == "finished",
            )
        if result.status == "dup":  # the append script waited for the replicas already
            assert result.fingerprint is not None
            entry = (result.fingerprint, result.first, result.last)
            return await self._replayed(folded.game_id, entry, fingerprint or record.id)
        return result.head

    async def _timer_plan(
        self, folded: Folded, timer: dict[str, str] | None, keep_deadline: bool = False
    ) -> TimerPlan | None:
        """The timer the append of ``folded``'s batch arms (``None``: the timer is left alone)."""
        if self.lifecycle is None or folded.state.timers is None:
            return None
        if timer is None:
            timer = await self.store.read_timer(folded.game_id)
        return self.lifecycle.timer_plan(timer, folded, keep_deadline)

    async def _notify(self, game_id: str, handover: Handover) -> None:
        """Tell projections and index the armed timer (the append woke live streams itself); the
        events are already stored, so a failed notification must not fail the command: the sweeper
        finds any game whose projection lags, and its projection indexes the timer
        (``ops.after_projection``)."""
        try:
            await self.notify(game_id, handover)
        except Exception:
            log.warning("notify_failed", game_id=game_id, exc_info=True)

    async def _after(self, folded: Folded, armed: bool) -> None:
        """Queue bot moves, and arm the timer unless the append did (``armed``); like a notification,
        a failure here must not fail the stored command (the batch is in the stream; the projector
        then leaves the game marked dirty and the sweeper runs this again:
        ``services.table.lifecycle.lifecycle_behind``)."""
        if self.lifecycle is None:
            return
        try:
            await self.lifecycle.after_append(folded, armed=armed)
        except Exception:
            log.warning("lifecycle_failed", game_id=folded.game_id, exc_info=True)

    async def _replay(
        self,
        game_id: str,
        seat: int | None,
        command_id: str,
        fingerprint: str,
        system: bool = False,
        confirmed: bool = False,
    ) -> CommandOutcome | None:
        """The original answer of a command id this seat (``system``: the system for this seat)
        already used, or ``None`` for a new one. ``confirmed``: the replicas acknowledged the
        record already (a duplicate the append script found and waited for)."""
        entry = await self.store.command_entry(game_id, command_id, seat=seat, system=system)
        if entry is None:
            return None
        return await self._replayed(
            game_id, entry, fingerprint, None if confirmed else (seat, command_id, system)
        )

    async def _replayed(
        self,
        game_id: str,
        entry: tuple[str, int, int],
        fingerprint: str,
        confirm: tuple[int | None, str, bool] | None = None,
    ) -> CommandOutcome:
        """The original answer of a recorded command (``command_id_reused`` for another body).
        ``confirm`` (seat, command id, system): with replica acks, the answer waits until the
        replicas have the record, as the first try's did (503 ``not_replicated`` otherwise)."""
        recorded, first, last = entry  # the fingerprint as the record keeps it (``stored_fingerprint``)
        if recorded != stored_fingerprint(fingerprint):
            raise ConflictError(
                "command_id_reused", "This command id was already used for a different command."
            )
        batch = await self.store.recorded(game_id, entry, self.cache, confirm)
        if batch is None:
            raise game_not_found(game_id)
        return CommandOutcome(
            game_id,
            batch.folded.table,
            first,
            last,
            batch.events,
            batch.hash,
            batch.folded.state.status == "finished",
            duplicate=True,
        )

    # -- creating a table and taking a seat (``services.table.seating``) -----------------------

    async def create(
        self,
        game: str,
        players: int,
        options: Mapping[str, Any],
        idempotency_key: str | None = None,
        game_id: str | None = None,
        seats: Sequence[Reservation] = (),
        bots: bool = False,
    ) -> tuple[str, str]:
        """A new table; returns its id and the host's token (``seating.create``)."""
        return await seating.create(self, game, players, options, idempotency_key, game_id, seats, bots)

    async def join(
        self,
        game_id: str,
        name: str,
        client_seed: str = "",
        account: Account | None = None,
        idempotency_key: str | None = None,
        *,
        token: str | None = None,
        attempt: JoinAttempt | None = None,
    ) -> tuple[int, str]:
        """Seat a player at the next free seat; returns the seat and its token (``seating.join``)."""
        return await seating.join(
            self, game_id, name, client_seed, account, idempotency_key, token=token, attempt=attempt
        )

    # -- the online lifecycle (``services.table.system_commands``) -----------------------------

    async def fill_with_bots(
        self, game_id: str, level: str = "normal", count: int | None = None
    ) -> list[int]:
        """Bots of ``level`` in the free seats of a waiting table; returns those seats."""
        return await system_commands.fill_with_bots(self, game_id, level, count)

    async def leave(self, game_id: str, seat: int, token: str | None = None) -> int:
        """``seat`` leaves: freed while waiting, taken over by a bot during play."""
        return await system_commands.leave(self, game_id, seat, token)

    async def unseat_account(self, game_id: str, account_id: str) -> list[int]:
        """A banned account's seats at ``game_id`` revoked and left; returns those seats."""
        return await system_commands.unseat_account(self, game_id, account_id)

    async def reclaim(self, game_id: str, seat: int) -> int:
        """``seat``'s player takes back the seat a bot took over after their timeouts."""
        return await system_commands.reclaim(self, game_id, seat)

    async def timeout(self, game_id: str, version: int, seat: int, fallback: Fallback) -> CommandOutcome:
        """``seat``'s time ran out on the game at ``version``: its default action, recorded once."""
        return await system_commands.timeout(self, game_id, version, seat, fallback)

    async def bot_command(
        self, game_id: str, version: int, seat: int, body: Mapping[str, Any]
    ) -> CommandOutcome:
        """A bot's command for ``seat`` on the game at ``version`` (id ``bot-<version>-<seat>``)."""
        return await system_commands.bot_command(self, game_id, version, seat, body)

    async def hint(self, game_id: str, seat: int, suggest: Suggest) -> CommandOutcome:
        """A hint for ``seat`` at a practice table, recorded as ``hint_given``."""
        return await system_commands.hint(self, game_id, seat, suggest)

    async def expire(self, game_id: str, version: int) -> CommandOutcome:
        """A waiting table, unchanged since ``version``, expires (id ``expire-<version>``)."""
        return await system_commands.expire(self, game_id, version)

    async def close(self, game_id: str, reason: str, operator: str) -> CommandOutcome:
        """An operator closes a waiting or running table."""
        return await system_commands.close(self, game_id, reason, operator)
