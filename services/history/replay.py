"""Re-running a recorded stream through the rules, offline: the shared core of verify and audit.

A stream is what ``services.history.records`` stores: batches of events, the first entry of each batch
carrying the command that produced it. Replaying one batch means asking the table Decider again,
with the seeds the stream itself revealed (``RevealedSeeds``), exactly as the server did:
``table.create`` for ``create``, ``table.join`` for ``join``, ``table.decide`` for ``command``.

Chance outcomes are found without knowing any game: a batch is re-run once more per round seed it
asked for, with only that seed swapped for a stand-in; the game events that come out different
are the ones drawn from that seed. Three stand-ins per seed label nearly every draw, but a small
draw (a coin flip, one seat of four) can come out the same three times by luck, so the label
never decides a verdict: with a revealed seed, any differing event fails; with an unrevealed one
(a running game's current round), which is replaced by a stand-in too so the batch still re-runs,
what depends on it is marked pending, and so is any event of that batch that differs (the
verifier, ``services.history.verify``), never compared and never shown as checked. A holder of
the game's secret (a backup's import) passes its seeds instead, and nothing is pending.

Round buckets: a batch belongs to ``rules.current_round`` of the state before it ran; ``create``
and ``join`` batches belong to bucket 0, "setup". A chance outcome belongs to the round whose seed
drew it (the deal of round 4, made in the batch that ends round 3, is round 4's), so a round's
hidden draws are never filed under an earlier, already finished round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from domain.fairness import RevealedSeeds, SeedNotRevealed, sha256
from domain.games import table_for
from domain.kernel import Command, Event, Rejected
from domain.table import (
    Account,
    GameFinished,
    SeedChainCommitted,
    SeedRevealed,
    Table,
    TableCreated,
    TableState,
    is_table_event,
)
from services.history.records import CommandRecord, Entry, StoredEvent, decode_stored, encode_event

SETUP = 0
_STAND_IN_SALTS = (b"a", b"b", b"c")
_created_decoder = msgspec.json.Decoder(TableCreated)
_encoder = msgspec.json.Encoder()


class CorruptStream(ValueError):
    """A stored stream that cannot be read back at all (no readable ``table_created``)."""


def round_label(round_number: int) -> str:
    return "setup" if round_number == SETUP else f"round {round_number}"


class ReplaySeeds:
    """A ``SeedSource`` over the revealed seeds that notes which rounds were asked for.

    An unrevealed round gets a fixed stand-in rather than an error, so a running game's batches
    still re-run; ``perturb`` swaps one round's seed for a salted stand-in to expose what it drew.
    """

    def __init__(
        self, revealed: RevealedSeeds, perturb: int | None = None, salt: bytes = b"", stand_in: bool = True
    ) -> None:
        self._revealed = revealed
        self._perturb = perturb
        self._salt = salt
        self._stand_in = stand_in
        self.requested: set[int] = set()

    @property
    def revealed(self) -> RevealedSeeds:
        return self._revealed

    @property
    def perturbed(self) -> bool:
        return self._perturb is not None

    def round_seed(self, round_number: int) -> bytes:
        self.requested.add(round_number)
        try:
            seed = self._revealed.round_seed(round_number)
        except SeedNotRevealed:
            if not self._stand_in:
                raise
            seed = sha256(b"tablestream-replay-unrevealed" + round_number.to_bytes(4, "big"))
        if round_number == self._perturb:
            seed = sha256(b"tablestream-replay-stand-in" + self._salt + seed)
        return seed

    def chain_commitment(self, chain: int) -> str:
        try:
            return self._revealed.chain_commitment(chain)
        except SeedNotRevealed:
            return ""  # never a real commitment, so a re-run relying on it cannot match the stream


@dataclass
class Decoded:
    """One stored entry, decoded as far as it goes; ``problem`` says where decoding stopped."""

    entry: Entry
    stored: StoredEvent | None = None
    event: Event | None = None
    problem: str | None = None

    @property
    def version(self) -> int:
        return self.entry.version

    @property
    def raw(self) -> bytes | None:
        return bytes(self.stored.event) if self.stored is not None else None


@dataclass
class Batch:
    """The entries one command appended, with what re-running that command produced."""

    items: list[Decoded]
    command: CommandRecord | None
    round: int = SETUP
    state_before: TableState | None = None
    rerun: list[Event] | None = None
    error: str | None = None
    chance: dict[int, int] = field(default_factory=dict)  # index in rerun -> round of the seed drawn
    pending: set[int] = field(default_factory=set)  # unrevealed rounds the re-run needed

    @property
    def first_version(self) -> int:
        return self.items[0].version

    def event_round(self, index: int) -> int:
        """The round an entry of this batch is filed under (see the module docstring)."""
        return self.chance.get(index, self.round)

    def is_pending(self, index: int) -> bool:
        return self.chance.get(index) in self.pending

    def matches(self, index: int) -> bool:
        """Whether the stored event at ``index`` is byte for byte what the rules produced."""
        raw = self.items[index].raw
        return self.rerun is not None and index < len(self.rerun) and raw == encode_event(self.rerun[index])


@dataclass
class Replay:
    """A whole stream replayed: its table, its batches, the seeds and commitments it published."""

    items: list[Decoded]
    table: Table | None
    created: TableCreated | None
    batches: list[Batch]
    revealed: dict[int, bytes]
    commitments: dict[int, str]
    final: TableState | None
    problem: str | None = None

    @property
    def finished(self) -> bool:
        return self.final is not None and self.final.status == "finished"

    def events(self) -> list[tuple[Decoded, Batch, int]]:
        """Every entry with its batch and index in it, in stream order."""
        return [(item, batch, i) for batch in self.batches for i, item in enumerate(batch.items)]


def decode_stream(
    entries: Sequence[Entry],
) -> tuple[Table | None, TableCreated | None, list[Decoded], str | None]:
    """Decode every entry with the table named by the first event; never raises on bad bytes."""
    items = [Decoded(entry) for entry in entries]
    for item in items:
        try:
            item.stored = decode_stored(item.entry.data)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            item.problem = f"the stored record is not readable ({exc})"
    if not items or items[0].stored is None:
        return None, None, items, "the stream does not start with a readable record"
    try:
        created = _created_decoder.decode(items[0].stored.event)
        table = table_for(created.game)
    except (msgspec.DecodeError, Rejected) as exc:
        return None, None, items, f"the first event is not a table_created of a known game ({exc})"
    decoder = msgspec.json.Decoder(table.event_type)
    for item in items:
        if item.stored is not None:
            try:
                item.event = decoder.decode(item.stored.event)
            except msgspec.DecodeError as exc:
                item.problem = f"the event is not a {table.name} event ({exc})"
    return table, created, items, None


def published_seeds(
    items: Sequence[Decoded], created: TableCreated | None
) -> tuple[dict[int, bytes], dict[int, str]]:
    """The seeds the stream revealed (first reveal per round) and the commitment of every chain."""
    revealed: dict[int, bytes] = {}
    commitments: dict[int, str] = {0: created.commitment} if created is not None else {}
    for item in items:
        event = item.event
        if isinstance(event, SeedRevealed) and event.round not in revealed:
            try:
                revealed[event.round] = bytes.fromhex(event.seed)
            except ValueError:
                continue
        elif isinstance(event, SeedChainCommitted) and event.chain not in commitments:
            commitments[event.chain] = event.commitment
    return revealed, commitments


def _gather(items: Sequence[Decoded], position: int, batch: Batch) -> int:
    """Take the records that follow a batch's first one, up to the next record with a command.

    An unreadable record joins the batch only while the re-run still expects events: once the
    batch is complete, a damaged record more likely opened the next batch (its command unreadable),
    and filing it there names the right round in the report.
    """
    expected = len(batch.rerun) if batch.rerun is not None else 0
    while position < len(items):
        item = items[position]
        if item.stored is not None and item.stored.command is not None:
            break
        if item.stored is None and len(batch.items) >= expected:
            break
        batch.items.append(item)
        position += 1
    return position


def _run(table: Table, batch: Batch, created: TableCreated | None, seeds: ReplaySeeds) -> list[Event]:
    """Ask the rules what this batch's command produces, exactly as the server asked them."""
    record = batch.command
    if record is None:
        raise ValueError("the batch has no command record")
    body, state = record.body, batch.state_before
    if record.kind == "create":
        if state is not None or created is None:
            raise ValueError("a create after the table already exists")
        options = body.get("options")
        if not isinstance(options, dict):
            raise ValueError("the create record has no options object")
        if "seed" in options:
            raise ValueError("the practice seed is stored in the stream; it must never be")
        if body.get("game") != created.game:
            raise ValueError(f"the create asked for {body.get('game')!r}, the table is {created.game!r}")
        timers = body.get("table")
        if timers is not None and not isinstance(timers, dict):
            raise ValueError("the create record's table options are not an object")
        return table.create(
            created.game_id, body.get("players"), options, created.commitment, created.practice, timers
        )
    if state is None:
        raise ValueError("a request before the table was created")
    if record.kind == "join":
        name, client_seed = body.get("name"), body.get("client_seed")
        if not isinstance(name, str) or not isinstance(client_seed, str):
            raise ValueError("the join record lacks a name or client seed")
        return table.join(state, name, client_seed, seeds, _account_of(body))
    if record.kind == "bots":
        count = body.get("count")
        if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
            raise ValueError("the bots record's count is not a whole number")
        return table.fill_with_bots(state, seeds, str(body.get("level") or "normal"), count)
    if record.kind == "expire":
        return table.expire(state)
    if record.kind == "close":
        reason, operator = body.get("reason"), body.get("operator")
        if (
            not isinstance(reason, str)
            or not isinstance(operator, str)
            or set(body) != {"reason", "operator"}
        ):
            raise ValueError("the close record must hold exactly a reason and an operator")
        return table.close(state, reason, operator, seeds)
    if record.seat is None:
        raise ValueError("a command without an acting seat")
    if record.kind == "leave":
        return table.leave(state, record.seat)
    if record.kind == "reclaim":
        if body:
            raise ValueError("a reclaim record's body must be empty")
        return table.reclaim(state, record.seat)
    if record.kind == "hint":  # the suggestion is the server's (a secret-keyed bot): its legality is checked
        if set(body) != {"command", "reason"} or not isinstance(body["command"], dict):
            raise ValueError("a hint record must hold exactly the suggested command and its reason")
        reason = body["reason"]
        if reason is not None and not isinstance(reason, dict):
            raise ValueError("a hint's reason is an object or null")
        suggested = msgspec.convert(body["command"], table.command_type)
        return table.hint(state, record.seat, suggested, reason)
    command = msgspec.convert(body, table.command_type)
    if _encoder.encode(msgspec.to_builtins(command)) != _encoder.encode(body):
        raise ValueError("the command body is not as the server writes it")
    if record.kind == "bot":
        return table.bot_decide(state, command, record.seat, seeds)
    if record.kind == "timeout":
        _check_default(table, state, record.seat, command, seeds)
        return table.timeout(state, record.seat, command, seeds)
    return table.decide(state, command, record.seat, seeds)


