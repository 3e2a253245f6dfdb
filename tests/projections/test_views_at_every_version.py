"""Time travel may stop anywhere, even between two events of one batch: every view must be defined.
And the views a worker stores (one public part, each viewer's own part) give every viewer exactly
the bytes of its whole view, at every version."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.games import game_names, spec
from projections.views import (
    PUBLIC_FIELD,
    SCORES_FIELD,
    compose,
    encode,
    materialise,
    own_part,
    public_part,
    scoreboard,
    seat_view,
    view_field,
)
from tests.support.play import new_game, play_random


def materialised_versions(game: str, data: st.DataObject) -> Iterator[tuple[Any, int, dict[str, bytes]]]:
    """A random game of ``game`` (its players and seed drawn): the state at each version and the
    fields the projector would store for it."""
    players = data.draw(st.integers(spec(game).min_players, spec(game).max_players), label="players")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    played = play_random(new_game(game, players, seed=seed), random.Random(seed))
    state = None
    for version, event in enumerate(played.events, start=1):
        state = played.table.evolve(state, event)
        yield state, version, materialise(state, version)


@pytest.mark.thorough
@pytest.mark.parametrize("game", game_names())
@settings(max_examples=8)
@given(data=st.data())
def test_every_read_model_is_defined_at_every_version_of_a_random_game(
    game: str, data: st.DataObject
) -> None:
    for state, version, fields in materialised_versions(game, data):
        for field in (PUBLIC_FIELD, SCORES_FIELD):
            assert msgspec.json.decode(fields[field])["version"] == version
        for seat in (*range(state.players), None):
            whole = compose(fields[PUBLIC_FIELD], fields[view_field(seat)])
            assert msgspec.json.decode(whole)["version"] == version


@pytest.mark.thorough
@pytest.mark.parametrize("game", game_names())
@settings(max_examples=8)
@given(data=st.data())
def test_a_stored_view_composes_to_the_exact_bytes_of_the_whole_view_at_every_version(
    game: str, data: st.DataObject
) -> None:
    for state, version, fields in materialised_versions(game, data):
        own_fields = {view_field(seat) for seat in (*range(state.players), None)}
        assert set(fields) == {PUBLIC_FIELD, SCORES_FIELD, *own_fields}
        assert fields[SCORES_FIELD] == encode(scoreboard(state, version))
        for seat in (*range(state.players), None):
            whole = encode(seat_view(state, version, seat))
            assert compose(fields[PUBLIC_FIELD], fields[view_field(seat)]) == whole, (version, seat)


@pytest.mark.parametrize("game", game_names())
def test_no_viewer_s_own_part_shares_a_field_with_the_public_part(game: str) -> None:
    seed = 7
    played = play_random(new_game(game, spec(game).max_players, seed=seed), random.Random(seed))
    state = None
    for version, event in enumerate(played.events, start=1):
        state = played.table.evolve(state, event)
        public = public_part(state, version)
        for seat in (*range(state.players), None):
            own = own_part(state, seat)
            assert not set(own) & set(public)  # else composing would depend on which part wins
