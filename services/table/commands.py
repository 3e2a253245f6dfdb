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
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import structlog

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Command, Event, Rejected
from domain.table import TABLE_OPTIONS, Account, BotSeated, BotTookOver, Table, table_timers
from services.errors import (
    AppError,
    ConflictError,
    ForbiddenError,
    InvalidError,
    from_rejection,
    game_not_found,
)
from services.history.folding import Folded, StateCache, advance, decode_events
from services.history.records import (
    GENESIS_HASH,
    CommandRecord,
    Entry,
    command_fingerprint,
    encode_batch,
    stored_fingerprint,
)
from services.store.connection import NotReplicated
from services.store.event_store import EventStore
from services.store.idempotency import Claim, IdempotencyStore, JoinAttempt, JoinIdempotency
from services.store.operations import Handover, TimerPlan
from services.store.tokens import TokenStore
from services.table import tracing
from services.table.callers import TokenChanged, TokenCheck, verify
from services.table.invitations import INVITE_FIELD, new_invite_code
from services.table.lifecycle import Lifecycle
from services.table.lru import LRU
from services.telemetry import metrics

MAX_ATTEMPTS = 25
SEED_OPTION = "seed"
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

Decision = Callable[[Folded, SecretSeeds], tuple[CommandRecord, list[Event]]]
"""How a lifecycle request decides on the newest state: its record and its events."""

Suggest = Callable[[Folded, int, SecretSeeds], Awaitable[tuple[Mapping[str, Any], dict[str, Any] | None]]]
"""A hint for a seat of a folded table: the command suggested and its reason (``{"key", "params"}``
or ``None``), keyed by the game's secret seeds (``services.table.hints``)."""

Fallback = Callable[[Folded, int, SecretSeeds], Mapping[str, Any]]
"""The seat's bot move on a folded table (its chance keyed by the game's secret seeds), for a
timeout where the rules name no default."""


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


class TableNotReplicated(NotReplicated):
    """A table created on the primary but not confirmed on the replicas in time (503
    ``not_replicated``): its id and host token, which a retry with the same Idempotency-Key gets."""

    def __init__(self, message: str, game_id: str, host_token: str) -> None:
        super().__init__(message)
        self.game_id = game_id
        self.host_token = host_token


SEEDS_KEPT = 4096  # games whose secret seeds a process keeps (the fold cache's size)


