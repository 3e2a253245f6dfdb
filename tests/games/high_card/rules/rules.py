"""High Card's ``domain.kernel.Rules``: the pieces tied together, and what each viewer may see."""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.fairness import Chance
from domain.kernel import Rejected, Rules, Seat
from tests.games.high_card.rules import decide, evolve, legal
from tests.games.high_card.rules.commands import HighCardCommand
from tests.games.high_card.rules.events import CardsDealt, HighCardEvent
from tests.games.high_card.rules.options import MAX_PLAYERS, MIN_PLAYERS, HighCardOptions
from tests.games.high_card.rules.state import HighCardState


class HighCardRules:
    """``domain.kernel.Rules`` for High Card."""

    name = "high-card"
    options_type = HighCardOptions
    command_type = HighCardCommand
    event_type = HighCardEvent
    state_type = HighCardState

    def check_options(self, options: HighCardOptions, players: int) -> None:
        if not isinstance(options, HighCardOptions):
            raise Rejected("invalid_options", "These are not High Card table options.")
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise Rejected(
                "bad_player_count", f"High Card is played by {MIN_PLAYERS} to {MAX_PLAYERS} players."
            )

    def initial_state(self, options: HighCardOptions, players: int) -> HighCardState:
        return HighCardState(options=options, players=players, totals=(0,) * players, taken=(0,) * players)

    def start(self, state: HighCardState, chance: Chance) -> list[HighCardEvent]:
        return decide.start(state, chance)

    def decide(
        self, state: HighCardState, command: HighCardCommand, seat: Seat, chance: Chance
    ) -> list[HighCardEvent]:
        return decide.DECIDERS.decide(state, command, seat, chance)

    def evolve(self, state: HighCardState, event: HighCardEvent) -> HighCardState:
        return evolve.EVOLVERS.evolve(state, event)

    def is_terminal(self, state: HighCardState) -> bool:
        return state.phase == "finished"

    def current_round(self, state: HighCardState) -> int:
        return max(1, state.round)

    def rounds_completed(self, state: HighCardState) -> int:
        return state.scored

    def withheld_rounds(self, state: HighCardState) -> frozenset[int]:
        """None: a round's set-aside cards stay secret only while the round is played."""
        return frozenset()

    def phase(self, state: HighCardState) -> str:
        return state.phase

    def to_act(self, state: HighCardState) -> list[Seat]:
        return legal.to_act(state)

    def legal_commands(self, state: HighCardState, seat: Seat) -> list[HighCardCommand]:
        return legal.legal_commands(state, seat)

    def redact(self, event: HighCardEvent, viewer: Seat | None) -> HighCardEvent:
        """Other seats' hands and the set-aside cards become ``None``."""
        if isinstance(event, CardsDealt):
            hands = tuple(hand if seat == viewer else None for seat, hand in enumerate(event.hands))
            return replace(event, hands=hands, set_aside=None)
        return event

    def scramble(self, state: HighCardState, viewer: Seat | None, rng: random.Random) -> HighCardState:
        """The other seats' hands and the set-aside cards dealt again at random among themselves."""
        if not state.hands:  # before the deal nothing is hidden
            return state
        hidden = [seat for seat in range(state.players) if seat != viewer]
        pool = [card for seat in hidden for card in state.hands[seat]] + list(state.set_aside)
        rng.shuffle(pool)
        hands = list(state.hands)
        for seat in hidden:
            size = len(state.hands[seat])
            hands[seat], pool = tuple(sorted(pool[:size])), pool[size:]
        return replace(state, hands=tuple(hands), set_aside=tuple(pool))

    def default_command(self, state: HighCardState, seat: Seat, chance: Chance) -> HighCardCommand | None:
        """None: the seat's bot plays."""
        return None

    def scores(self, state: HighCardState) -> list[int]:
        return list(state.totals)

    def winners(self, state: HighCardState) -> list[Seat]:
        if not self.is_terminal(state):
            return []
        best = max(state.totals)
        return [seat for seat, total in enumerate(state.totals) if total == best]


RULES: Rules[HighCardState, HighCardCommand, HighCardEvent, HighCardOptions] = HighCardRules()