def _account_of(body: dict[str, Any]) -> Account | None:
    """The account a join claimed the seat for (recorded only by joins with an account)."""
    if "account_id" not in body:
        return None
    account_id, account_name = body.get("account_id"), body.get("account_name")
    if not isinstance(account_id, str) or not isinstance(account_name, str):
        raise ValueError("the join record names an account without its id and name")
    return Account(id=account_id, name=account_name)


def _check_default(table: Table, state: TableState, seat: int, command: Command, seeds: ReplaySeeds) -> None:
    """Where the rules name a default, a timeout must have played exactly it. Checked with revealed
    seeds only: a stand-in seed (a sealed round, or the chance search's swap) proves nothing."""
    if seeds.perturbed:
        return
    try:
        default = table.default_command(state, seat, ReplaySeeds(seeds.revealed, stand_in=False))
    except SeedNotRevealed:
        return
    if default is not None and _encoder.encode(default) != _encoder.encode(command):
        raise ValueError(
            f"the timeout played {msgspec.to_builtins(command)}, not the default "
            f"{msgspec.to_builtins(default)} the rules name"
        )


def _attempt(
    table: Table, batch: Batch, created: TableCreated | None, seeds: ReplaySeeds
) -> list[Event] | str:
    try:
        return _run(table, batch, created, seeds)
    except Rejected as rejected:
        return f"the rules refuse it ({rejected.code}: {rejected.message})"
    except (ValueError, TypeError, KeyError, AttributeError, msgspec.ValidationError) as exc:
        return f"it cannot be re-run: {exc}"