@dataclass(frozen=True)
class Reservation:
    """A seat taken in its table's create write (``GameCommands.create``): quick play's match seats
    its players so, with the seat tokens the match chose for them."""

    name: str
    client_seed: str
    account: Account | None
    token: str


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
        self.fast_path = fast_path  # a command on a cached head: one round trip (``_fast_command``)
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
        if seeds is None:
            secret = await self.store.secret(game_id)
            if secret is None:
                raise game_not_found(game_id)
            seeds = SecretSeeds(bytes.fromhex(secret["root"]), bytes.fromhex(secret["master"]))
            self._seeds.put(game_id, seeds)
        return seeds

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
        """A new table; returns its id and the host's token. With an ``idempotency_key`` (a client's
        secret), the same key and body within 24 hours answer with the same table, creating nothing;
        the same key with another body is a 409 ``idempotency_key_reused``. ``game_id`` (quick play's
        matcher, ``services.people.quickplay``): the table's id chosen beforehand; when a stream of that id
        exists already the create script writes nothing, so a re-run makes no second table.

        ``seats`` (quick play's match): players seated in the create write itself, each by a join
        record of its own after the create record, and with ``bots`` bots in the seats left (a
        ``bots`` record): the table is never seen with a free seat that someone else could take."""
        if idempotency_key is None:
            return await self._create(game, players, options, game_id, seats, bots)
        fingerprint = command_fingerprint(None, {"game": game, "players": players, "options": options})
        claim = await self.idempotency.claim(idempotency_key, fingerprint)
        if claim.state == "done":
            await self.store.confirm_table(claim.game_id)  # as the first answer: once the replicas have it
            log.info("table_created", game_id=claim.game_id, game=game, players=players, outcome="dup")
            return claim.game_id, claim.host_token
        if claim.state == "mismatch":
            raise ConflictError(
                "idempotency_key_reused", "This Idempotency-Key was already used with a different body."
            )
        if claim.state == "pending":
            raise ConflictError(
                "idempotency_key_in_use", "A request with this Idempotency-Key is still running; try again."
            )
        try:
            game_id, host_token = await self._create(game, players, options, game_id)
        except TableNotReplicated as written:  # the table exists: a retry with the key answers with it
            await self.idempotency.finish(idempotency_key, fingerprint, written.game_id, written.host_token)
            raise
        except BaseException:
            await self.idempotency.release(idempotency_key)
            raise
        await self.idempotency.finish(idempotency_key, fingerprint, game_id, host_token)
        return game_id, host_token

    async def _create(
        self,
        game: str,
        players: int,
        options: Mapping[str, Any],
        chosen_id: str | None = None,
        seats: Sequence[Reservation] = (),
        bots: bool = False,
    ) -> tuple[str, str]:
        try:
            table = table_for(game)
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        options = dict(options)
        practice_seed = options.pop(SEED_OPTION, None)
        root, master = _secret_material(practice_seed)
        seeds = SecretSeeds(root, master)
        game_id = chosen_id or secrets.token_hex(8)
        online = {key: options.pop(key) for key in TABLE_OPTIONS if key in options}
        try:
            timers = table_timers(online, practice_seed is not None, self.bot_pace_ms)
            events = table.create(
                game_id, players, options, seeds.chain_commitment(0), practice_seed is not None, timers
            )
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        record = CommandRecord(
            id="create",
            kind="create",
            body={"game": game, "players": players, "options": options, "table": timers},
        )
        entries = encode_batch(1, GENESIS_HASH, record, events, fresh_salts(len(events)))
        if seats or bots:
            entries += await self._seated_at_creation(advance(game_id, None, entries), seeds, seats, bots)
        secret = {"root": root.hex(), "master": master.hex()}
        if timers.get("private"):  # the invite link's code, kept with the seeds (services.table.invitations)
            secret[INVITE_FIELD] = new_invite_code()
        unconfirmed: NotReplicated | None = None
        try:
            created = await self.store.create(game_id, secret, entries[0], entries[1:])
        except NotReplicated as error:  # written on the primary: set up as usual, then answer 503
            unconfirmed, created = error, True
        if not created and chosen_id is not None:  # made before (a re-run): nothing more to do
            log.info("table_created", game_id=game_id, game=game, players=players, outcome="dup")
            return game_id, ""
        host_token = await self.tokens.issue(game_id, "host")
        # the create script arms no timer: the lifecycle arms it, before the table is announced
        await self._after(advance(game_id, None, entries), armed=False)
        await self._notify(game_id, Handover(poke=created))
        if unconfirmed is not None:
            raise TableNotReplicated(str(unconfirmed), game_id, host_token) from unconfirmed
        log.info("table_created", game_id=game_id, game=game, players=players, outcome="ok")
        return game_id, host_token

    async def _seated_at_creation(
        self, folded: Folded, seeds: SecretSeeds, seats: Sequence[Reservation], bots: bool
    ) -> list[Entry]:
        """The entries that seat ``seats`` (and bots in the rest) right after the create record:
        one join record per seat, as a join request writes it, its token bound beforehand."""
        entries: list[Entry] = []

        def write(record: CommandRecord, events: list[Event]) -> Folded:
            batch = encode_batch(folded.version + 1, folded.hash, record, events, fresh_salts(len(events)))
            entries.extend(batch)
            return advance(folded.game_id, folded, batch)

        try:
            for reserved in seats:
                events = folded.table.join(
                    folded.state, reserved.name, reserved.client_seed, seeds, reserved.account
                )
                seat = folded.state.free_seats()[0]
                await self.tokens.bind(folded.game_id, reserved.token, str(seat))
                body = _join_body(reserved.name, reserved.client_seed, reserved.account)
                folded = write(
                    CommandRecord(id=f"join-{seat}-{secrets.token_hex(4)}", kind="join", body=body), events
                )
            if bots and folded.state.status == "waiting" and folded.state.free_seats():
                write(_bots_record("normal", None), folded.table.fill_with_bots(folded.state, seeds))
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        return entries

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
        """Seat a player at the next free seat; returns the seat and its token. With an ``account``
        the seat is claimed for it, and the join record names the account so that a re-run of the
        stream (the verifier) claims it again; joins without one are recorded as before. ``token``:
        the seat's token chosen beforehand (quick play's matcher keeps it before joining). With an
        ``idempotency_key`` (a client's secret) a retry with the same body answers with the same
        seat and token, seating nobody again (``_join_once``)."""
        if idempotency_key is not None and attempt is None:
            return await self._join_once(game_id, name, client_seed, account, idempotency_key)
        seeds = await self.seeds(game_id)
        token = attempt.token if attempt is not None else (token or secrets.token_urlsafe(24))
        body = _join_body(name, client_seed, account)
        for _ in range(MAX_ATTEMPTS):
            folded = await self.load(game_id)
            try:
                events = folded.table.join(folded.state, name, client_seed, seeds, account)
            except Rejected as rejected:
                raise from_rejection(rejected) from None
            seat = folded.state.free_seats()[0]
            await self.tokens.bind(game_id, token, str(seat))
            if attempt is not None:
                await attempt.note(seat)
            # A fresh id per attempt: two players racing for one seat must conflict, not dedup (an
            # idempotent join's id is its key's: it holds the key's lock, so it races nobody with it).
            record = CommandRecord(
                id=attempt.record_id if attempt is not None else f"join-{seat}-{secrets.token_hex(4)}",
                kind="join",
                body=body,
            )
            outcome = await self._append(folded, record, events, seat=None)
            if isinstance(outcome, CommandOutcome):
                log.info("player_joined", game_id=game_id, seat=seat, outcome="ok")
                return seat, token
        raise _contention()

    async def _join_once(
        self, game_id: str, name: str, client_seed: str, account: Account | None, key: str
    ) -> tuple[int, str]:
        """A join with an ``Idempotency-Key`` (``services.store.idempotency``): the same key and body
        answer with the seat and token of the first try that appended its join, waiting (durable
        mode) for the replicas to have it; another body is a 409 ``idempotency_key_reused``, a
        request with the key still running a 409 ``idempotency_key_in_use``."""
        body = {"game_id": game_id, "name": name, "client_seed": client_seed}
        fingerprint = command_fingerprint(None, body | {"account_id": account.id if account else ""})
        begun = await self.join_idempotency.begin(key, fingerprint, secrets.token_urlsafe(24))
        if isinstance(begun, Claim):
            if begun.state == "mismatch":
                raise ConflictError(
                    "idempotency_key_reused", "This Idempotency-Key was already used with a different body."
                )
            raise ConflictError(
                "idempotency_key_in_use", "A request with this Idempotency-Key is still running; try again."
            )
        try:
            if begun.seat is not None and await self.store.command_entry(game_id, begun.record_id, seat=None):
                await self.store.confirm_record(game_id, begun.record_id, seat=None)
                log.info("player_joined", game_id=game_id, seat=begun.seat, outcome="dup")
                return begun.seat, begun.token
            return await self.join(game_id, name, client_seed, account, attempt=begun)
        finally:
            await self.join_idempotency.end(key)

    async def command(
        self,
        game_id: str,
        seat: int,
        command_id: str,
        body: Mapping[str, Any],
        expected_version: int | None,
        check: TokenCheck | None = None,
    ) -> CommandOutcome:
        """Decide and append one player command (see the module docstring for the retry rules).
        ``check``: the seat was assumed from memory; its token is verified before anything else."""
        started = time.perf_counter()
        outcome_name = "rejected"
        game = "other"  # until the stream is loaded
        try:
            check_command_id(command_id)
            fingerprint = command_fingerprint(seat, {"command": body, "expected_version": expected_version})
            cached = self.cache.get(game_id) if self.fast_path else None
            if cached is not None:
                game = cached.table.name
                try:
                    fast = await self._fast_command(
                        cached, seat, command_id, body, expected_version, fingerprint, check
                    )
                except TokenChanged:
                    outcome_name = "token_changed"
                    raise
                if fast is not None:
                    metrics.command_path("fast")
                    outcome_name = "dup" if fast.duplicate else "ok"
                    return fast
            metrics.command_path("fallback" if cached is not None else "load")
            token = check.digest if check is not None else None
            load = await self.store.command_load(game_id, seat, command_id, self.cache, token)  # one trip
            outcome_name = "token_changed"
            verify(check, load.token_role)
            outcome_name = "rejected"
            loaded, entry = load.folded, load.record
            if loaded is not None:
                game = loaded.table.name
            if entry is not None:
                outcome_name = "dup"
                return await self._replayed(game_id, entry, fingerprint, (seat, command_id, False))
            if loaded is None:
                raise game_not_found(game_id)
            seeds = await self.seeds(game_id)
            timer: dict[str, str] | None = load.timer  # as loaded; a retry reads it again
            for attempt in range(MAX_ATTEMPTS):
                folded = loaded if attempt == 0 else await self.load(game_id)
                timer = timer if attempt == 0 else None
                try:
                    command = _decode_command(folded, body)
                    if expected_version is not None and expected_version != folded.version:
                        outcome_name = "conflict"
                        raise _version_conflict(folded.version)
                    try:
                        events = folded.table.decide(folded.state, command, seat, seeds)
                    except Rejected as rejected:
                        raise from_rejection(rejected) from None
                except AppError:
                    # An identical retry racing its original may have loaded the state the original
                    # made (and be refused by it: "already placed"). The append script writes the
                    # dedup record in the same atomic step as the events, so if the loaded state
                    # holds them, the record is visible now: answer as the original did.
                    previous = await self._replay(game_id, seat, command_id, fingerprint)
                    if previous is not None:
                        outcome_name = "dup"
                        return previous
                    raise
                record = CommandRecord(
                    id=command_id, kind="command", seat=seat, body=msgspec.to_builtins(command)
                )
                # marked by command_load before the first try; a retry marks again (the projector
                # may have cleared the mark meanwhile)
                outcome = await self._append(
                    folded, record, events, seat, fingerprint, marked=attempt == 0, timer=timer
                )
                if isinstance(outcome, CommandOutcome):
                    outcome_name = "dup" if outcome.duplicate else "ok"
                    return outcome
                if expected_version is not None:
                    outcome_name = "conflict"
                    raise _version_conflict(outcome)
            outcome_name = "conflict"
            raise _contention()
        finally:
            metrics.command(game, outcome_name)
            # on the request's one log line (services.api.request_log), not a line of its own
            structlog.contextvars.bind_contextvars(
                game_id=game_id,
                command_id=command_id,
                seat=seat,
                outcome=outcome_name,
                command_ms=round((time.perf_counter() - started) * 1000, 3),
            )

    async def _fast_command(
        self,
        folded: Folded,
        seat: int,
        command_id: str,
        body: Mapping[str, Any],
        expected_version: int | None,
        fingerprint: str,
        check: TokenCheck | None,
    ) -> CommandOutcome | None:
        """A command decided on this process's cached fold of the game (``folded``, the head as this
        process last saw it) and appended in one round trip: the append script checks the assumed
        token's role, the seat's command id, the expected head and arms the timer (planned blind:
        the script keeps a stored turn deadline as ``plan_timer`` would). ``None`` when the slow
        path must decide: the cache was behind (the append found another head, or the cached state
        refused the command or its expected version: a newer state may answer otherwise). The slow
        path then answers exactly as it would have without this try, since nothing was written."""
        if expected_version is not None and expected_version != folded.version:
            return None
        try:
            command = _decode_command(folded, body)
            events = folded.table.decide(folded.state, command, seat, await self.seeds(folded.game_id))
        except (AppError, Rejected):
            return None
        record = CommandRecord(id=command_id, kind="command", seat=seat, body=msgspec.to_builtins(command))
        outcome = await self._append(
            folded, record, events, seat, fingerprint, marked=self.store.append_marks, check=check, blind=True
        )
        return outcome if isinstance(outcome, CommandOutcome) else None

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

    # -- the online lifecycle ------------------------------------------------------------------

    async def fill_with_bots(
        self, game_id: str, level: str = "normal", count: int | None = None
    ) -> list[int]:
        """A bot of ``level`` in each of the ``count`` lowest free seats of a waiting table, or in
        every one (the host's request); returns those seats. The record's body names a level other
        than ``normal`` (as before levels: ``{}``) and the count when one was asked."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            return _bots_record(level, count), folded.table.fill_with_bots(folded.state, seeds, level, count)

        outcome = await self._lifecycle_batch(game_id, decide, None)
        return [seat for seat, _ in _bot_seats(outcome)]

    async def leave(self, game_id: str, seat: int, token: str | None = None) -> int:
        """``seat`` leaves: freed while waiting, taken over by a bot during play; ``token`` (the
        seat's) stops working."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            events = folded.table.leave(folded.state, seat)
            record = CommandRecord(
                id=f"leave-{seat}-{secrets.token_hex(4)}", kind="leave", seat=seat, body={}
            )
            return record, events

        await self._lifecycle_batch(game_id, decide, None)
        if token is not None:
            await self.tokens.revoke(game_id, token)
        log.info("seat_left", game_id=game_id, seat=seat)
        return seat

    async def unseat_account(self, game_id: str, account_id: str) -> list[int]:
        """A banned account's seats at ``game_id``: each one's tokens stop working (no move, no
        rematch, no taking the seat back), and a seat still in the game is left: freed while the
        table waits, taken over by a bot during play. Returns those seats."""
        folded = await self.load(game_id)
        seats = [p.seat for p in folded.state.seated if p.account is not None and p.account.id == account_id]
        for seat in seats:
            await self.tokens.revoke_role(game_id, str(seat))
            if folded.state.status in ("waiting", "playing") and folded.state.holds(seat):
                with contextlib.suppress(ConflictError):  # left, or the game ended, meanwhile
                    await self.leave(game_id, seat)
        return seats

    async def reclaim(self, game_id: str, seat: int) -> int:
        """``seat``'s player takes back the seat a bot took over after their timeouts; the bot's
        pending move (queued or paced) then finds the game moved on and does nothing, and the
        append arms the turn timer for the player again."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            events = folded.table.reclaim(folded.state, seat)
            record = CommandRecord(
                id=f"reclaim-{seat}-{secrets.token_hex(4)}", kind="reclaim", seat=seat, body={}
            )
            return record, events

        await self._lifecycle_batch(game_id, decide, None)
        log.info("seat_reclaimed", game_id=game_id, seat=seat)
        return seat

    async def timeout(self, game_id: str, version: int, seat: int, fallback: Fallback) -> CommandOutcome:
        """``seat``'s time ran out on the game as it was at ``version``: its default action (the
        rules' default, else ``fallback``, the seat's bot move), recorded as a timeout. Id
        ``timeout-<version>-<seat>`` and expected version ``version``: at most once, and a command
        that got in first wins (``version_conflict``)."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            table = folded.table
            command = table.default_command(folded.state, seat, seeds)
            if command is None:
                command = _decode_command(folded, fallback(folded, seat, seeds))
            events = table.timeout(folded.state, seat, command, seeds)
            body = msgspec.to_builtins(command)
            record = CommandRecord(id=f"timeout-{version}-{seat}", kind="timeout", seat=seat, body=body)
            return record, events

        outcome = await self._lifecycle_batch(game_id, decide, version, f"timeout-{version}-{seat}", seat)
        if not outcome.duplicate:
            metrics.timeout(outcome.table.name)
        return outcome

    async def bot_command(
        self, game_id: str, version: int, seat: int, body: Mapping[str, Any]
    ) -> CommandOutcome:
        """A bot's command for ``seat`` on the game at ``version`` (id ``bot-<version>-<seat>``)."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            command = _decode_command(folded, body)
            events = folded.table.bot_decide(folded.state, command, seat, seeds)
            record = CommandRecord(
                id=f"bot-{version}-{seat}", kind="bot", seat=seat, body=msgspec.to_builtins(command)
            )
            return record, events

        outcome = await self._lifecycle_batch(game_id, decide, version, f"bot-{version}-{seat}", seat)
        if not outcome.duplicate:
            metrics.bot_move(outcome.table.name)
        return outcome

    async def hint(self, game_id: str, seat: int, suggest: Suggest) -> CommandOutcome:
        """``seat`` asks for a hint at a practice table (403 ``hints_not_allowed`` at any other):
        ``suggest`` (the ``strong`` bot, from the seat's own view; run in a worker thread by the
        caller's choice) names a legal command and maybe a reason, recorded as ``hint_given`` by the
        command ``hint-<version>-<seat>`` in the system's scope with expected version ``version``.
        Asked again while the game has not moved (the head is this seat's hint, or a concurrent
        request at the same version), the first answer comes back and nothing is computed."""
        folded = await self.load(game_id)
        if not folded.state.practice:
            raise ForbiddenError(
                "hints_not_allowed", "Hints are given at practice tables only, never at rated or public ones."
            )
        command_id = f"hint-{folded.version}-{seat}"
        for asked in (command_id, f"hint-{folded.version - 1}-{seat}"):  # this version's, or the head's own
            previous = await self._replay(game_id, seat, asked, asked, system=True)
            if previous is not None and previous.version in (folded.version, folded.version + 1):
                return previous
        try:
            folded.table.check_hint(folded.state, seat)
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        seeds = await self.seeds(game_id)
        body, reason = await suggest(folded, seat, seeds)

        def decide(now: Folded, _: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            command = _decode_command(now, body)
            events = now.table.hint(now.state, seat, command, reason)
            record_body = {"command": msgspec.to_builtins(command), "reason": reason}
            return CommandRecord(id=command_id, kind="hint", seat=seat, body=record_body), events

        return await self._lifecycle_batch(
            game_id, decide, folded.version, command_id, seat, keep_deadline=True
        )

    async def expire(self, game_id: str, version: int) -> CommandOutcome:
        """A waiting table, unchanged since ``version``, expires (id ``expire-<version>``)."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            record = CommandRecord(id=f"expire-{version}", kind="expire", body={})
            return record, folded.table.expire(folded.state)

        return await self._lifecycle_batch(game_id, decide, version, f"expire-{version}")

    async def close(self, game_id: str, reason: str, operator: str) -> CommandOutcome:
        """An operator closes a waiting or running table (``services.operating.operator``): one batch,
        ``table_closed`` and the seeds still sealed, recorded as the command ``close`` by
        ``operator``. The append clears the table's timer (no status but waiting or playing has one),
        and a bot's queued move then finds nothing to do."""

        def decide(folded: Folded, seeds: SecretSeeds) -> tuple[CommandRecord, list[Event]]:
            events = folded.table.close(folded.state, reason, operator, seeds)
            body = {"reason": reason.strip(), "operator": operator}
            record = CommandRecord(id=f"close-{folded.version}", kind="close", body=body)
            return record, events

        outcome = await self._lifecycle_batch(game_id, decide, None)
        log.info("table_closed", game_id=game_id, operator=operator)
        return outcome

    async def _lifecycle_batch(
        self,
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
            previous = await self._replay(game_id, seat, command_id, command_id, system=True)
            if previous is not None:
                return previous
        seeds = await self.seeds(game_id)
        for _ in range(MAX_ATTEMPTS):
            folded = await self.load(game_id)
            if expected_version is not None and expected_version != folded.version:
                raise _version_conflict(folded.version)
            try:
                record, events = decide(folded, seeds)
            except Rejected as rejected:
                raise from_rejection(rejected) from None
            outcome = await self._append(
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
                raise _version_conflict(outcome)
        raise _contention()

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
        if confirm is not None:
            seat, command_id, system = confirm
            await self.store.confirm_record(game_id, command_id, seat=seat, system=system)
        folded = await self.load(game_id)
        entries = await self.store.read(game_id, after=first - 1, limit=last - first + 1)
        return CommandOutcome(
            game_id,
            folded.table,
            first,
            last,
            decode_events(folded.table, entries),
            entries[-1].hash,
            folded.state.status == "finished",
            duplicate=True,
        )


def _join_body(name: str, client_seed: str, account: Account | None) -> dict[str, Any]:
    """A join record's body: the name and client seed, and the account a seat is claimed for."""
    body: dict[str, Any] = {"name": name, "client_seed": client_seed}
    if account is not None:
        body |= {"account_id": account.id, "account_name": account.name}
    return body


def _bots_record(level: str, count: int | None) -> CommandRecord:
    """A bots record: its body names a level other than ``normal`` (as before levels: ``{}``) and
    the count when one was asked."""
    body: dict[str, object] = {} if level == "normal" else {"level": level}
    if count is not None:
        body["count"] = count
    return CommandRecord(id=f"bots-{secrets.token_hex(4)}", kind="bots", body=body)


def check_command_id(command_id: str) -> None:
    """A player's command id may not begin like the ids of the commands the system records."""
    if command_id.startswith(RESERVED_PREFIXES):
        raise InvalidError(
            "reserved_command_id",
            "Command ids beginning with "
            + ", ".join(repr(p) for p in RESERVED_PREFIXES)
            + " are kept for the commands the server plays itself; choose another id.",
        )


def fresh_salts(count: int) -> list[str]:
    """One 128-bit salt per entry to store, from the CSPRNG (docs/fairness.md "Hiding")."""
    return [secrets.token_hex(16) for _ in range(count)]


def _bot_seats(outcome: CommandOutcome) -> list[tuple[int, str]]:
    return [(e.seat, e.name) for _, e in outcome.events if isinstance(e, BotSeated)]


def _decode_command(folded: Folded, body: Mapping[str, Any]) -> Command:
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


def _secret_material(practice_seed: object) -> tuple[bytes, bytes]:
    """The root and master seeds: fresh, or both the practice seed (an option, 64 hex digits)."""
    if practice_seed is None:
        return secrets.token_bytes(32), secrets.token_bytes(32)
    invalid = InvalidError("invalid_options", "The option 'seed' must be 64 hexadecimal characters.")
    if not isinstance(practice_seed, str) or len(practice_seed) != 64:
        raise invalid
    try:
        seed = bytes.fromhex(practice_seed)
    except ValueError:
        raise invalid from None
    return seed, seed


def _version_conflict(current: int) -> AppError:
    return ConflictError(
        "version_conflict",
        f"The game is at version {current}, not the expected one.",
        current_version=current,
    )


def _contention() -> AppError:
    return ConflictError("version_conflict", "The game changed too often to apply the command; try again.")
