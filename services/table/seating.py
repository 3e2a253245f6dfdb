"""Creating a table and taking a seat at it: the part of the write side (``GameCommands.create``,
``GameCommands.join``) that makes a table's secret and its first records, and seats players, with or
without an ``Idempotency-Key``. Each function takes the ``GameCommands`` it serves (typed as
``outcomes.WriteSide``): its store, tokens, idempotency records, and its append, the same one the
move path uses.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Event, Rejected
from domain.table import TABLE_OPTIONS, Account, table_timers
from services.errors import ConflictError, InvalidError, from_rejection
from services.history.folding import Folded, advance
from services.history.records import GENESIS_HASH, CommandRecord, Entry, command_fingerprint, encode_batch
from services.store.connection import NotReplicated
from services.store.idempotency import Claim, JoinAttempt
from services.store.operations import Handover
from services.table.invitations import INVITE_FIELD, new_invite_code
from services.table.outcomes import MAX_ATTEMPTS, CommandOutcome, WriteSide, contention, fresh_salts
from services.table.system_commands import bots_record

SEED_OPTION = "seed"

log = structlog.get_logger("tablestream.commands")


class TableNotReplicated(NotReplicated):
    """A table created on the primary but not confirmed on the replicas in time (503
    ``not_replicated``): its id and host token, which a retry with the same Idempotency-Key gets."""

    def __init__(self, message: str, game_id: str, host_token: str) -> None:
        super().__init__(message)
        self.game_id = game_id
        self.host_token = host_token


@dataclass(frozen=True)
class Reservation:
    """A seat taken in its table's create write (``GameCommands.create``): quick play's match seats
    its players so, with the seat tokens the match chose for them."""

    name: str
    client_seed: str
    account: Account | None
    token: str


async def create(
    commands: WriteSide,
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
        return await _create(commands, game, players, options, game_id, seats, bots)
    fingerprint = command_fingerprint(None, {"game": game, "players": players, "options": options})
    claim = await commands.idempotency.claim(idempotency_key, fingerprint)
    if claim.state == "done":
        await commands.store.confirm_table(claim.game_id)  # as the first answer: once the replicas have it
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
        game_id, host_token = await _create(commands, game, players, options, game_id)
    except TableNotReplicated as written:  # the table exists: a retry with the key answers with it
        await commands.idempotency.finish(idempotency_key, fingerprint, written.game_id, written.host_token)
        raise
    except BaseException:
        await commands.idempotency.release(idempotency_key)
        raise
    await commands.idempotency.finish(idempotency_key, fingerprint, game_id, host_token)
    return game_id, host_token


async def _create(
    commands: WriteSide,
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
        timers = table_timers(online, practice_seed is not None, commands.bot_pace_ms)
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
        entries += await _seated_at_creation(commands, advance(game_id, None, entries), seeds, seats, bots)
    secret = {"root": root.hex(), "master": master.hex()}
    if timers.get("private"):  # the invite link's code, kept with the seeds (services.table.invitations)
        secret[INVITE_FIELD] = new_invite_code()
    unconfirmed: NotReplicated | None = None
    try:
        created = await commands.store.create(game_id, secret, entries[0], entries[1:])
    except NotReplicated as error:  # written on the primary: set up as usual, then answer 503
        unconfirmed, created = error, True
    if not created and chosen_id is not None:  # made before (a re-run): nothing more to do
        log.info("table_created", game_id=game_id, game=game, players=players, outcome="dup")
        return game_id, ""
    host_token = await commands.tokens.issue(game_id, "host")
    # the create script arms no timer: the lifecycle arms it, before the table is announced
    await commands._after(advance(game_id, None, entries), armed=False)
    await commands._notify(game_id, Handover(poke=created))
    if unconfirmed is not None:
        raise TableNotReplicated(str(unconfirmed), game_id, host_token) from unconfirmed
    log.info("table_created", game_id=game_id, game=game, players=players, outcome="ok")
    return game_id, host_token


async def _seated_at_creation(
    commands: WriteSide, folded: Folded, seeds: SecretSeeds, seats: Sequence[Reservation], bots: bool
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
            await commands.tokens.bind(folded.game_id, reserved.token, str(seat))
            body = join_body(reserved.name, reserved.client_seed, reserved.account)
            folded = write(
                CommandRecord(id=f"join-{seat}-{secrets.token_hex(4)}", kind="join", body=body), events
            )
        if bots and folded.state.status == "waiting" and folded.state.free_seats():
            write(bots_record("normal", None), folded.table.fill_with_bots(folded.state, seeds))
    except Rejected as rejected:
        raise from_rejection(rejected) from None
    return entries


async def join(
    commands: WriteSide,
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
        return await _join_once(commands, game_id, name, client_seed, account, idempotency_key)
    seeds = await commands.seeds(game_id)
    token = attempt.token if attempt is not None else (token or secrets.token_urlsafe(24))
    body = join_body(name, client_seed, account)
    for _ in range(MAX_ATTEMPTS):
        folded = await commands.load(game_id)
        try:
            events = folded.table.join(folded.state, name, client_seed, seeds, account)
        except Rejected as rejected:
            raise from_rejection(rejected) from None
        seat = folded.state.free_seats()[0]
        await commands.tokens.bind(game_id, token, str(seat))
        if attempt is not None:
            await attempt.note(seat)
        # A fresh id per attempt: two players racing for one seat must conflict, not dedup (an
        # idempotent join's id is its key's: it holds the key's lock, so it races nobody with it).
        record = CommandRecord(
            id=attempt.record_id if attempt is not None else f"join-{seat}-{secrets.token_hex(4)}",
            kind="join",
            body=body,
        )
        outcome = await commands._append(folded, record, events, seat=None)
        if isinstance(outcome, CommandOutcome):
            log.info("player_joined", game_id=game_id, seat=seat, outcome="ok")
            return seat, token
    raise contention()


async def _join_once(
    commands: WriteSide, game_id: str, name: str, client_seed: str, account: Account | None, key: str
) -> tuple[int, str]:
    """A join with an ``Idempotency-Key`` (``services.store.idempotency``): the same key and body
    answer with the seat and token of the first try that appended its join, waiting (durable
    mode) for the replicas to have it; another body is a 409 ``idempotency_key_reused``, a
    request with the key still running a 409 ``idempotency_key_in_use``."""
    body = {"game_id": game_id, "name": name, "client_seed": client_seed}
    fingerprint = command_fingerprint(None, body | {"account_id": account.id if account else ""})
    begun = await commands.join_idempotency.begin(key, fingerprint, secrets.token_urlsafe(24))
    if isinstance(begun, Claim):
        if begun.state == "mismatch":
            raise ConflictError(
                "idempotency_key_reused", "This Idempotency-Key was already used with a different body."
            )
        raise ConflictError(
            "idempotency_key_in_use", "A request with this Idempotency-Key is still running; try again."
        )
    try:
        if begun.seat is not None and await commands.store.command_entry(game_id, begun.record_id, seat=None):
            await commands.store.confirm_record(game_id, begun.record_id, seat=None)
            log.info("player_joined", game_id=game_id, seat=begun.seat, outcome="dup")
            return begun.seat, begun.token
        return await join(commands, game_id, name, client_seed, account, attempt=begun)
    finally:
        await commands.join_idempotency.end(key)


def join_body(name: str, client_seed: str, account: Account | None) -> dict[str, Any]:
    """A join record's body: the name and client seed, and the account a seat is claimed for."""
    body: dict[str, Any] = {"name": name, "client_seed": client_seed}
    if account is not None:
        body |= {"account_id": account.id, "account_name": account.name}
    return body


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
