"""Helpers shared by the Skull tests (domain, views, bot): set up a table, act, read the state.

No tests live here; the module is named so that it belongs with the Skull tests.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from domain.kernel import Command, Event, Rejected
from domain.skull.events import SkullEvent
from domain.skull.state import SkullState, canonical
from tests.support.play import Game, new_game

F, S = "flower", "skull"


def skull_game(players: int = 4, seed: int | str = 0, **options: Any) -> Game:
    """A started Skull table; seat 0 starts round 1 unless ``first_player`` says otherwise."""
    options.setdefault("first_player", 0)
    if options["first_player"] is None:
        del options["first_player"]
    return new_game("skull", players, options, seed=seed)


def st(g: Game) -> SkullState:
    state: SkullState = g.rules_state
    return state


def do(g: Game, seat: int, kind: str | Command, /, **fields: Any) -> list[Event]:
    """``seat`` sends the command ``{"type": kind, **fields}`` as it comes off the wire (or a
    ``Command`` built in Python, which msgspec never validates); returns the events it produced."""
    return g.act(seat, kind if isinstance(kind, Command) else {"type": kind, **fields})


def place(g: Game, discs: Sequence[str | None]) -> None:
    """The opening placement: seat i places ``discs[i]`` (``None``: that seat has nothing to place)."""
    for seat, disc in enumerate(discs):
        if disc is not None:
            do(g, seat, "place_disc", disc=disc)


def rejected(g: Game, seat: int, kind: str | Command, /, **fields: Any) -> str:
    """The code with which the rules refuse the command; the table state must not change."""
    before = g.state
    with pytest.raises(Rejected) as caught:
        do(g, seat, kind, **fields)
    assert g.state == before
    assert caught.value.message.endswith(".")
    return caught.value.code


def skull_events(events: Sequence[Event]) -> list[SkullEvent]:
    """Only the game's own events (no table bookkeeping such as seed reveals)."""
    members = SkullEvent.__args__
    return [e for e in events if isinstance(e, members)]


def of_type(events: Sequence[Event], kind: type[Any]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def as_dicts(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(e) for e in events]


def random_options(rng: random.Random, two_sets: bool = False) -> dict[str, Any]:
    """A random table configuration (the first player drawn fairly half of the time)."""
    options: dict[str, Any] = {
        "two_sets": two_sets,
        "reveal_all_own_first": rng.random() < 0.5,
        "first_after_elimination": rng.choice(["eliminated_chooses", "left_neighbour"]),
        "last_chance": rng.random() < 0.5,
    }
    return options


def challenge(g: Game, stacks: Sequence[Sequence[str]], challenger: int, bid: int) -> list[Event]:
    """Play a round up to the reveal: each seat builds ``stacks[seat]`` (bottom first), the first
    seat in turn with nothing more to place opens the auction, ``challenger`` bids ``bid`` and
    everyone else passes. Returns the events of the command that ended the auction."""
    place(g, [stack[0] if stack else None for stack in stacks])
    placed = [1 if stack else 0 for stack in stacks]
    while (seat := st(g).turn) is not None and placed[seat] < len(stacks[seat]):
        do(g, seat, "place_disc", disc=stacks[seat][placed[seat]])
        placed[seat] += 1
    assert placed == [len(stack) for stack in stacks], "the script must let every stack be built"
    opener = st(g).turn
    assert opener is not None
    events = do(g, opener, "bid", count=bid if opener == challenger else 1)
    while st(g).phase == "auction":
        seat = st(g).turn
        assert seat is not None
        events = do(g, seat, "bid", count=bid) if seat == challenger else do(g, seat, "pass")
    return events


def own_skull_round(g: Game, loser: int, lose: str) -> list[Event]:
    """``loser`` puts his skull down first, opens with 1 and turns it himself; he gives up ``lose``."""
    for seat in g.table.to_act(g.state):
        hand = st(g).seats[seat].hand
        do(g, seat, "place_disc", disc=S if seat == loser else (F if F in hand else hand[0]))
    while (turn := st(g).turn) != loser:
        assert turn is not None
        do(g, turn, "place_disc", disc=st(g).seats[turn].hand[0])
    do(g, loser, "bid", count=1)
    while st(g).phase == "auction":
        do(g, g.table.to_act(g.state)[0], "pass")
    assert st(g).phase == "discard_own"
    return do(g, loser, "discard_own", disc=lose)


def opponents_skull_round(g: Game, loser: int, owner: int) -> list[Event]:
    """``loser`` opens a round he starts, bids his flower plus ``owner``'s skull and meets it."""
    assert st(g).first_player == loser
    for seat in g.table.to_act(g.state):
        hand = st(g).seats[seat].hand
        do(g, seat, "place_disc", disc=S if seat == owner else (F if F in hand else hand[0]))
    do(g, loser, "bid", count=2)
    while st(g).phase == "auction":
        do(g, g.table.to_act(g.state)[0], "pass")
    do(g, loser, "flip", seat=owner)
    assert st(g).phase == "discard_pick" and st(g).skull_owner == owner
    return do(g, owner, "discard_pick", position=0)


def scramble(state: SkullState, keep: int | None, rng: random.Random) -> SkullState:
    """``state`` with everything ``keep`` (``None``: a spectator) may not know replaced at random:
    other seats' hands, face-down discs and losses, and the blind draw's order. The public Last
    chance disc stays where it is. Invariants may break; what ``keep`` sees must not change."""

    def kinds(discs: Sequence[str]) -> tuple[Any, ...]:
        return tuple(d if d == "last_chance" else rng.choice((F, S)) for d in discs)

    seats = []
    for number, seat in enumerate(state.seats):
        if number == keep:
            seats.append(seat)
            continue
        down = seat.face_down
        stack = kinds(seat.stack[:down]) + seat.stack[down:]
        hand = canonical(kinds(seat.hand))
        seats.append(msgspec.structs.replace(seat, hand=hand, stack=stack, lost=kinds(seat.lost)))
    order = None if state.discard_order is None else kinds(state.discard_order)
    return msgspec.structs.replace(state, seats=tuple(seats), discard_order=order)
