"""The rules of 6 nimmt! (docs/rules.md) as a pure Decider; ``RULES`` is the instance the table uses.

Commands are decided in ``decide`` (a batch's consequences unfold in its helper ``flow``), events
recorded in ``evolve``, what a seat may send in ``legal``. This module ties them to
``domain.kernel.Rules`` and says what each viewer may see of an event.
"""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.fairness import Chance
from domain.kernel import Rejected, Rules, Seat
from domain.six_nimmt import decide, evolve, legal, scramble
from domain.six_nimmt.commands import SixNimmtCommand
from domain.six_nimmt.events import CardsDealt, CardSelected, SixNimmtEvent
from domain.six_nimmt.options import MAX_END_SCORE, MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, SixNimmtOptions
from domain.six_nimmt.state import SixNimmtState, fresh_state


class SixNimmtRules:
    """6 nimmt! for 2-10 players, standard or tactical; see the module docstring."""

    name = "six-nimmt"
    options_type = SixNimmtOptions
    command_type = SixNimmtCommand
    event_type = SixNimmtEvent
    state_type = SixNimmtState

    def check_options(self, options: SixNimmtOptions, players: int) -> None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise Rejected("bad_player_count", f"6 nimmt! is for {MIN_PLAYERS} to {MAX_PLAYERS} players.")
        if not 1 <= options.end_score <= MAX_END_SCORE:
            raise Rejected("invalid_options", f"end_score must be between 1 and {MAX_END_SCORE}.")
        if options.rounds is not None and not 1 <= options.rounds <= MAX_ROUNDS:
            raise Rejected("invalid_options", f"rounds must be between 1 and {MAX_ROUNDS}, or null.")

    def initial_state(self, options: SixNimmtOptions, players: int) -> SixNimmtState:
        return fresh_state(options, players)

    def start(self, state: SixNimmtState, chance: Chance) -> list[SixNimmtEvent]:
        return decide.start(state, chance)

    def decide(
        self, state: SixNimmtState, command: SixNimmtCommand, seat: Seat, chance: Chance
    ) -> list[SixNimmtEvent]:
        return decide.DECIDERS.decide(state, command, seat, chance)

    def evolve(self, state: SixNimmtState, event: SixNimmtEvent) -> SixNimmtState:
        return evolve.EVOLVERS.evolve(state, event)

    def is_terminal(self, state: SixNimmtState) -> bool:
        return state.phase == "finished"

    def current_round(self, state: SixNimmtState) -> int:
        """The round last dealt (the next deal happens in the batch that scores a round); 1 at first."""
        return max(state.round, 1)

    def rounds_completed(self, state: SixNimmtState) -> int:
        """Scored rounds: once ``round_scored`` is recorded, that round's seed may be revealed."""
        return state.rounds_completed()

    def withheld_rounds(self, state: SixNimmtState) -> frozenset[int]:
        """None: every hand is played out and the rows are public by the end of a round; the unused cards
        a seed would expose are hidden by no rule."""
        return frozenset()

    def phase(self, state: SixNimmtState) -> str:
        return state.phase

    def to_act(self, state: SixNimmtState) -> list[Seat]:
        return legal.to_act(state)

    def legal_commands(self, state: SixNimmtState, seat: Seat) -> list[SixNimmtCommand]:
        return legal.legal_commands(state, seat)

    def default_command(self, state: SixNimmtState, seat: Seat, chance: Chance) -> SixNimmtCommand | None:
        return legal.default_command(state, seat)

    def scramble(self, state: SixNimmtState, viewer: Seat | None, rng: random.Random) -> SixNimmtState:
        """Other seats' hands, face-down cards and the unused rest dealt again; in the tactical mode
        only which card of its public hand a seat put face down (``domain/six_nimmt/scramble.py``)."""
        return scramble.scramble(state, viewer, rng)

    def redact(self, event: SixNimmtEvent, viewer: Seat | None) -> SixNimmtEvent:
        """Other seats' dealt hands, the undealt rest and face-down cards stay hidden."""
        if isinstance(event, CardsDealt):
            hands = tuple(hand if seat == viewer else None for seat, hand in enumerate(event.hands))
            return replace(event, hands=hands, unused=None)
        if isinstance(event, CardSelected) and event.seat != viewer:
            return replace(event, card=None)
        return event

    def scores(self, state: SixNimmtState) -> list[int]:
        """Bullheads taken so far, the round in play included (lower is better)."""
        return list(state.totals)

    def winners(self, state: SixNimmtState) -> list[Seat]:
        """The lowest total wins; equal lowest totals share the victory."""
        if state.phase != "finished":
            return []
        best = min(state.totals)
        return [seat for seat, total in enumerate(state.totals) if total == best]


RULES: Rules[SixNimmtState, SixNimmtCommand, SixNimmtEvent, SixNimmtOptions] = SixNimmtRules()