def _rerun(table: Table, batch: Batch, created: TableCreated | None, revealed: RevealedSeeds) -> None:
    """Fill ``rerun``/``error``, then find the chance outcomes by swapping one seed at a time."""
    seeds = ReplaySeeds(revealed)
    outcome = _attempt(table, batch, created, seeds)
    if isinstance(outcome, str):
        batch.error = outcome
        return
    batch.rerun = outcome
    batch.pending = {r for r in seeds.requested if _unrevealed(revealed, r)}
    plain = [encode_event(event) for event in outcome]
    for round_number in sorted(seeds.requested):
        for salt in _STAND_IN_SALTS:
            other = _attempt(table, batch, created, ReplaySeeds(revealed, round_number, salt))
            alt = [] if isinstance(other, str) else [encode_event(event) for event in other]
            for index, event in enumerate(outcome):
                if is_table_event(event):
                    continue
                if index >= len(alt) or alt[index] != plain[index]:
                    batch.chance[index] = max(batch.chance.get(index, 0), round_number)


def _unrevealed(revealed: RevealedSeeds, round_number: int) -> bool:
    try:
        revealed.round_seed(round_number)
    except SeedNotRevealed:
        return True
    return False


def _advance(table: Table, state: TableState | None, batch: Batch) -> TableState | None:
    """Fold the batch as stored (the history everyone saw); fall back on the re-run if it cannot be."""
    stored = [item.event for item in batch.items]
    candidates: list[Sequence[Event | None]] = [stored]
    if batch.rerun is not None:
        candidates.append(batch.rerun)
    for events in candidates:
        if any(event is None for event in events):
            continue
        try:
            return table.fold(state, [event for event in events if event is not None])
        except (
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            AttributeError,
            AssertionError,
            msgspec.ValidationError,
        ):
            continue
    return None


