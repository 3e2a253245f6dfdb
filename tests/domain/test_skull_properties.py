"""Thousands of random legal Skull games, every rule's invariants checked at every step.

Hypothesis draws the table (players, options, seeds) and a seed for the moves, with
``derandomize=True``: a failure replays identically from the printed example.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from domain.kernel import Command, Rejected
from domain.skull.commands import Bid, ChooseFirstPlayer, DiscardOwn, DiscardPick, Flip, Pass, PlaceDisc
from domain.skull.state import STARTING_DISCS, SkullState
from tests.domain.test_skull_support import skull_game, st
from tests.support.play import Game

OPTIONS = hs.fixed_dictionaries(
    {
        "reveal_all_own_first": hs.booleans(),
        "first_after_elimination": hs.sampled_from(["eliminated_chooses", "left_neighbour"]),
        "last_chance": hs.booleans(),
        "first_player": hs.none() | hs.integers(0, 2),
    }
)
DISCS = ["flower", "skull", "last_chance", "rose"]


def random_command(rng: random.Random, state: SkullState) -> Command:
    """Any command at all, its values around and beyond the legal ranges."""
    n, ceiling = state.players, state.on_mats()
    return rng.choice(
        [
            lambda: PlaceDisc(disc=rng.choice(DISCS)),  # type: ignore[arg-type]
            lambda: Bid(count=rng.randint(-1, ceiling + 2)),
            lambda: Pass(),
            lambda: Flip(seat=rng.randint(-1, n)),
            lambda: DiscardPick(position=rng.randint(-1, 5)),
            lambda: DiscardOwn(disc=rng.choice(DISCS)),  # type: ignore[arg-type]
            lambda: ChooseFirstPlayer(seat=rng.randint(-1, n)),
        ]
    )()


def check_state(g: Game) -> None:
    """What holds between any two commands."""
    state = st(g)
    table = g.table
    for s, seat in enumerate(state.seats):
        assert len(seat.owned) == len(STARTING_DISCS) - len(seat.lost)
        assert seat.eliminated == (not seat.owned)
        holds = (*seat.hand, *seat.stack).count("last_chance")
        assert holds == (1 if state.last_chance_holder == s else 0)
        assert 0 <= seat.turned <= len(seat.stack)
    assert len(state.flips) <= max(state.bid, len(state.seats[state.challenger or 0].stack))
    if state.blind_draw_rounds:  # no published seed hashes down to a blind draw's seed
        assert max(g.state.revealed, default=0) < min(state.blind_draw_rounds)
    to_act = table.to_act(g.state)
    assert to_act, f"nobody to act in phase {state.phase}"
    for seat in range(state.players):
        assert bool(g.legal(seat)) == (seat in to_act)


def probe(g: Game, rng: random.Random, every_legal: bool, illegal: int) -> None:
    """Each legal command is accepted; a random command outside the list is rejected."""
    table = g.table
    if every_legal:
        for seat in table.to_act(g.state):
            for command in g.legal(seat):
                table.decide(g.state, command, seat, g.seeds)
    for _ in range(illegal):
        seat = rng.randrange(st(g).players)
        command = random_command(rng, st(g))
        if command in g.legal(seat):
            table.decide(g.state, command, seat, g.seeds)
            continue
        try:
            table.decide(g.state, command, seat, g.seeds)
        except Rejected as refusal:
            assert refusal.code and refusal.message
        else:
            raise AssertionError(f"{command!r} from seat {seat} was accepted but is not legal")


def play_checked(g: Game, rng: random.Random, every_legal: bool = False, illegal: int = 0) -> Game:
    for _ in range(5_000):
        if g.state.status == "finished":
            return g
        check_state(g)
        probe(g, rng, every_legal, illegal)
        seat = rng.choice(g.table.to_act(g.state))
        g.act(seat, rng.choice(g.legal(seat)))
    raise AssertionError("the game did not finish")


def check_finished(g: Game) -> None:
    state = st(g)
    (winner,) = g.state.winners
    assert state.seats[winner].points == 2 or state.active() == [winner]
    assert [s.points for s in state.seats] == g.table.rules.scores(state)
    assert all(seat.points < 2 for s, seat in enumerate(state.seats) if s != winner)
    assert g.refold() == g.state
    decoder = msgspec.json.Decoder(list[g.table.event_type])  # type: ignore[name-defined]
    stored = decoder.decode(msgspec.json.encode(g.events))
    assert g.table.fold(None, stored) == g.state
    assert (
        sorted(g.state.revealed)
        == list(range(1, state.rounds_completed + 1))
        == [r.round for r in state.history]
    )


def table_options(options: dict[str, Any], players: int) -> dict[str, Any]:
    first = options["first_player"]
    return {**options, "first_player": None if first is None else first % players}


@pytest.mark.thorough
@settings(max_examples=700, deadline=None, derandomize=True)
@given(players=hs.integers(3, 6), options=OPTIONS, seed=hs.integers(0, 2**32), moves=hs.integers(0, 2**32))
def test_random_legal_games_end_with_one_winner_and_replay_from_their_events(
    players: int, options: dict[str, Any], seed: int, moves: int
) -> None:
    g = skull_game(players, seed=seed, **table_options(options, players))
    check_finished(play_checked(g, random.Random(moves)))


@pytest.mark.thorough
@settings(max_examples=60, deadline=None, derandomize=True)
@given(players=hs.integers(3, 12), options=OPTIONS, seed=hs.integers(0, 2**32), moves=hs.integers(0, 2**32))
def test_random_two_set_games_of_up_to_twelve_players_end_properly(
    players: int, options: dict[str, Any], seed: int, moves: int
) -> None:
    g = skull_game(players, seed=seed, two_sets=True, **table_options(options, players))
    check_finished(play_checked(g, random.Random(moves)))


@pytest.mark.thorough
@settings(max_examples=150, deadline=None, derandomize=True)
@given(players=hs.integers(3, 6), options=OPTIONS, seed=hs.integers(0, 2**32), moves=hs.integers(0, 2**32))
def test_every_legal_command_is_accepted_and_any_other_is_rejected(
    players: int, options: dict[str, Any], seed: int, moves: int
) -> None:
    g = skull_game(players, seed=seed, **table_options(options, players))
    check_finished(play_checked(g, random.Random(moves), every_legal=True, illegal=4))
