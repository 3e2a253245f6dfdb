"""The Skull rules as a pure Decider (docs/rules.md "Skull"); ``RULES`` is the instance.

Commands are decided in ``decide`` (the reveal and the round's end in its helper ``settle``), events
recorded in ``evolve``, what a seat may send in ``legal``. This module ties them to
``domain.kernel.Rules`` and says what each viewer may see of an event.
"""

from __future__ import annotations

import random

from msgspec.structs import replace

from domain.fairness import Chance
from domain.kernel import Rejected, Rules, Seat
from domain.skull import decide, evolve, legal, scramble
from domain.skull.commands import SkullCommand
from domain.skull.events import DiscLost, DiscPlaced, DiscsShuffled, SkullEvent
from domain.skull.options import SkullOptions, player_range
from domain.skull.state import SeatState, SkullState


class SkullRules:
    name = "skull"
    options_type = SkullOptions
    command_type = SkullCommand
    event_type = SkullEvent
    state_type = SkullState

    def check_options(self, options: SkullOptions, players: int) -> None:
        low, high = player_range(options)
        if not low <= players <= high:
            more = "" if options.two_sets else " (or up to 12 with the two_sets option)"
            raise Rejected("bad_player_count", f"Skull is played by {low} to {high} players{more}.")
        if options.first_player is not None and options.first_player >= players:
            raise Rejected("invalid_options", f"The first player must be a seat from 0 to {players - 1}.")

    def initial_state(self, options: SkullOptions, players: int) -> SkullState:
        return SkullState(options=options, seats=tuple(SeatState() for _ in range(players)))

    def start(self, state: SkullState, chance: Chance) -> list[SkullEvent]:
        return decide.start(state, chance)

    def decide(
        self, state: SkullState, command: SkullCommand, seat: Seat, chance: Chance
    ) -> list[SkullEvent]:
        return decide.DECIDERS.decide(state, command, seat, chance)

    def evolve(self, state: SkullState, event: SkullEvent) -> SkullState:
        return evolve.EVOLVERS.evolve(state, event)

    def is_terminal(self, state: SkullState) -> bool:
        return state.phase == "finished"

    def current_round(self, state: SkullState) -> int:
        """The round in progress; while the eliminated challenger names a first player, the next one."""
        return state.round if state.phase == "finished" else state.rounds_completed + 1

    def rounds_completed(self, state: SkullState) -> int:
        return state.rounds_completed

    def withheld_rounds(self, state: SkullState) -> frozenset[int]:
        """Every completed round from the first blind draw on, sealed until the game ends.

        A blind draw's seed re-derives the shuffle, and with the public position and the public
        starting composition it would name the lost disc, which only its owner may know. Since
        s_(r-1) = SHA-256(s_r), revealing any later round's seed would expose it too.
        """
        if not state.blind_draw_rounds:
            return frozenset()
        return frozenset(range(min(state.blind_draw_rounds), state.rounds_completed + 1))

    def phase(self, state: SkullState) -> str:
        return state.phase

    def to_act(self, state: SkullState) -> list[Seat]:
        return legal.to_act(state)

    def legal_commands(self, state: SkullState, seat: Seat) -> list[SkullCommand]:
        return legal.legal_commands(state, seat)

    def default_command(self, state: SkullState, seat: Seat, chance: Chance) -> SkullCommand | None:
        return legal.default_command(state, seat, chance)

    def scramble(self, state: SkullState, viewer: Seat | None, rng: random.Random) -> SkullState:
        """Other seats' hands, lost discs and face-down stack discs drawn again from their own discs;
        the blind draw's order shuffled again (``domain/skull/scramble.py``)."""
        return scramble.scramble(state, viewer, rng)

    def redact(self, event: SkullEvent, viewer: Seat | None) -> SkullEvent:
        """Hide a placed disc (unless it is the visibly distinct Last chance disc) and a lost disc
        from everyone but their owner; the blind draw's order from everyone while the game runs."""
        if isinstance(event, DiscPlaced) and event.disc != "last_chance" and viewer != event.seat:
            return replace(event, disc=None)
        if isinstance(event, DiscLost) and viewer != event.seat:
            return replace(event, disc=None)
        if isinstance(event, DiscsShuffled):
            return replace(event, order=None)
        return event

    def scores(self, state: SkullState) -> list[int]:
        return [seat.points for seat in state.seats]

    def winners(self, state: SkullState) -> list[Seat]:
        return state.winners() if state.phase == "finished" else []


RULES: Rules[SkullState, SkullCommand, SkullEvent, SkullOptions] = SkullRules()
