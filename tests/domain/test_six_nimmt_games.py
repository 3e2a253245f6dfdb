"""6 nimmt! over many random games (hypothesis): every invariant at every step.

Each example is a whole game played from random legal commands; the seed, the player count and
the options are the example, so a failure replays exactly with ``play_checked`` and the same
arguments. Options are drawn so that games stay short (a low score limit or 1-3 rounds).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import chain
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.kernel import Event, Rejected
from domain.six_nimmt import RULES
from domain.six_nimmt.cards import bullheads_of, standard_deck, tactical_deck
from domain.six_nimmt.commands import ChooseRow, DraftCard, SelectCard, SixNimmtCommand
from domain.six_nimmt.events import CardsDealt, CardSelected, RowTaken
from domain.six_nimmt.state import SixNimmtState
from domain.table import TABLE_EVENTS
from tests.support.play import Game, new_game, play_random

END = st.one_of(
    st.fixed_dictionaries({"rounds": st.integers(1, 3)}),
    st.fixed_dictionaries({"end_score": st.integers(1, 70), "end_compare": st.sampled_from(["gt", "ge"])}),
)
OPTIONS = st.builds(lambda end, tactical: {**end, "tactical": tactical}, END, st.booleans())
PLAYERS = st.integers(2, 10)
SEEDS = st.integers(0, 2**32)
GAMES = settings(max_examples=25, deadline=None)
FULL_CHECK_RATE = 0.1  # share of steps where every seat tries every candidate command


def card_places(state: SixNimmtState) -> list[int]:
    """Every card the state puts somewhere, one entry per place it is found in."""
    face_down = [card for card in state.selected if card is not None]
    return [
        *chain.from_iterable(state.hands),
        *chain.from_iterable(state.rows),
        *chain.from_iterable(state.piles),
        *face_down,
        *state.pending,
        *state.pool,
        *state.unused,
    ]


def check_every_card_in_exactly_one_place(state: SixNimmtState) -> None:
    if state.round == 0:
        return
    deck = tactical_deck(state.players) if state.options.tactical else standard_deck()
    assert sorted(card_places(state)) == list(deck)


def check_totals_are_the_bullheads_taken(state: SixNimmtState, taken: list[int]) -> None:
    """Totals = scored lines + the live pile (unless just scored) = every ``row_taken`` so far."""
    scored = len(state.history) == state.round
    for seat, total in enumerate(state.totals):
        live = 0 if scored else bullheads_of(state.piles[seat])
        assert total == sum(line[seat] for line in state.history) + live == taken[seat]


def scrambled(state: SixNimmtState, viewer: int | None, rng: random.Random) -> SixNimmtState:
    """The same state as ``viewer`` knows it, with everything hidden from it shuffled.

    Standard mode: other seats' hands, face-down cards and the unused cards are redealt among
    themselves (same sizes). Tactical mode: hands are known as sets, so only which card of another
    seat's set lies face down changes.
    """
    others = [seat for seat in range(state.players) if seat != viewer]
    hands, selected = list(state.hands), list(state.selected)
    if state.options.tactical:
        for seat in others:
            if selected[seat] is not None:
                held = sorted((*hands[seat], selected[seat]))  # type: ignore[type-var]
                selected[seat] = held.pop(rng.randrange(len(held)))
                hands[seat] = tuple(held)
        return msgspec.structs.replace(state, hands=tuple(hands), selected=tuple(selected))
    hidden = [*state.unused]
    for seat in others:
        hidden += [*hands[seat], *([selected[seat]] if selected[seat] is not None else [])]
    rng.shuffle(hidden)
    for seat in others:
        size = len(hands[seat])
        hands[seat], hidden = tuple(sorted(hidden[:size])), hidden[size:]
        if selected[seat] is not None:
            selected[seat], hidden = hidden[0], hidden[1:]
    return msgspec.structs.replace(state, hands=tuple(hands), selected=tuple(selected), unused=tuple(hidden))


def candidates(state: SixNimmtState) -> Iterator[SixNimmtCommand]:
    """Commands a seat might try: any card number around the deck, any row number around 0-3."""
    for card in range(0, 106):
        yield SelectCard(card=card)
        yield DraftCard(card=card)
    for row in range(-1, 5):
        yield ChooseRow(row=row)


class _ChanceUsed(Exception):
    """A candidate got far enough to draw (it ended a round): it was accepted."""


class _NoChance:
    """Stands in for ``Chance`` while probing candidates, so that no probe pays for a deal."""

    def __getattr__(self, name: str) -> Any:
        raise _ChanceUsed(name)


NO_CHANCE: Any = _NoChance()


def outcome(state: SixNimmtState, command: SixNimmtCommand, seat: int) -> tuple[str, str] | None:
    """``None`` when accepted, else the refusal's code and message."""
    try:
        RULES.decide(state, command, seat, NO_CHANCE)
    except Rejected as refused:
        return refused.code, refused.message
    except _ChanceUsed:
        return None
    return None


