"""The hash-oracle attack of docs/fairness.md "Hiding", run for real.

While a game runs, every chain hash is public (receipts, the audit head polled after each move), the
command ids of the other seats are guessable (``cmd-1``, ``cmd-2``, ...) and the stored format is
documented. A hidden fact takes few values: a 6 nimmt! card (1-104), a Skull King bid (0-10), the
order of Skull's blind draw (a few discs). The attacker rebuilds the stored bytes of an entry from
what it saw (the redacted event) for every candidate value and compares SHA-256(previous hash ||
bytes) with the published hash. Against stored format 1 (no salt) that finds the one true value;
against format 2 the unknown 128-bit salt leaves no candidate matching.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator
from typing import Any

import msgspec
import pytest

from domain.kernel import Event
from domain.six_nimmt.events import CardSelected
from domain.skull.events import DiscsShuffled
from domain.skull_king.events import BidPlaced
from services.history.records import GENESIS_HASH, chain_hash, decode_stored
from tests.support.play import play_random
from tests.support.recorded import RecordedGame, new_recorded_game

ATTACKER = 1
DISCS = ("flower", "skull", "last_chance")


def recorded(game: str, seed: int, salted: bool) -> RecordedGame:
    g = new_recorded_game(game, 3, seed=seed, salted=salted)
    play_random(g, random.Random(seed))
    return g


def candidates(event: Event) -> tuple[str, list[Any], Callable[[Any], dict[str, Any]] | None]:
    """The hidden field, every value it might take, and the command body that would carry it."""
    if isinstance(event, CardSelected):
        return "card", list(range(1, 105)), lambda card: {"type": "select_card", "card": card}
    if isinstance(event, BidPlaced):
        return "tricks", list(range(11)), lambda tricks: {"type": "bid", "tricks": tricks}
    assert isinstance(event, DiscsShuffled)
    orders = [list(order) for order in itertools.product(DISCS, repeat=event.count)]
    return "order", orders, None


def attack(
    prev_hash: str,
    published: str,
    version: int,
    command_id: str,
    seat: int | None,
    shown: dict[str, Any],
    field: str,
    values: list[Any],
    body: Callable[[Any], dict[str, Any]] | None,
) -> list[Any]:
    """Every candidate value whose rebuilt stored bytes hash to the published hash."""
    found = []
    for value in values:
        event = {**shown, field: value}
        records: list[dict[str, Any]] = [{"version": version, "command_id": command_id, "event": event}]
        if body is not None:
            command = {"id": command_id, "kind": "command", "seat": seat, "body": body(value)}
            records.append({**records[0], "command": command})
        if any(chain_hash(prev_hash, msgspec.json.encode(record)) == published for record in records):
            found.append(value)
    return found


def targets(g: RecordedGame, kind: type[Event]) -> Iterator[tuple[int, Event, str, int | None]]:
    """Entries holding a hidden fact of another seat: (index, event, command id, acting seat)."""
    command_id, seat = "", None
    for index, entry in enumerate(g.entries):
        stored = decode_stored(entry.data)
        if stored.command is not None:
            command_id, seat = stored.command.id, stored.command.seat
        event = msgspec.json.decode(stored.event, type=g.table.event_type)
        if isinstance(event, kind) and getattr(event, "seat", None) != ATTACKER:
            yield index, event, command_id, seat


def run_attack(g: RecordedGame, kind: type[Event]) -> list[tuple[Any, list[Any]]]:
    """For each target: the true hidden value and what the attack recovered."""
    results = []
    for index, event, command_id, seat in targets(g, kind):
        field, values, body = candidates(event)
        shown = msgspec.to_builtins(g.table.redact(event, ATTACKER, finished=False))
        assert shown.get(field) is None, "the attacker must not see the value it searches for"
        prev_hash = g.entries[index - 1].hash if index else GENESIS_HASH
        entry = g.entries[index]
        found = attack(prev_hash, entry.hash, entry.version, command_id, seat, shown, field, values, body)
        truth = msgspec.json.decode(msgspec.json.encode(event))[field]
        results.append((truth, found))
    return results


def game_with(game: str, kind: type[Event]) -> int:
    """The first seed whose random 3-seat game holds a hidden ``kind`` of another seat."""
    for seed in range(60):
        if any(True for _ in targets(recorded(game, seed, salted=True), kind)):
            return seed
    raise AssertionError(f"no random {game} game with a {kind.__name__}")


HIDDEN = [("six-nimmt", CardSelected), ("skull-king", BidPlaced), ("skull", DiscsShuffled)]


@pytest.mark.parametrize(("game", "kind"), HIDDEN, ids=["card", "bid", "shuffle"])
def test_the_hash_oracle_attack_recovers_every_hidden_value_of_an_unsalted_stream(
    game: str, kind: type[Event]
) -> None:
    results = run_attack(recorded(game, game_with(game, kind), salted=False), kind)
    assert results
    assert all(found == [truth] for truth, found in results), results


@pytest.mark.parametrize(("game", "kind"), HIDDEN, ids=["card", "bid", "shuffle"])
def test_the_hash_oracle_attack_recovers_nothing_from_a_salted_stream(game: str, kind: type[Event]) -> None:
    results = run_attack(recorded(game, game_with(game, kind), salted=True), kind)
    assert results
    assert all(found == [] for _, found in results), results
