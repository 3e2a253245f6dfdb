"""A table written into a store the way the command handler writes it, without the API: the game's
real secret, one batch per request with the command record the server writes (which the verifier
runs again), for tests that need stored games fast (thousands of versions in seconds)."""

from __future__ import annotations

import hashlib
import itertools
import random
from typing import Any

import msgspec

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Event
from domain.table import Table, TableState
from services.history.records import GENESIS_HASH, CommandRecord, encode_batch
from services.store.event_store import SyncEventStore
from services.table.commands import fresh_salts
from tests.support.play import seeds_from


class StoredTable:
    """A table created in ``store`` with the secret ``seeds_from(seed)`` derives; ``append`` writes
    each request's events as one batch and folds them."""

    def __init__(
        self,
        store: SyncEventStore,
        game_id: str,
        game: str,
        players: int,
        options: dict[str, Any],
        seed: int,
        practice: bool = False,
    ) -> None:
        self.store, self.game_id = store, game_id
        self.table: Table = table_for(game)
        self.seeds: SecretSeeds = seeds_from(seed)
        created = self.table.create(game_id, players, options, self.seeds.chain_commitment(0), practice)
        body = {"game": game, "players": players, "options": options}
        entries = encode_batch(
            1,
            GENESIS_HASH,
            CommandRecord(id="create", kind="create", body=body),
            created,
            fresh_salts(len(created)),
        )
        raw = str(seed).encode()  # the root and master ``seeds_from`` derives the seeds from
        secret = {
            "root": hashlib.sha256(b"root" + raw).hexdigest(),
            "master": hashlib.sha256(b"master" + raw).hexdigest(),
        }
        assert store.create(game_id, secret, entries[0])
        state = self.table.fold(None, created)
        assert state is not None
        self.state: TableState = state
        self.version, self._hash = 1, entries[-1].hash
        self._ids = itertools.count()

    def append(self, events: list[Event], kind: str, seat: int | None, body: dict[str, Any]) -> None:
        command_id = f"c{next(self._ids)}"
        record = CommandRecord(id=command_id, kind=kind, seat=seat, body=body)  # type: ignore[arg-type]
        batch = encode_batch(self.version + 1, self._hash, record, events, fresh_salts(len(events)))
        assert (
            self.store.append(self.game_id, self.version, command_id, command_id, seat, batch).status == "ok"
        )
        state = self.table.fold(self.state, events)
        assert state is not None
        self.state = state
        self.version, self._hash = batch[-1].version, batch[-1].hash

    def join_all(self, players: int) -> None:
        for seat in range(players):
            body = {"name": f"P{seat}", "client_seed": f"cs{seat}"}
            self.append(self.table.join(self.state, f"P{seat}", f"cs{seat}", self.seeds), "join", None, body)

    def step(self, rng: random.Random) -> None:
        """One random legal command from a random seat among those to act (decided as the bot
        decides where a bot plays the seat)."""
        seat = rng.choice(sorted(self.table.to_act(self.state)))
        command = rng.choice(self.table.legal_commands(self.state, seat))
        if seat in self.state.bots:
            events, kind = self.table.bot_decide(self.state, command, seat, self.seeds), "bot"
        else:
            events, kind = self.table.decide(self.state, command, seat, self.seeds), "command"
        self.append(events, kind, seat, msgspec.to_builtins(command))

    def leave(self, seat: int) -> None:
        """The seat's player leaves: a bot plays it on."""
        self.append(self.table.leave(self.state, seat), "leave", seat, {})

    def play(self, rng: random.Random) -> None:
        """Random steps to the game's end."""
        while self.state.status != "finished":
            self.step(rng)
