"""Games recorded in memory exactly as the server stores them, for the export/verify/audit tests.

``RecordedGame`` is a ``tests.support.play.Game`` that also appends every accepted request as one
batch through ``records.encode_batch``, with the same ``CommandRecord`` the command handler
writes: ``create`` (options minus the practice ``seed``), ``join``, ``command`` (the command as
JSON builtins). ``play_random`` drives it unchanged, since it only calls ``act``.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from hypothesis import assume
from hypothesis import strategies as st

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Command, Event, Rejected
from services.history.records import (
    GENESIS_HASH,
    CommandRecord,
    Entry,
    StoredEvent,
    chain_hash,
    decode_stored,
    encode_batch,
)
from tests.support.play import Game, play_random, seeds_from


@dataclass
class RecordedGame(Game):
    """A game in memory plus its stored stream; ``receipts`` are (version, hash) per request."""

    entries: list[Entry] = field(default_factory=list)
    receipts: list[tuple[int, str]] = field(default_factory=list)
    salted: bool = True  # False: stored format 1, as written before salts

    def salts(self, first_version: int, count: int) -> list[str | None]:
        """Replayable stand-ins for the server's random salts (``None`` in format 1)."""
        if not self.salted:
            return [None] * count
        return [test_salt(f"{self.table.name}-{v}") for v in range(first_version, first_version + count)]

    def record(self, record: CommandRecord, events: list[Event]) -> list[Event]:
        prev = self.entries[-1].hash if self.entries else GENESIS_HASH
        first = len(self.entries) + 1
        batch = encode_batch(first, prev, record, events, self.salts(first, len(events)))
        self.entries.extend(batch)
        self.receipts.append((batch[-1].version, batch[-1].hash))
        return self.apply(events)

    def act(self, seat: int, command: Command | dict[str, Any]) -> list[Event]:
        if isinstance(command, dict):
            command = msgspec.convert(command, self.table.command_type)
        events = self.table.decide(self.state, command, seat, self.seeds)
        record = CommandRecord(
            id=f"cmd-{len(self.receipts)}", kind="command", seat=seat, body=msgspec.to_builtins(command)
        )
        return self.record(record, events)


def test_salt(label: str) -> str:
    """A fixed, well-formed salt (32 hex digits) for a label."""
    return hashlib.sha256(f"test-salt-{label}".encode()).hexdigest()[:32]


def new_recorded_game(
    game: str,
    players: int,
    options: dict[str, Any] | None = None,
    seed: int | str | bytes = 0,
    client_seeds: Sequence[str] | None = None,
    game_id: str | None = None,
    salted: bool = True,
) -> RecordedGame:
    """Create and fill a table as the server does; option ``seed`` (64 hex) makes a practice table."""
    table = table_for(game)
    options = dict(options or {})
    practice_seed = options.pop("seed", None)
    if practice_seed is not None:
        secret = bytes.fromhex(practice_seed)
        seeds = SecretSeeds(secret, secret)
    else:
        seeds = seeds_from(seed)
    game_id = game_id or f"test-{game}-{seed}"
    created = table.create(game_id, players, options, seeds.chain_commitment(0), practice_seed is not None)
    state = table.fold(None, created)
    assert state is not None
    g = RecordedGame(table=table, seeds=seeds, state=state, salted=salted)
    body = {"game": game, "players": players, "options": options}
    g.record(CommandRecord(id="create", kind="create", body=body), created)
    for seat in range(players):
        client_seed = client_seeds[seat] if client_seeds else f"cs{seat}"
        events = table.join(g.state, f"P{seat}", client_seed, seeds)
        g.record(
            CommandRecord(
                id=f"join-{seat}", kind="join", body={"name": f"P{seat}", "client_seed": client_seed}
            ),
            events,
        )
    return g


def recorded_random_game(
    game: str, players: int, options: dict[str, Any] | None = None, seed: int = 0
) -> RecordedGame:
    """A whole random game, recorded: the streams the random suites would leave in Redis."""
    g = new_recorded_game(game, players, options, seed=seed)
    play_random(g, random.Random(seed))
    return g


def rewrite(
    entries: Sequence[Entry], change: Callable[[list[tuple[StoredEvent, Any]]], list[tuple[StoredEvent, Any]]]
) -> list[Entry]:
    """A consistent rewrite, as an attacker holding the database would do it.

    ``change`` edits the list of (stored record, event as builtins); every version, command record
    and hash is then recomputed so that the hash chain is intact again.
    """
    decoded = [
        (stored, msgspec.json.decode(stored.event))
        for stored in map(decode_stored, (e.data for e in entries))
    ]
    changed = change(decoded)
    out: list[Entry] = []
    prev = GENESIS_HASH
    for version, (stored, event) in enumerate(changed, start=1):
        fresh = msgspec.structs.replace(
            stored, version=version, event=msgspec.Raw(msgspec.json.encode(event))
        )
        data = msgspec.json.encode(fresh)
        prev = chain_hash(prev, data)
        out.append(Entry(version, data, prev))
    return out


def _value_strategy(kind: msgspec.inspect.Type, default: Any) -> st.SearchStrategy[Any]:
    """Values of one option field: every choice of a bool or Literal, a few small numbers for ints
    (small, so that score and round limits keep random games short), ``None`` where allowed."""
    if isinstance(kind, msgspec.inspect.BoolType):
        return st.booleans()
    if isinstance(kind, msgspec.inspect.LiteralType):
        return st.sampled_from(list(kind.values))
    if isinstance(kind, msgspec.inspect.IntType):
        low = kind.ge if kind.ge is not None else 1
        candidates = {low, low + 1, low + 2} | ({default} if isinstance(default, int) else set())
        return st.sampled_from(sorted(candidates))
    if isinstance(kind, msgspec.inspect.UnionType):
        return st.one_of(*(_value_strategy(member, default) for member in kind.types))
    if isinstance(kind, msgspec.inspect.NoneType):
        return st.none()
    return st.just(default)


@st.composite
def table_setups(draw: st.DrawFn, game: str) -> tuple[int, dict[str, Any]]:
    """A player count and options the game accepts, drawn from the game's own options type, so the
    suites cover every title without knowing its options."""
    table = table_for(game)
    info = msgspec.inspect.type_info(table.rules.options_type)
    assert isinstance(info, msgspec.inspect.StructType)
    options = {
        f.name: draw(_value_strategy(f.type, f.default))
        for f in info.fields
        if f.default is not msgspec.NODEFAULT
    }
    counts = [n for n in range(1, 13) if _accepts(table, n, options)]
    assume(counts)
    return draw(st.sampled_from(counts)), options


def _accepts(table: Any, players: int, options: dict[str, Any]) -> bool:
    try:
        table.create("probe", players, options, "00" * 32, practice=False)
    except Rejected:
        return False
    return True


def altered(event: dict[str, Any], players: int) -> dict[str, Any]:
    """A plausible forgery of a recorded outcome: swap two different items of its first list field
    (two hands, two discs), else shift its first number."""
    out = dict(event)
    for key, value in event.items():
        if isinstance(value, list):
            for i in range(len(value)):
                for j in range(i + 1, len(value)):
                    if value[i] != value[j]:
                        swapped = list(value)
                        swapped[i], swapped[j] = value[j], value[i]
                        out[key] = swapped
                        return out
    for key, value in event.items():
        if isinstance(value, int) and not isinstance(value, bool) and key != "round":
            out[key] = (value + 1) % players if value < players else value + 1
            return out
    raise AssertionError(f"nothing to alter in {event}")
