"""Drive a table Decider in memory: create, seat, act, and play random legal games.

Shared by every game's domain tests so that they read alike. Nothing here touches Redis.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any

import msgspec

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Command, Event
from domain.table import Table, TableState


@dataclass
class Game:
    """A table being played in memory: its Decider, its seeds, its state and every event so far."""

    table: Table
    seeds: SecretSeeds
    state: TableState
    events: list[Event] = field(default_factory=list)

    @property
    def rules_state(self) -> Any:
        return self.state.game_state

    def apply(self, events: list[Event]) -> list[Event]:
        for event in events:
            self.state = self.table.evolve(self.state, event)
        self.events.extend(events)
        return events

    def act(self, seat: int, command: Command | dict[str, Any]) -> list[Event]:
        """Decide and apply one command; raises ``Rejected`` exactly as the server would."""
        if isinstance(command, dict):
            command = msgspec.convert(command, self.table.command_type)
        return self.apply(self.table.decide(self.state, command, seat, self.seeds))

    def legal(self, seat: int) -> list[Command]:
        return self.table.legal_commands(self.state, seat)

    def refold(self) -> TableState:
        """The state rebuilt from the recorded events alone."""
        state = self.table.fold(None, self.events)
        assert state is not None
        return state


def seeds_from(seed: int | str | bytes) -> SecretSeeds:
    raw = seed if isinstance(seed, bytes) else str(seed).encode()
    root = hashlib.sha256(b"root" + raw).digest()
    master = hashlib.sha256(b"master" + raw).digest()
    return SecretSeeds(root, master)


def new_game(
    game: str,
    players: int,
    options: dict[str, Any] | None = None,
    seed: int | str | bytes = 0,
    client_seeds: list[str] | None = None,
    names: list[str] | None = None,
) -> Game:
    """A started table: created, every seat taken (the last join starts the game)."""
    table = table_for(game)
    seeds = seeds_from(seed)
    game_id = f"test-{game}-{seed}"
    created = table.create(game_id, players, options or {}, seeds.chain_commitment(0), practice=False)
    state = table.fold(None, created)
    assert state is not None
    g = Game(table=table, seeds=seeds, state=state, events=list(created))
    for seat in range(players):
        name = names[seat] if names else f"P{seat}"
        client_seed = client_seeds[seat] if client_seeds else f"cs{seat}"
        g.apply(table.join(g.state, name, client_seed, seeds))
    return g


def play_random(g: Game, rng: random.Random, max_steps: int = 20_000) -> Game:
    """Play random legal commands (from a random seat among those to act) until the game ends."""
    for _ in range(max_steps):
        if g.state.status == "finished":
            return g
        to_act = g.table.to_act(g.state)
        assert to_act, f"no seat to act in phase {g.table.rules.phase(g.rules_state)}"
        seat = rng.choice(sorted(to_act))
        legal = g.legal(seat)
        assert legal, f"seat {seat} is to act but has no legal command"
        g.act(seat, rng.choice(legal))
    raise AssertionError(f"game did not finish within {max_steps} steps")
