"""Skull King through the Decider: deals, hidden bids, turns, rejections, round ends (docs/rules.md)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec
import pytest

from domain.fairness import Chance
from domain.kernel import Rejected, fold
from domain.skull_king import RULES
from domain.skull_king.cards import DECK
from domain.skull_king.commands import Bid, PlayCard
from domain.skull_king.events import BidPlaced, BidsRevealed, CardsDealt, RoundScored, TrickWon
from domain.skull_king.options import SkullKingOptions
from domain.skull_king.state import SkullKingState
from domain.table import SeedRevealed
from tests.support.play import new_game, play_random, seeds_from

CHANCE = Chance(seeds_from("skull-king-rules"), b"mix")


def given(
    hands: Sequence[Sequence[str]],
    bids: Sequence[int] | None = None,
    *,
    round_number: int | None = None,
    dealer: int | None = None,
    options: SkullKingOptions | None = None,
) -> SkullKingState:
    """A round dealt with exactly ``hands`` (seat 0 leads unless ``dealer`` says otherwise), then ``bids``."""
    players = len(hands)
    dealer = players - 1 if dealer is None else dealer
    dealt = {card for hand in hands for card in hand}
    events: list[msgspec.Struct] = [
        CardsDealt(
            round=round_number or len(hands[0]),
            dealer=dealer,
            leader=(dealer + 1) % players,
            hands=tuple(tuple(hand) for hand in hands),
            unused=tuple(card for card in DECK if card not in dealt),
        )
    ]
    if bids is not None:
        events += [BidPlaced(seat=seat, tricks=bid) for seat, bid in enumerate(bids)]
        events.append(BidsRevealed(bids=tuple(bids)))
    return fold(RULES, RULES.initial_state(options or SkullKingOptions(), players), events)  # type: ignore[arg-type]


Moved = tuple[SkullKingState, list[msgspec.Struct]]


def act(state: SkullKingState, seat: int, command: Bid | PlayCard) -> Moved:
    events = RULES.decide(state, command, seat, CHANCE)
    return fold(RULES, state, events), list(events)


def play(state: SkullKingState, *moves: tuple[int, str]) -> Moved:
    """Play ``(seat, card)`` moves in order; ``scary-mary:pirate`` declares her."""
    events: list[msgspec.Struct] = []
    for seat, spec in moves:
        card, _, declared = spec.partition(":")
        state, batch = act(state, seat, PlayCard(card=card, as_=declared or None))  # type: ignore[arg-type]
        events += batch
    return state, events


def rejected(state: SkullKingState, seat: int, command: Bid | PlayCard) -> Rejected:
    with pytest.raises(Rejected) as info:
        RULES.decide(state, command, seat, CHANCE)
    return info.value


def scored(events: list[msgspec.Struct]) -> RoundScored:
    return next(e for e in events if isinstance(e, RoundScored))


# -- the table and the deal --------------------------------------------------------------------


@pytest.mark.parametrize("players", [1, 7])
def test_a_table_of_fewer_than_two_or_more_than_six_is_refused(players: int) -> None:
    with pytest.raises(Rejected) as info:
        new_game("skull-king", players)
    assert info.value.code == "bad_player_count"


@pytest.mark.parametrize("options", [{"scoring": "modern"}, {"rounds": 5}, {"character_lead_no_suit": "yes"}])
def test_unknown_or_ill_typed_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(Rejected) as info:
        new_game("skull-king", 3, options)
    assert info.value.code == "invalid_options"


def test_options_default_to_the_seed_reading() -> None:
    state = new_game("skull-king", 3).rules_state
    assert state.options == SkullKingOptions(
        scoring="seed", character_lead_no_suit=False, scary_mary_escape_counts_as_pirate=False
    )


def test_the_first_dealer_is_drawn_and_round_one_is_dealt_in_the_documented_order() -> None:
    g = new_game("skull-king", 4, seed=7)
    chance = Chance(g.seeds, bytes.fromhex(g.state.mix or ""))
    dealer = chance.uniform(1, "first-dealer", 4)
    deck = chance.shuffle(1, "deal", DECK)
    state = g.rules_state
    assert (state.round, state.dealer, state.leader, state.phase) == (1, dealer, (dealer + 1) % 4, "bidding")
    for i in range(4):
        assert state.hands[(dealer + 1 + i) % 4] == (deck[i],)
    assert state.unused == tuple(deck[4:])


def test_the_deal_shows_each_seat_only_its_own_hand_and_nobody_the_unused_cards() -> None:
    g = new_game("skull-king", 3, seed=1)
    deal = next(e for e in g.events if isinstance(e, CardsDealt))
    for viewer in (0, 1, 2, None):
        seen = RULES.redact(deal, viewer)
        assert seen.unused is None
        assert [hand is not None for hand in seen.hands] == [seat == viewer for seat in range(3)]


def test_every_round_deals_r_cards_and_the_dealer_and_first_leader_move_left() -> None:
    g = new_game("skull-king", 3, seed=3)
    first = g.rules_state.dealer
    play_random(g, random.Random(3))
    deals = [e for e in g.events if isinstance(e, CardsDealt)]
    assert [d.round for d in deals] == list(range(1, 11))
    assert [d.dealer for d in deals] == [(first + r) % 3 for r in range(10)]
    assert all(d.leader == (d.dealer + 1) % 3 for d in deals)
    assert all(len(hand or ()) == d.round for d in deals for hand in d.hands)


# -- bids --------------------------------------------------------------------------------------


def test_bids_stay_hidden_until_the_last_one_reveals_them_all_at_once() -> None:
    state = given([["yellow-1", "red-2"], ["blue-3", "black-4"], ["pirate-1", "escape-1"]])
    state, first = act(state, 1, Bid(tricks=2))
    assert first == [BidPlaced(seat=1, tricks=2)]
    assert RULES.redact(first[0], 0) == BidPlaced(seat=1, tricks=None)
    assert RULES.redact(first[0], None) == BidPlaced(seat=1, tricks=None)
    assert RULES.redact(first[0], 1) == first[0]
    assert RULES.to_act(state) == [0, 2]
    state, _ = act(state, 0, Bid(tricks=0))
    state, last = act(state, 2, Bid(tricks=1))
    assert last == [BidPlaced(seat=2, tricks=1), BidsRevealed(bids=(0, 2, 1))]
    assert (state.phase, state.bids_revealed, RULES.to_act(state)) == ("playing", True, [0])


def test_a_bid_is_any_number_of_tricks_from_zero_to_the_round_number() -> None:
    state = given([["yellow-1", "red-2", "blue-5"], ["blue-3", "black-4", "red-9"]])
    assert RULES.legal_commands(state, 0) == [Bid(tricks=n) for n in range(4)]
    for bid in (-1, 4):
        assert rejected(state, 0, Bid(tricks=bid)).code == "illegal_bid"


def test_a_bid_is_final() -> None:
    state, _ = act(given([["yellow-1"], ["blue-3"], ["red-4"]]), 0, Bid(tricks=1))
    assert rejected(state, 0, Bid(tricks=0)).code == "already_bid"
    assert RULES.legal_commands(state, 0) == []


def test_no_card_may_be_played_before_every_bid_is_in() -> None:
    state, _ = act(given([["yellow-1"], ["blue-3"]]), 0, Bid(tricks=1))
    assert rejected(state, 1, PlayCard(card="blue-3")).code == "wrong_phase"
    assert rejected(state, 0, PlayCard(card="yellow-1")).code == "wrong_phase"


def test_no_bid_is_taken_once_play_has_started() -> None:
    state = given([["yellow-1"], ["blue-3"]], [1, 0])
    assert rejected(state, 0, Bid(tricks=1)).code == "wrong_phase"


# -- playing -----------------------------------------------------------------------------------


def test_the_seat_left_of_the_dealer_leads_and_play_goes_clockwise() -> None:
    state = given([["yellow-1"], ["blue-3"], ["red-4"]], [0, 0, 1], dealer=0)
    assert RULES.to_act(state) == [1]
    assert rejected(state, 0, PlayCard(card="yellow-1")).code == "not_your_turn"
    state, _ = play(state, (1, "blue-3"))
    assert RULES.to_act(state) == [2]


def test_the_winner_of_a_trick_leads_the_next() -> None:
    state = given([["yellow-1", "red-5"], ["yellow-9", "red-3"], ["yellow-4", "red-1"]], [0, 1, 0])
    state, events = play(state, (0, "yellow-1"), (1, "yellow-9"), (2, "yellow-4"))
    assert events[-1] == TrickWon(trick=1, winner=1, card="yellow-9", bonus=0)
    assert RULES.to_act(state) == [1]
    assert rejected(state, 0, PlayCard(card="red-5")).code == "not_your_turn"


def test_a_card_not_in_hand_or_not_in_the_game_is_refused() -> None:
    state = given([["yellow-1", "red-2"], ["blue-3", "black-4"]], [1, 1])
    assert rejected(state, 0, PlayCard(card="blue-3")).code == "card_not_in_hand"
    assert rejected(state, 0, PlayCard(card="green-3")).code == "unknown_card"


def test_holding_the_lead_suit_one_must_follow_it_or_play_a_special() -> None:
    state = given([["yellow-5", "red-2"], ["yellow-3", "black-9"]], [1, 1])
    state, _ = play(state, (0, "yellow-5"))
    error = rejected(state, 1, PlayCard(card="black-9"))
    assert error.code == "must_follow_suit"
    assert RULES.legal_commands(state, 1) == [PlayCard(card="yellow-3")]


def test_scary_mary_must_be_declared_and_gives_two_legal_commands() -> None:
    state = given([["scary-mary", "red-2"], ["yellow-3", "black-9"]], [1, 1])
    assert rejected(state, 0, PlayCard(card="scary-mary")).code == "declaration_required"
    assert RULES.legal_commands(state, 0) == [
        PlayCard(card="scary-mary", as_="pirate"),
        PlayCard(card="scary-mary", as_="escape"),
        PlayCard(card="red-2"),
    ]


def test_a_declaration_is_refused_for_any_card_but_scary_mary() -> None:
    state = given([["pirate-1", "red-2"], ["yellow-3", "black-9"]], [1, 1])
    assert rejected(state, 0, PlayCard(card="pirate-1", as_="escape")).code == "declaration_not_allowed"


def test_play_card_reads_and_writes_as_on_the_wire() -> None:
    command = msgspec.json.decode(
        b'{"type":"play_card","card":"scary-mary","as":"escape"}', type=RULES.command_type
    )
    assert command == PlayCard(card="scary-mary", as_="escape")
    assert msgspec.to_builtins(PlayCard(card="red-2")) == {"type": "play_card", "card": "red-2"}
    assert msgspec.to_builtins(command) == {"type": "play_card", "card": "scary-mary", "as": "escape"}
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(
            b'{"type":"play_card","card":"scary-mary","as":"mermaid"}', type=RULES.command_type
        )


def test_scary_mary_s_declaration_is_recorded_with_the_play() -> None:
    state = given([["scary-mary", "red-2"], ["yellow-3", "black-9"]], [1, 1])
    state, _ = play(state, (0, "scary-mary:escape"))
    assert state.trick[0].as_ == "escape"


# -- round ends and scoring vectors ------------------------------------------------------------


def test_round_three_bid_two_two_tricks_scores_seventy_and_the_next_round_is_dealt() -> None:
    hands = [["black-13", "black-12", "yellow-1"], ["yellow-2", "red-3", "blue-4"]]
    state = given(hands, [2, 1], round_number=3)
    moves = [(0, "black-13"), (1, "red-3"), (0, "black-12"), (1, "blue-4"), (0, "yellow-1"), (1, "yellow-2")]
    state, events = play(state, *moves)
    assert scored(events) == RoundScored(
        round=3, bids=(2, 1), tricks=(2, 1), bonuses=(0, 0), scores=(70, 50), totals=(70, 50)
    )
    assert (state.round, state.phase, RULES.rounds_completed(state), RULES.current_round(state)) == (
        4,
        "bidding",
        1,
        4,
    )
    assert all(len(hand) == 4 for hand in state.hands)


def test_classic_scoring_scores_the_seed_example_forty() -> None:
    hands = [["black-13", "black-12", "yellow-1"], ["yellow-2", "red-3", "blue-4"]]
    state = given(hands, [2, 1], round_number=3, options=SkullKingOptions(scoring="classic"))
    moves = [(0, "black-13"), (1, "red-3"), (0, "black-12"), (1, "blue-4"), (0, "yellow-1"), (1, "yellow-2")]
    assert scored(play(state, *moves)[1]).scores == (40, 20)


def test_skull_king_pirate_pirate_with_an_exact_bid_earns_a_sixty_bonus() -> None:
    state = given([["skull-king"], ["pirate-1"], ["pirate-2"]], [1, 0, 0])
    _, events = play(state, (0, "skull-king"), (1, "pirate-1"), (2, "pirate-2"))
    line = scored(events)
    assert (line.bonuses, line.scores) == ((60, 0, 0), (20 + 10 + 60, 10, 10))


def test_mermaid_black_seven_skull_king_gives_the_mermaid_the_trick_and_fifty() -> None:
    state = given([["mermaid-1"], ["black-7"], ["skull-king"]], [1, 0, 1])
    _, events = play(state, (0, "mermaid-1"), (1, "black-7"), (2, "skull-king"))
    assert events[3] == TrickWon(trick=1, winner=0, card="mermaid-1", bonus=50)
    assert scored(events).scores == (20 + 10 + 50, 10, -10)


def test_a_missed_bid_voids_the_bonus() -> None:
    state = given([["skull-king"], ["pirate-1"], ["pirate-2"]], [0, 0, 1])
    line = scored(play(state, (0, "skull-king"), (1, "pirate-1"), (2, "pirate-2"))[1])
    assert (line.bonuses, line.scores) == ((0, 0, 0), (-10, 10, -10))


def test_only_escapes_give_the_trick_to_the_leader() -> None:
    state = given([["escape-1"], ["scary-mary"], ["escape-2"]], [1, 0, 0])
    _, events = play(state, (0, "escape-1"), (1, "scary-mary:escape"), (2, "escape-2"))
    assert scored(events).tricks == (1, 0, 0)


def test_the_game_ends_after_round_ten_and_tied_totals_share_the_win() -> None:
    hands = [[f"yellow-{n}" for n in range(1, 11)], [f"red-{n}" for n in range(1, 11)]]
    state = msgspec.structs.replace(given(hands, [10, 0]), totals=(0, 200))
    moves = [move for n in range(1, 11) for move in ((0, f"yellow-{n}"), (1, f"red-{n}"))]
    state, events = play(state, *moves)
    assert scored(events).scores == (20 * 10 + 10 * 10, 10 * 10)
    assert scored(events).totals == (300, 300)
    assert not any(isinstance(e, CardsDealt) for e in events)
    assert RULES.is_terminal(state) and RULES.winners(state) == [0, 1]
    assert RULES.to_act(state) == [] and RULES.legal_commands(state, 0) == []
    assert rejected(state, 0, Bid(tricks=0)).code == "wrong_phase"


def test_each_completed_round_reveals_its_seed_and_the_game_finishes_after_ten() -> None:
    g = play_random(new_game("skull-king", 2, seed=11), random.Random(11))
    reveals = [e.round for e in g.events if isinstance(e, SeedRevealed)]
    assert reveals == list(range(1, 11))
    assert RULES.rounds_completed(g.rules_state) == 10 and RULES.current_round(g.rules_state) == 10
    assert g.state.status == "finished"