def replay(entries: Sequence[Entry], later_seeds: Mapping[int, bytes] | None = None) -> Replay:
    """Decode and re-run a whole stream; pure, tolerant of any tampering (it reports, never raises).

    ``later_seeds``: seeds a cut stream (a dispute bundle's export, ``services.history.cut``) does
    not reveal itself but the rest of the game did, so that the draws made before the cut from a
    later round's seed (the next round's deal) are re-derived too. They draw, but ``revealed``
    stays the stream's own; the caller checks them against their chains' commitments."""
    table, created, items, problem = decode_stream(entries)
    revealed, commitments = published_seeds(items, created)
    result = Replay(items, table, created, [], revealed, commitments, None, problem)
    if table is None:
        result.batches = [Batch(items=list(items), command=None, error=problem)] if items else []
        return result
    drawing = {**(later_seeds or {}), **revealed}
    seeds = RevealedSeeds(drawing, commitments)
    state: TableState | None = None
    lost_at: int | None = None
    last_round = SETUP
    position = 0
    while position < len(items):
        first = items[position]
        batch = Batch(items=[first], command=first.stored.command if first.stored is not None else None)
        kind = batch.command.kind if batch.command is not None else None
        if state is not None and state.status != "waiting" and kind not in ("create", "join"):
            last_round = table.rules.current_round(state.game_state)
        batch.round = SETUP if kind in ("create", "join") else last_round
        if lost_at is None:
            batch.state_before = state
            _rerun(table, batch, created, seeds)
        else:
            batch.error = f"not re-run: the table state is unknown since version {lost_at}"
        position = _gather(items, position + 1, batch)
        result.batches.append(batch)
        if lost_at is None:
            state = _advance(table, state, batch)
            if state is None:
                lost_at = batch.first_version
    result.final = state
    return result


def final_result(replay_: Replay) -> GameFinished | None:
    """The stream's ``game_finished`` event, if any."""
    for item in reversed(replay_.items):
        if isinstance(item.event, GameFinished):
            return item.event
    return None
