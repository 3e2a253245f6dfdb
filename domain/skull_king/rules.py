"""The Skull King Decider: ten rounds of hidden simultaneous bids and tricks (docs/rules.md "Skull King").

Commands are decided in ``decide`` (tricks in its helper ``tricks``, a round's score in ``scoring``),
events recorded in ``evolve``, what a seat may send in ``legal``. This module ties them to
``domain.kernel.Rules`` and says what each viewer may see of an event.
"""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.fairness import Chance
from domain.kernel import Rejected, Rules, Seat
from domain.skull_king import decide, evolve, legal, scramble
from domain.skull_king.commands import SkullKingCommand
from domain.skull_king.events import BidPlaced, CardsDealt, SkullKingEvent
from domain.skull_king.options import MAX_PLAYERS, MIN_PLAYERS, SkullKingOptions
from domain.skull_king.state import SkullKingState


class SkullKingRules:
    """``domain.kernel.Rules`` for Skull King; stateless, so one shared instance serves every table."""

    name = "skull-king"
    options_type = SkullKingOptions
    command_type = SkullKingCommand
    event_type = SkullKingEvent
    state_type = SkullKingState

    def check_options(self, options: SkullKingOptions, players: int) -> None:
        if not isinstance(options, SkullKingOptions):
            raise Rejected("invalid_options", "These are not Skull King table options.")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise Rejected(
                "bad_player_count", f"Skull King is played by {MIN_PLAYERS} to {MAX_PLAYERS} players."
            )

    def initial_state(self, options: SkullKingOptions, players: int) -> SkullKingState:
        return SkullKingState(options=options, players=players, totals=(0,) * players)

    def start(self, state: SkullKingState, chance: Chance) -> list[SkullKingEvent]:
        return decide.start(state, chance)

    def decide(
        self, state: SkullKingState, command: SkullKingCommand, seat: Seat, chance: Chance
    ) -> list[SkullKingEvent]:
        return decide.DECIDERS.decide(state, command, seat, chance)

    def evolve(self, state: SkullKingState, event: SkullKingEvent) -> SkullKingState:
        return evolve.EVOLVERS.evolve(state, event)

    def is_terminal(self, state: SkullKingState) -> bool:
        return state.phase == "finished"

    def current_round(self, state: SkullKingState) -> int:
        return max(1, state.round)

    def rounds_completed(self, state: SkullKingState) -> int:
        """A round is completed once its ``round_scored`` is recorded."""
        return len(state.history)

    def withheld_rounds(self, state: SkullKingState) -> frozenset[int]:
        """None: every dealt card is played by the end of a round; the unused cards a seed would expose are
        hidden by no rule."""
        return frozenset()

    def phase(self, state: SkullKingState) -> str:
        return state.phase

    def to_act(self, state: SkullKingState) -> list[Seat]:
        return legal.to_act(state)

    def legal_commands(self, state: SkullKingState, seat: Seat) -> list[SkullKingCommand]:
        return legal.legal_commands(state, seat)

    def default_command(self, state: SkullKingState, seat: Seat, chance: Chance) -> SkullKingCommand | None:
        """None: a bid or a card has no rule-book default, so the seat's bot plays it."""
        return None

    def scramble(self, state: SkullKingState, viewer: Seat | None, rng: random.Random) -> SkullKingState:
        """Other seats' hands and the unused cards dealt again, keeping the suits a seat showed it
        lacks; other seats' unrevealed bids drawn again (``domain/skull_king/scramble.py``)."""
        return scramble.scramble(state, viewer, rng)

    def redact(self, event: SkullKingEvent, viewer: Seat | None) -> SkullKingEvent:
        """Other seats' hands, the unused cards and other seats' unrevealed bids become ``None``."""
        if isinstance(event, CardsDealt):
            hands = tuple(hand if seat == viewer else None for seat, hand in enumerate(event.hands))
            return replace(event, hands=hands, unused=None)
        if isinstance(event, BidPlaced) and event.seat != viewer:
            return replace(event, tricks=None)
        return event

    def scores(self, state: SkullKingState) -> list[int]:
        return list(state.totals)

    def winners(self, state: SkullKingState) -> list[Seat]:
        """Highest total after round 10; ties share."""
        if not self.is_terminal(state):
            return []
        best = max(state.totals)
        return [seat for seat, total in enumerate(state.totals) if total == best]


RULES: Rules[SkullKingState, SkullKingCommand, SkullKingEvent, SkullKingOptions] = SkullKingRules()
