"""Skull King over many random games (hypothesis): every invariant at every step.

Each example is a whole game played from random legal commands; the seed, the player count and
the options are the example, so a failure replays exactly.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.kernel import Rejected
from domain.skull_king import RULES
from domain.skull_king.cards import DECK, SCARY_MARY
from domain.skull_king.commands import Bid, PlayCard
from domain.skull_king.events import BidPlaced, CardsDealt, RoundScored
from domain.skull_king.state import SkullKingState
from tests.support.play import Game, new_game

OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "scoring": st.sampled_from(["seed", "classic"]),
        "character_lead_no_suit": st.booleans(),
        "scary_mary_escape_counts_as_pirate": st.booleans(),
    },
)
GAMES = settings(max_examples=40, deadline=None)


def all_cards(state: SkullKingState) -> Counter[str]:
    """Every card the state accounts for: hands, the trick in progress, the taken tricks, the unused."""
    cards: Counter[str] = Counter(state.unused)
    for hand in state.hands:
        cards.update(hand)
    cards.update(play.card for play in state.trick)
    cards.update(play.card for trick in state.taken for play in trick.plays)
    return cards


def candidates(state: SkullKingState, seat: int) -> list[Bid | PlayCard]:
    """Commands a seat might try: every bid up to r + 1 and every held card, declared every way."""
    out: list[Bid | PlayCard] = [Bid(tricks=n) for n in range(-1, state.round + 2)]
    for card in state.hands[seat] if seat < len(state.hands) else ():
        if card == SCARY_MARY:
            out += [PlayCard(card=card), PlayCard(card=card, as_="pirate"), PlayCard(card=card, as_="escape")]
        else:
            out += [PlayCard(card=card), PlayCard(card=card, as_="pirate")]
    return out


def hidden_from(state: SkullKingState, seat: int) -> set[str]:
    """The cards ``seat`` may not know the whereabouts of: other hands and the unused cards."""
    others = {card for other, hand in enumerate(state.hands) if other != seat for card in hand}
    return others | set(state.unused)


def words(message: str) -> set[str]:
    return set(message.replace(",", " ").replace(".", " ").split())


def check_legal_is_exactly_what_is_accepted(g: Game) -> None:
    """Every legal command is accepted; every other candidate is refused without leaking a card."""
    state = g.rules_state
    for seat in range(state.players):
        legal = g.legal(seat)
        for command in candidates(state, seat):
            try:
                g.table.decide(g.state, command, seat, g.seeds)
            except Rejected as error:
                assert command not in legal, (command, error)
                assert not words(error.message) & hidden_from(state, seat)
            else:
                assert command in legal, command


def check_round_line(event: RoundScored) -> None:
    assert sum(event.tricks) == event.round
    assert all(0 <= bid <= event.round for bid in event.bids)


def play_checked(g: Game, rng: random.Random, every_step: bool) -> list[Any]:
    """Play a random game, checking the invariants as it goes; returns the events of the game."""
    while g.state.status != "finished":
        state = g.rules_state
        assert all_cards(state) == Counter(DECK)
        assert len(state.taken) <= state.round and sum(state.won) == len(state.taken)
        if every_step:
            check_legal_is_exactly_what_is_accepted(g)
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        legal = g.legal(seat)
        assert legal
        for event in g.act(seat, rng.choice(legal)):
            if isinstance(event, RoundScored):
                assert len(state.taken) + 1 == event.round
                check_round_line(event)
    return g.events


def check_redaction(events: list[Any], players: int) -> None:
    """No redacted event shows another seat's hand, the unused cards or another seat's bid."""
    for viewer in [*range(players), None]:
        for event in events:
            seen = RULES.redact(event, viewer) if isinstance(event, RULES.event_type.__args__) else event
            if isinstance(seen, CardsDealt):
                assert seen.unused is None
                assert all((hand is None) == (seat != viewer) for seat, hand in enumerate(seen.hands))
            if isinstance(seen, BidPlaced):
                assert (seen.tricks is None) == (seen.seat != viewer)


@pytest.mark.thorough
@GAMES
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), options=OPTIONS)
def test_random_games_conserve_cards_accept_exactly_the_legal_commands_and_refold(
    seed: int, players: int, options: dict[str, Any]
) -> None:
    g = new_game("skull-king", players, options, seed=seed)
    events = play_checked(g, random.Random(seed), every_step=True)
    state = g.rules_state
    assert len(state.history) == 10 and RULES.is_terminal(state)
    assert [line.round for line in state.history] == list(range(1, 11))
    assert g.refold() == g.state
    assert list(g.state.winners) == RULES.winners(state)
    check_redaction(events, players)


@pytest.mark.thorough
@GAMES
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6))
def test_stored_events_round_trip_through_json_and_refold_to_the_same_state(seed: int, players: int) -> None:
    g = new_game("skull-king", players, seed=seed)
    play_checked(g, random.Random(seed), every_step=False)
    decoder = msgspec.json.Decoder(g.table.event_type)
    stored = [decoder.decode(msgspec.json.encode(event)) for event in g.events]
    assert stored == g.events
    assert g.table.fold(None, stored) == g.state
