"""6 nimmt! views: each seat sees its own hand and face-down card, never another's, over many games."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings

from domain.six_nimmt.commands import ChooseRow, DraftCard, SelectCard
from domain.six_nimmt.state import SixNimmtState
from domain.table import TableState
from projections import six_nimmt as views
from projections.views import scoreboard as table_scoreboard
from projections.views import seat_view
from tests.domain.test_six_nimmt_games import OPTIONS, PLAYERS, SEEDS, scrambled
from tests.support.play import Game, new_game

replace = msgspec.structs.replace
ENVELOPE = {
    "game", "game_id", "version", "status", "phase", "seat", "practice", "seats", "options", "players",
    "to_act", "legal", "scores", "winners", "fairness",
}  # fmt: skip


def check_hidden(table: TableState, version: int, rng: random.Random) -> None:
    """Every viewer's whole view, the public counters and the score pad ignore what it may not know."""
    state: SixNimmtState = table.game_state
    for viewer in [*range(state.players), None]:
        seen = seat_view(table, version, viewer)
        twin = replace(table, game_state=scrambled(state, viewer, rng))
        assert seat_view(twin, version, viewer) == seen
        if not state.options.tactical:
            assert seen["hands"] is None
        assert seen["hand"] == (list(state.hands[viewer]) if viewer is not None else None)
    assert table_scoreboard(twin, version) == table_scoreboard(table, version)


def play_viewing(g: Game, rng: random.Random) -> None:
    while g.state.status != "finished":
        check_hidden(g.state, len(g.events), rng)
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        g.act(seat, rng.choice(g.legal(seat)))
    check_hidden(g.state, len(g.events), rng)


@pytest.mark.thorough
@settings(max_examples=25, deadline=None)
@given(players=PLAYERS, options=OPTIONS, seed=SEEDS)
def test_no_seat_ever_sees_another_seats_hand_or_a_card_before_the_reveal(
    players: int, options: dict[str, Any], seed: int
) -> None:
    play_viewing(new_game("six-nimmt", players, options, seed=seed), random.Random(seed))


def test_the_game_fields_never_shadow_the_generic_envelope() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True})
    assert not set(views.view(g.rules_state, 0)) & ENVELOPE
    assert not set(views.player_public(g.rules_state, 0)) & {"seat", "name"}


def test_a_seat_sees_its_hand_the_rows_with_bullheads_and_who_has_selected() -> None:
    g = new_game("six-nimmt", 3, seed="view")
    state: SixNimmtState = g.rules_state
    g.act(1, SelectCard(card=state.hands[1][0]))
    seen = seat_view(g.state, len(g.events), 1)
    assert seen["hand"] == list(state.hands[1][1:])
    assert seen["selection"] == state.hands[1][0]
    assert seen["selected"] == [False, True, False]
    assert seen["rows"][0]["cards"] == [{"card": state.rows[0][0], "bullheads": seen["rows"][0]["bullheads"]}]
    assert [row["end"] for row in seen["rows"]] == [row[0] for row in state.rows]
    assert seen["turn"] == 1 and seen["round"] == 1
    assert seen["to_act"] == [0, 2] and seen["legal"] == []
    other = seat_view(g.state, len(g.events), 0)
    assert other["selection"] is None and other["selected"] == [False, True, False]
    assert [p["has_selected"] for p in other["players"]] == [False, True, False]
    assert [p["hand_size"] for p in other["players"]] == [10, 9, 10]


def test_everyone_sees_the_revealed_cards_and_whose_row_choice_is_awaited() -> None:
    for seed in range(100):
        g = new_game("six-nimmt", 2, seed=seed)
        state: SixNimmtState = g.rules_state
        lowest_row = min(row[0] for row in state.rows)
        if state.hands[0][0] < lowest_row < state.hands[1][-1]:
            break
    else:
        raise AssertionError("no seed pauses the first turn on a row choice")
    g.act(0, SelectCard(card=state.hands[0][0]))
    g.act(1, SelectCard(card=state.hands[1][-1]))
    seen = seat_view(g.state, len(g.events), None)
    assert seen["revealed"] == [state.hands[0][0], state.hands[1][-1]]
    assert seen["row_choice"] == {"seat": 0, "card": state.hands[0][0]}
    assert seen["pending"] == [
        {"seat": 0, "card": state.hands[0][0]},
        {"seat": 1, "card": state.hands[1][-1]},
    ]
    assert seen["phase"] == "choosing_row" and seen["to_act"] == [0]
    g.act(0, ChooseRow(row=0))
    after = seat_view(g.state, len(g.events), 1)
    assert after["row_choice"] is None and after["pending"] == []
    assert after["piles"][0] == [state.rows[0][0]]
    assert (
        after["penalties"]
        == after["totals"]
        == [after["rows"][0]["bullheads"] * 0 + g.rules_state.totals[0], 0]
    )


def test_tactical_views_show_the_draft_and_every_hand_with_its_face_down_card() -> None:
    g = new_game("six-nimmt", 2, {"tactical": True}, seed="tactical")
    drafter = g.rules_state.drafter
    assert drafter is not None
    seen = seat_view(g.state, len(g.events), None)
    assert seen["draft"] == {"first_drafter": drafter, "drafter": drafter, "cards": list(range(1, 25))}
    while g.rules_state.phase == "drafting":
        (seat,) = g.table.to_act(g.state)
        g.act(seat, DraftCard(card=min(g.rules_state.pool)))
    hands = [list(hand) for hand in g.rules_state.hands]
    g.act(0, SelectCard(card=hands[0][0]))
    for viewer in (None, 0, 1):
        assert seat_view(g.state, len(g.events), viewer)["hands"] == hands  # the face-down card included
    assert seat_view(g.state, len(g.events), 0)["hand"] == hands[0][1:]


def test_the_score_pad_has_one_line_per_round_and_the_round_in_play() -> None:
    g = new_game("six-nimmt", 3, {"rounds": 2}, seed="pad")
    rng = random.Random(5)
    while g.rules_state.round < 2:
        seat = sorted(g.table.to_act(g.state))[0]
        g.act(seat, rng.choice(g.legal(seat)))
    pad = views.scoreboard(g.rules_state)
    assert len(pad["rounds"]) == 1
    assert pad["current"] == [0, 0, 0]
    assert pad["totals"] == pad["rounds"][0]
    while g.state.status != "finished":
        seat = sorted(g.table.to_act(g.state))[0]
        g.act(seat, rng.choice(g.legal(seat)))
    pad = table_scoreboard(g.state, len(g.events))
    assert len(pad["rounds"]) == 2
    assert pad["totals"] == [a + b for a, b in zip(*pad["rounds"], strict=True)]
    assert pad["winners"] == list(g.state.winners)
