"""Skull table options (docs/rules.md "Skull"); every field is recorded at creation."""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from domain.kernel import Options

FirstAfterElimination = Literal["eliminated_chooses", "left_neighbour"]

MIN_PLAYERS = 3
MAX_PLAYERS = 6
MAX_PLAYERS_TWO_SETS = 12


class SkullOptions(Options, frozen=True, kw_only=True):
    """How this table plays Skull.

    - ``two_sets``: two boxes combined, so 3-12 players instead of 3-6 (each still has 4 discs).
    - ``reveal_all_own_first``: the challenger turns his whole own stack even beyond his bid
      (PL/TR wording) instead of stopping at the bid (FR seed, official English rules).
    - ``first_after_elimination``: who starts after the challenger was eliminated.
      ``eliminated_chooses`` (FR/TR): the skull's owner, or, on his own skull, the eliminated
      player names the first player. ``left_neighbour`` (PL): the next remaining seat clockwise.
    - ``last_chance``: the FR variant's "Last chance" disc.
    - ``first_player``: the seat that starts round 1; ``None`` draws it fairly.
    """

    two_sets: bool = False
    reveal_all_own_first: bool = False
    first_after_elimination: FirstAfterElimination = "eliminated_chooses"
    last_chance: bool = False
    first_player: Annotated[int, Meta(ge=0)] | None = None


def player_range(options: SkullOptions) -> tuple[int, int]:
    """The smallest and largest player counts the options allow."""
    return MIN_PLAYERS, MAX_PLAYERS_TWO_SETS if options.two_sets else MAX_PLAYERS