def check_legal_is_exactly_what_is_accepted(g: Game, rng: random.Random) -> None:
    """Accepted iff legal; a refusal reads the same whatever is hidden from the refused seat."""
    state = g.rules_state
    for seat in range(state.players):
        legal = g.legal(seat)
        with_other_secrets = scrambled(state, seat, rng)
        for command in candidates(state):
            refusal = outcome(state, command, seat)
            assert (refusal is None) == (command in legal), (command, refusal)
            assert outcome(with_other_secrets, command, seat) == refusal, command


def game_events(events: list[Event]) -> list[Any]:
    return [event for event in events if not isinstance(event, TABLE_EVENTS)]


def play(players: int, options: dict[str, Any], seed: int) -> Game:
    """Play one random game without the per-step checks (they have their own test)."""
    return play_random(new_game("six-nimmt", players, options, seed=seed), random.Random(seed))


def play_checked(players: int, options: dict[str, Any], seed: int) -> Game:
    """Play one random game, checking every invariant after every event; returns the game."""
    g = new_game("six-nimmt", players, options, seed=seed)
    rng = random.Random(seed)
    taken = [0] * players
    state = RULES.initial_state(g.rules_state.options, players)

    def follow(events: list[Event]) -> None:
        nonlocal state
        for event in game_events(events):
            state = RULES.evolve(state, event)
            if isinstance(event, RowTaken):
                assert event.bullheads == bullheads_of(event.taken)
                taken[event.seat] += event.bullheads
            check_every_card_in_exactly_one_place(state)
        check_totals_are_the_bullheads_taken(state, taken)
        assert state == g.rules_state

    follow(g.events)
    while g.state.status != "finished":
        if rng.random() < FULL_CHECK_RATE:
            check_legal_is_exactly_what_is_accepted(g, rng)
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        legal = g.legal(seat)
        for command in legal:  # every legal command is accepted
            g.table.decide(g.state, command, seat, g.seeds)
        follow(g.act(seat, rng.choice(legal)))
    return g


@pytest.mark.thorough
@settings(max_examples=60, deadline=None)
@given(players=PLAYERS, options=OPTIONS, seed=SEEDS)
def test_random_games_keep_every_card_in_one_place_and_totals_equal_to_the_bullheads_taken(
    players: int, options: dict[str, Any], seed: int
) -> None:
    g = play_checked(players, options, seed)
    state = g.rules_state
    assert RULES.is_terminal(state)
    assert list(g.state.winners) == RULES.winners(state)
    assert [seat for seat, total in enumerate(state.totals) if total == min(state.totals)] == RULES.winners(
        state
    )
    if options.get("rounds"):
        assert state.round == options["rounds"]


@GAMES
@given(players=PLAYERS, options=OPTIONS, seed=SEEDS)
def test_stored_events_round_trip_through_json_and_refold_to_the_same_state(
    players: int, options: dict[str, Any], seed: int
) -> None:
    g = play(players, options, seed)
    decoder = msgspec.json.Decoder(g.table.event_type)
    stored = [decoder.decode(msgspec.json.encode(event)) for event in g.events]
    assert stored == g.events
    assert g.table.fold(None, stored) == g.state == g.refold()


@GAMES
@given(players=PLAYERS, options=OPTIONS, seed=SEEDS)
def test_redacted_events_never_show_another_seats_hand_or_face_down_card(
    players: int, options: dict[str, Any], seed: int
) -> None:
    g = play(players, options, seed)
    for viewer in [*range(players), None]:
        for event in game_events(g.events):
            seen = g.table.redact(event, viewer, finished=False)
            if isinstance(seen, CardsDealt):
                assert seen.unused is None
                assert all((hand is None) == (seat != viewer) for seat, hand in enumerate(seen.hands))
            elif isinstance(seen, CardSelected):
                assert (seen.card is None) == (seen.seat != viewer)
            else:
                assert seen == event
        assert all(g.table.redact(e, viewer, finished=True) == e for e in g.events)
