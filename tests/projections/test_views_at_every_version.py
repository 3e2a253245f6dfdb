"""Time travel may stop anywhere, even between two events of one batch: every view must be defined."""

from __future__ import annotations

import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from projections.views import materialise
from tests.support.play import new_game, play_random

PLAYERS = {"skull": (3, 6), "six-nimmt": (2, 10), "skull-king": (2, 6)}


@pytest.mark.parametrize("game", sorted(PLAYERS))
@settings(max_examples=8)
@given(data=st.data())
def test_every_read_model_is_defined_at_every_version_of_a_random_game(
    game: str, data: st.DataObject
) -> None:
    low, high = PLAYERS[game]
    players = data.draw(st.integers(low, high), label="players")
    seed = data.draw(st.integers(0, 2**32), label="seed")
    played = play_random(new_game(game, players, seed=seed), random.Random(seed))
    state = None
    for version, event in enumerate(played.events, start=1):
        state = played.table.evolve(state, event)
        for data_bytes in materialise(state, version).values():
            assert msgspec.json.decode(data_bytes)["version"] == version
