"""The table's hint: only at practice tables, only a legal move of the awaited seat, no change to the
game, hidden from every other viewer until the game is over."""

from __future__ import annotations

import msgspec
import pytest

from domain.kernel import Rejected
from domain.table import HintGiven, Table
from tests.support.play import Game, new_game


def practice_game(game: str = "skull-king") -> Game:
    g = new_game(game, 3, seed=4)
    return Game(
        table=g.table, seeds=g.seeds, state=msgspec.structs.replace(g.state, practice=True), events=g.events
    )


def test_a_hint_is_refused_at_a_table_that_is_not_a_practice_table() -> None:
    g = new_game("skull-king", 3, seed=4)
    seat = g.table.to_act(g.state)[0]
    with pytest.raises(Rejected) as refused:
        g.table.hint(g.state, seat, g.legal(seat)[0], None)
    assert refused.value.code == "hints_not_allowed"


def test_a_hint_names_one_of_the_awaited_seats_legal_commands() -> None:
    g = practice_game("six-nimmt")
    seat = g.table.to_act(g.state)[0]
    table: Table = g.table
    others_card = next(c for c in g.legal((seat + 1) % 3) if c not in g.legal(seat))
    with pytest.raises(Rejected) as refused:
        table.hint(g.state, seat, others_card, None)
    assert refused.value.code == "illegal_hint"
    events = table.hint(g.state, seat, g.legal(seat)[0], {"key": "bot.reason.lowest_risk", "params": {}})
    assert events == [
        HintGiven(
            seat=seat,
            command=msgspec.to_builtins(g.legal(seat)[0]),
            reason={"key": "bot.reason.lowest_risk", "params": {}},
        )
    ]


def test_a_hint_changes_no_game_state_and_notes_the_seat() -> None:
    g = practice_game()
    seat = g.table.to_act(g.state)[0]
    before = g.state
    g.apply(g.table.hint(g.state, seat, g.legal(seat)[0], None))
    assert g.state.game_state == before.game_state
    assert g.state.hinted == frozenset({seat})
    assert g.table.to_act(g.state) == g.table.to_act(before)


def test_only_the_hinted_seat_sees_the_hint_until_the_game_is_over() -> None:
    g = practice_game()
    seat = g.table.to_act(g.state)[0]
    [given] = g.table.hint(
        g.state, seat, g.legal(seat)[0], {"key": "bot.reason.best_in_simulations", "params": {}}
    )
    assert g.table.redact(given, seat, finished=False) == given
    for viewer in [None, *(s for s in range(3) if s != seat)]:
        assert g.table.redact(given, viewer, finished=False) == HintGiven(seat=seat)
        assert g.table.redact(given, viewer, finished=True) == given
