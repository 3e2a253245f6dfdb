"""What 6 nimmt! refuses, with which code, and that no refusal tells a seat anything hidden."""

from __future__ import annotations

from typing import Any

import pytest

from domain.kernel import Conflict, Rejected
from domain.six_nimmt import RULES
from domain.six_nimmt.commands import ChooseRow, DraftCard, SelectCard
from domain.six_nimmt.options import SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState
from domain.table import Table
from tests.support.play import Game, new_game


def rejection(g: Game, seat: int, command: Any) -> Rejected:
    with pytest.raises(Rejected) as caught:
        g.act(seat, command)
    return caught.value


def awaiting_row_choice() -> Game:
    """A 2-player table paused on a row choice: seat 0 plays a card below every row end."""
    for seed in range(200):
        g = new_game("six-nimmt", 2, seed=seed)
        rows_low = min(row[0] for row in g.rules_state.rows)
        low = [card for card in g.rules_state.hands[0] if card < rows_low]
        high = [card for card in g.rules_state.hands[1] if card > rows_low]
        if low and high:
            g.act(0, SelectCard(card=low[0]))
            g.act(1, SelectCard(card=high[0]))
            assert g.rules_state.phase == "choosing_row"
            return g
    raise AssertionError("no seed gives a row choice on the first turn")


@pytest.mark.parametrize("players", [0, 1, 11, 20])
def test_a_table_needs_2_to_10_players(players: int) -> None:
    with pytest.raises(Rejected) as caught:
        RULES.check_options(SixNimmtOptions(), players)
    assert caught.value.code == "bad_player_count"


@pytest.mark.parametrize(
    "options",
    [
        {"end_score": 0},
        {"end_score": -5},
        {"rounds": 0},
        {"end_compare": "lt"},
        {"tactical": "yes"},
        {"rounds": "two"},
        {"bullheads": 3},
    ],
)
def test_options_the_rules_cannot_play_are_refused_as_invalid_options(options: dict[str, Any]) -> None:
    table = Table(RULES)
    with pytest.raises(Rejected) as caught:
        table.create("g", 4, options, "00" * 32, practice=False)
    assert caught.value.code == "invalid_options"


def test_every_option_has_the_seed_default() -> None:
    assert SixNimmtOptions() == SixNimmtOptions(end_score=66, end_compare="gt", rounds=None, tactical=False)


def test_a_selection_is_final() -> None:
    g = new_game("six-nimmt", 3)
    g.act(0, SelectCard(card=g.rules_state.hands[0][0]))
    assert rejection(g, 0, SelectCard(card=g.rules_state.hands[0][0])).code == "already_selected"


def test_a_seat_can_only_select_a_card_from_its_own_hand() -> None:
    g = new_game("six-nimmt", 3)
    assert rejection(g, 0, SelectCard(card=g.rules_state.hands[1][0])).code == "card_not_in_hand"
    assert rejection(g, 0, SelectCard(card=0)).code == "card_not_in_hand"
    assert rejection(g, 0, SelectCard(card=105)).code == "card_not_in_hand"


def test_refusing_a_card_says_the_same_whether_another_seat_holds_it_or_nobody_does() -> None:
    g = new_game("six-nimmt", 3)
    state: SixNimmtState = g.rules_state
    held, unused = state.hands[1][0], state.unused[0]
    said_held = rejection(g, 0, SelectCard(card=held)).message.replace(str(held), "#")
    said_unused = rejection(g, 0, SelectCard(card=unused)).message.replace(str(unused), "#")
    assert said_held == said_unused


def test_nobody_selects_while_a_row_choice_is_awaited() -> None:
    g = awaiting_row_choice()
    assert rejection(g, 0, SelectCard(card=g.rules_state.hands[0][0])).code == "wrong_phase"
    assert rejection(g, 1, SelectCard(card=g.rules_state.hands[1][0])).code == "wrong_phase"


def test_only_the_owner_of_the_lowest_card_chooses_the_row() -> None:
    g = awaiting_row_choice()
    refused = rejection(g, 1, ChooseRow(row=0))
    assert refused.code == "not_your_choice"
    assert "Seat 0" in refused.message


@pytest.mark.parametrize("row", [-1, 4, 99])
def test_rows_are_numbered_0_to_3(row: int) -> None:
    g = awaiting_row_choice()
    assert rejection(g, 0, ChooseRow(row=row)).code == "no_such_row"


def test_no_row_is_chosen_while_cards_are_selected() -> None:
    g = new_game("six-nimmt", 2)
    assert rejection(g, 0, ChooseRow(row=0)).code == "wrong_phase"


def test_a_standard_table_does_not_draft() -> None:
    g = new_game("six-nimmt", 2)
    assert rejection(g, 0, DraftCard(card=1)).code == "wrong_phase"


def test_only_the_seat_whose_turn_it_is_drafts() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True})
    drafter = g.rules_state.drafter
    assert drafter is not None
    other = (drafter + 1) % 3
    assert rejection(g, other, DraftCard(card=1)).code == "not_your_turn"


def test_a_drafted_card_is_no_longer_available() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True})
    drafter = g.rules_state.drafter
    assert drafter is not None
    g.act(drafter, DraftCard(card=7))
    assert rejection(g, (drafter + 1) % 3, DraftCard(card=7)).code == "card_not_available"
    assert rejection(g, (drafter + 1) % 3, DraftCard(card=35)).code == "card_not_available"


def test_nobody_selects_during_the_draft() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True})
    assert rejection(g, 0, SelectCard(card=1)).code == "wrong_phase"


def test_a_finished_game_refuses_every_command() -> None:
    g = new_game("six-nimmt", 2, {"rounds": 1})
    while g.state.status == "playing":
        seat = sorted(g.table.to_act(g.state))[0]
        g.act(seat, g.legal(seat)[0])
    refused = rejection(g, 0, SelectCard(card=1))
    assert isinstance(refused, Conflict) and refused.code == "game_over"
    with pytest.raises(Rejected) as caught:
        RULES.decide(g.rules_state, SelectCard(card=1), 0, None)  # type: ignore[arg-type]
    assert caught.value.code == "wrong_phase"
