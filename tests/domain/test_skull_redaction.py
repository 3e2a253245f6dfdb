"""What each seat and each spectator may see of Skull's events while the game runs."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from domain.fairness import Chance, RevealedSeeds, sha256
from domain.skull import RULES
from domain.skull.events import DiscFlipped, DiscLost, DiscPlaced, DiscsShuffled, SkullEvent
from tests.domain.test_skull_support import (
    F,
    S,
    challenge,
    do,
    of_type,
    random_options,
    skull_events,
    skull_game,
    st,
)
from tests.support.play import Game, play_random

KINDS = {"flower", "skull"}


def test_a_placed_disc_is_seen_by_its_owner_only() -> None:
    placed = DiscPlaced(seat=1, disc=S)
    assert RULES.redact(placed, 1) == placed
    assert RULES.redact(placed, 0) == DiscPlaced(seat=1, disc=None)
    assert RULES.redact(placed, None) == DiscPlaced(seat=1, disc=None)


def test_the_last_chance_disc_is_visibly_distinct_so_placing_it_is_public() -> None:
    placed = DiscPlaced(seat=1, disc="last_chance")
    assert RULES.redact(placed, 0) == placed
    assert RULES.redact(placed, None) == placed


def test_a_lost_disc_is_known_to_its_owner_only_not_even_to_the_skull_owner_who_drew_it() -> None:
    g = skull_game(3)
    challenge(g, [[F, F], [F, F], [S]], challenger=0, bid=4)
    do(g, 0, "flip", seat=2)
    (lost,) = of_type(do(g, 2, "discard_pick", position=2), DiscLost)
    assert lost.disc in KINDS
    assert RULES.redact(lost, 0) == lost
    for viewer in (1, 2, None):
        assert RULES.redact(lost, viewer) == msgspec.structs.replace(lost, disc=None)


def test_the_shuffled_order_of_the_blind_draw_is_hidden_from_every_seat_during_play() -> None:
    g = skull_game(3)
    challenge(g, [[F, F], [F, F], [S]], challenger=0, bid=4)
    (shuffled,) = of_type(do(g, 0, "flip", seat=2), DiscsShuffled)
    for viewer in (0, 1, 2, None):
        assert RULES.redact(shuffled, viewer) == DiscsShuffled(seat=0, picker=2, count=4, order=None)


def test_once_the_game_is_over_everyone_sees_every_event_whole() -> None:
    placed = DiscPlaced(seat=1, disc=S)
    assert skull_game(3).table.redact(placed, 0, finished=True) == placed


def test_turned_discs_are_public() -> None:
    flipped = DiscFlipped(seat=2, disc=S)
    assert RULES.redact(flipped, None) == flipped


def owner_of_hidden(event: SkullEvent) -> tuple[str, int | None] | None:
    """The hidden field of an event and the only seat that may see it (``None``: nobody)."""
    if isinstance(event, DiscPlaced) and event.disc != "last_chance":
        return "disc", event.seat
    if isinstance(event, DiscLost):
        return "disc", event.seat
    if isinstance(event, DiscsShuffled):
        return "order", None
    return None


def disc_kinds_in(value: Any) -> bool:
    if isinstance(value, str):
        return value in KINDS
    if isinstance(value, dict):
        return any(disc_kinds_in(v) for v in value.values())
    if isinstance(value, list):
        return any(disc_kinds_in(v) for v in value)
    return False


@pytest.mark.thorough
@settings(max_examples=150, deadline=None, derandomize=True)
@given(players=hs.integers(3, 6), seed=hs.integers(0, 2**32))
def test_no_redacted_event_shows_a_seat_anothers_hidden_disc_and_spectators_see_no_hidden_fact(
    players: int, seed: int
) -> None:
    rng = random.Random(seed)
    g = play_random(skull_game(players, seed=seed, **random_options(rng)), rng)
    for event in skull_events(g.events):
        hidden = owner_of_hidden(event)
        for viewer in [None, *range(players)]:
            shown = g.table.redact(event, viewer, finished=False)
            if hidden is None:
                assert shown == event
                data = msgspec.to_builtins(shown)
                assert isinstance(event, DiscFlipped | DiscPlaced) or not disc_kinds_in(data)
                continue
            field, owner = hidden
            if viewer is not None and viewer == owner:
                assert shown == event
            else:
                assert getattr(shown, field) is None
                assert shown == msgspec.structs.replace(event, **{field: None})


def observer_guesses(g: Game, lost: DiscLost, round_number: int) -> str | None:
    """What anyone can compute from the published seeds: the lost disc of a first loss (three
    flowers then the skull, the documented order), or ``None`` while the round's seed is sealed.
    A later round's seed hashes down to the earlier ones, so any later reveal would do."""
    later = [r for r in g.state.revealed if r >= round_number]
    if not later:
        return None
    seed = bytes.fromhex(g.state.revealed[max(later)])
    for _ in range(max(later) - round_number):
        seed = sha256(seed)
    seeds = RevealedSeeds({round_number: seed}, {})
    permutation = Chance(seeds, bytes.fromhex(g.state.mix or "")).shuffle(round_number, "discard", range(4))
    assert lost.position is not None
    return S if permutation[lost.position] == 3 else F


def blind_draw(g: Game) -> DiscLost:
    challenge(g, [[F, F], [F, F], [S]], challenger=0, bid=4)
    do(g, 0, "flip", seat=2)
    (lost,) = of_type(do(g, 2, "discard_pick", position=0), DiscLost)
    return lost


def test_the_seed_of_a_round_with_a_blind_draw_stays_sealed_while_the_game_runs() -> None:
    g = skull_game(3)
    lost = blind_draw(g)
    assert st(g).rounds_completed == 1 and 1 not in g.state.revealed
    assert observer_guesses(g, lost, 1) is None


def test_later_rounds_stay_sealed_too_since_their_seeds_hash_down_to_the_blind_draw() -> None:
    g = skull_game(3)
    lost = blind_draw(g)
    challenge(g, [[F], [F], [F]], challenger=0, bid=1)  # round 2: a plain success
    assert st(g).rounds_completed == 2 and g.state.revealed == {}
    assert observer_guesses(g, lost, 1) is None


def test_rounds_before_the_first_blind_draw_are_revealed_as_they_end() -> None:
    g = skull_game(3)
    challenge(g, [[F], [F], [F]], challenger=0, bid=1)
    assert list(g.state.revealed) == [1]
    blind_draw(g)
    assert list(g.state.revealed) == [1]


def test_once_the_game_is_over_every_seed_is_revealed_and_the_draw_can_be_checked() -> None:
    g = skull_game(3)
    lost = blind_draw(g)
    challenge(g, [[F], [F], [F]], challenger=1, bid=2)
    do(g, 1, "flip", seat=2)
    challenge(g, [[F], [F], [F]], challenger=1, bid=1)  # the second point ends the game
    assert g.state.status == "finished"
    assert sorted(g.state.revealed) == [1, 2, 3]
    assert observer_guesses(g, lost, 1) == lost.disc
