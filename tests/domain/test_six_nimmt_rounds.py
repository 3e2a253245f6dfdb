"""Rounds of 6 nimmt!: the fair deal, the end of a round, the end of the game, the tactical draft."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from domain.fairness import Chance, player_mix
from domain.kernel import fold
from domain.six_nimmt import RULES
from domain.six_nimmt.commands import DraftCard, SelectCard
from domain.six_nimmt.events import (
    CardDrafted,
    CardsDealt,
    DraftCompleted,
    DraftOpened,
    RoundScored,
    SixNimmtEvent,
)
from domain.six_nimmt.options import SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState
from domain.table import GameFinished, SeedRevealed
from tests.support.play import Game, new_game, seeds_from

CHANCE = Chance(seeds_from("six-nimmt-rounds"), player_mix("rounds", ["a", "b", "c"]))
# Seat 0's 30 is the sixth card of a 6-bullhead row (the rulebook's second turn); 90 is harmless.
FULL_ROW = (12, 14, 15, 21, 26)


def last_turn(totals: tuple[int, ...], round_number: int, **options: Any) -> SixNimmtState:
    """The last turn of ``round_number``: seat 0 holds 30, the others hold 90, 91, ...

    ``totals`` are the totals before this round, on the first line of the score pad.
    """
    players = len(totals)
    state = RULES.initial_state(SixNimmtOptions(**options), players)
    hands = ((30,), *((90 + seat,) for seat in range(players - 1)))
    state = RULES.evolve(state, CardsDealt(round=round_number, hands=hands, rows=(12, 37, 43, 58), unused=()))
    history = (totals, *((0,) * players for _ in range(round_number - 2)))
    return msgspec.structs.replace(
        state, rows=(FULL_ROW, (37,), (43, 44), (58, 61)), history=history, totals=totals, turn=9
    )


def finish_turn(state: SixNimmtState) -> tuple[SixNimmtState, list[SixNimmtEvent]]:
    events: list[SixNimmtEvent] = []
    for seat in range(state.players):
        batch = RULES.decide(state, SelectCard(card=state.hands[seat][0]), seat, CHANCE)
        state = fold(RULES, state, batch)
        events.extend(batch)
    return state, events


def test_the_deal_is_the_documented_slicing_of_the_fair_shuffle_of_1_to_104() -> None:
    g = new_game("six-nimmt", 3, seed="deal")
    dealt = next(e for e in g.events if isinstance(e, CardsDealt))
    chance = Chance(g.seeds, bytes.fromhex(g.state.mix or ""))
    shuffled = chance.shuffle(1, "deal", list(range(1, 105)))
    assert dealt.hands == tuple(tuple(sorted(shuffled[10 * i : 10 * i + 10])) for i in range(3))
    assert dealt.rows == tuple(shuffled[30:34])
    assert dealt.unused == tuple(shuffled[34:])


def test_a_dealt_hand_is_seen_by_its_seat_only_and_the_rows_by_everyone() -> None:
    g = new_game("six-nimmt", 3, seed="deal")
    dealt = next(e for e in g.events if isinstance(e, CardsDealt))
    seen = RULES.redact(dealt, 1)
    assert isinstance(seen, CardsDealt)
    assert seen.hands == (None, dealt.hands[1], None)
    assert seen.rows == dealt.rows and seen.unused is None
    spectator = RULES.redact(dealt, None)
    assert isinstance(spectator, CardsDealt) and spectator.hands == (None, None, None)


def test_after_ten_turns_the_round_is_scored_and_the_next_dealt_in_the_same_batch() -> None:
    state, events = finish_turn(last_turn((10, 20, 30), 2))
    scored = next(e for e in events if isinstance(e, RoundScored))
    assert scored == RoundScored(round=2, penalties=(6, 0, 0), totals=(16, 20, 30), final=False)
    assert isinstance(events[-1], CardsDealt) and events[-1].round == 3
    assert state.history == ((10, 20, 30), (6, 0, 0))
    assert (RULES.rounds_completed(state), RULES.current_round(state)) == (2, 3)
    assert state.phase == "selecting" and all(len(hand) == 10 for hand in state.hands)


def test_the_default_end_needs_a_total_above_66() -> None:
    state, events = finish_turn(last_turn((60, 0), 2))
    assert state.totals == (66, 0)
    assert not RULES.is_terminal(state)
    assert isinstance(events[-1], CardsDealt)


def test_a_total_above_66_ends_the_game_after_that_round() -> None:
    state, events = finish_turn(last_turn((61, 0), 2))
    assert state.totals == (67, 0)
    assert RULES.is_terminal(state) and state.phase == "finished"
    assert isinstance(events[-1], RoundScored) and events[-1].final
    assert RULES.winners(state) == [1]
    assert RULES.to_act(state) == [] and RULES.legal_commands(state, 0) == []


def test_end_compare_ge_ends_the_game_when_a_total_reaches_the_end_score() -> None:
    state, _ = finish_turn(last_turn((60, 0), 2, end_compare="ge"))
    assert state.totals == (66, 0) and RULES.is_terminal(state)


def test_the_end_score_is_a_table_option() -> None:
    assert RULES.is_terminal(finish_turn(last_turn((25, 0), 2, end_score=30))[0])
    assert not RULES.is_terminal(finish_turn(last_turn((24, 0), 2, end_score=30))[0])


def test_a_fixed_number_of_rounds_ignores_the_score_and_ends_after_the_last_round() -> None:
    early, _ = finish_turn(last_turn((100, 0), 2, rounds=3))
    assert not RULES.is_terminal(early) and early.round == 3
    last, _ = finish_turn(last_turn((0, 0), 3, rounds=3))
    assert RULES.is_terminal(last) and RULES.rounds_completed(last) == 3


def test_the_lowest_total_wins_and_equal_lowest_totals_share_the_victory() -> None:
    state, _ = finish_turn(last_turn((3, 9, 9, 12), 2, rounds=2))
    assert state.totals == (9, 9, 9, 12)
    assert RULES.winners(state) == [0, 1, 2]
    assert RULES.scores(state) == [9, 9, 9, 12]


def test_the_table_reveals_each_round_seed_and_finishes_with_the_winners() -> None:
    g = new_game("six-nimmt", 3, {"rounds": 2}, seed="table")
    _play(g, random.Random(1))
    reveals = [e.round for e in g.events if isinstance(e, SeedRevealed)]
    assert reveals == [1, 2]
    finished = g.events[-1]
    assert isinstance(finished, GameFinished)
    assert finished.winners == RULES.winners(g.rules_state)


def _play(g: Game, rng: random.Random, until_round: int | None = None) -> None:
    while g.state.status == "playing" and (until_round is None or g.rules_state.round < until_round):
        seat = sorted(g.table.to_act(g.state))[0]
        g.act(seat, rng.choice(g.legal(seat)))


def _draft_round(g: Game) -> list[int]:
    """Draft the lowest card available until the draft closes; the seats in picking order."""
    order = []
    while g.rules_state.phase == "drafting":
        (seat,) = g.table.to_act(g.state)
        order.append(seat)
        g.act(seat, DraftCard(card=min(g.rules_state.pool)))
    return order


@pytest.mark.parametrize("players", [2, 3, 7])
def test_tactical_round_1_opens_a_face_up_draft_of_1_to_10n_plus_4_from_a_fair_first_drafter(
    players: int,
) -> None:
    g = new_game("six-nimmt", players, {"tactical": True}, seed=f"draft{players}")
    opened = next(e for e in g.events if isinstance(e, DraftOpened))
    chance = Chance(g.seeds, bytes.fromhex(g.state.mix or ""))
    assert opened.first_drafter == chance.uniform(1, "first-drafter", players)
    assert opened.cards == tuple(range(1, 10 * players + 5))
    assert not any(isinstance(e, CardsDealt) for e in g.events)


def test_tactical_players_draft_one_card_at_a_time_clockwise_until_each_holds_ten() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True}, seed="clockwise")
    first = g.rules_state.first_drafter
    assert first is not None
    order = _draft_round(g)
    assert order == [(first + k) % 3 for k in range(30)]
    assert all(len(hand) == 10 for hand in g.rules_state.hands)


def test_tactical_the_four_cards_left_start_the_rows_in_ascending_order() -> None:
    g = new_game("six-nimmt", 2, {"tactical": True}, seed="leftovers")
    while g.rules_state.phase == "drafting":
        (seat,) = g.table.to_act(g.state)
        g.act(seat, DraftCard(card=max(g.rules_state.pool)))  # leaves 1..4 on the table
    assert g.events[-1] == DraftCompleted(rows=(1, 2, 3, 4))
    assert g.rules_state.rows == ((1,), (2,), (3,), (4,))
    assert g.rules_state.phase == "selecting" and g.rules_state.pool == ()


def test_tactical_hands_are_public_because_every_draft_is_seen() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True}, seed="public")
    _draft_round(g)
    drafted = [e for e in g.events if isinstance(e, CardDrafted)]
    assert all(RULES.redact(e, viewer) == e for e in drafted for viewer in (None, 0, 1, 2))


def test_tactical_each_round_the_next_seat_drafts_first() -> None:
    g = new_game("six-nimmt", 3, {"tactical": True, "rounds": 3}, seed="next")
    rng = random.Random(3)
    firsts = []
    for round_number in (1, 2, 3):
        _play(g, rng, until_round=round_number)
        firsts.append(g.rules_state.first_drafter)
    assert firsts[0] is not None
    assert firsts == [(firsts[0] + k) % 3 for k in range(3)]
