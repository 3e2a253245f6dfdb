"""What a game declares about itself: its ``GameSpec``, the one object the registry holds per game.

A game lives in its own package and states here every fact the rest of the service needs about it,
so nothing central keeps a table keyed by game name: how people write its name, its blurb, its
player counts, which way its scores run, how its recorded stream is cut for the replay viewer,
what each of its table options means, and where its views and bot live. ``domain.games`` lists the
specs; everything else asks the registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from domain.kernel import Rules


@dataclass(frozen=True, kw_only=True)
class ReplayCut:
    """How the game's stream is cut into rounds and steps for the replay viewer, on event tags alone.

    ``round_opens``: the events that open a round (each carries ``round``). ``step_opens``: the
    event types that open a step, with the kind of step (``"trick"``, ``"bidding"``). ``step_closes``:
    the events after which the next opening event starts a new step even of the same kind (the next
    trick after ``trick_won``). An event that opens the kind of step in progress continues it.
    """

    round_opens: frozenset[str]
    step_opens: Mapping[str, str]
    step_closes: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, kw_only=True)
class GameSpec:
    """One playable game.

    ``min_players`` and ``max_players`` are the range without options (options may widen it, as
    Skull's ``two_sets`` does; ``rules.check_options`` has the last word). ``default_players`` is
    the table size the demo, the CLI and the bots' arena use when none is given.
    ``lower_score_wins``: the player with the fewest points wins (6 nimmt!'s bullheads); ratings,
    rankings and every score list read it. ``option_notes``: one sentence per table option, shown
    beside the option in the lobby and served by ``GET /games/options``.
    ``package`` names the game's modules by convention: its rules in ``domain/<package>/``, its views
    in ``projections/<package>`` and its bot in ``bots/<package>``; a game registered from elsewhere
    (the tests' own game) names ``rules_module``, ``views_module`` and ``bot_module`` itself.
    """

    name: str  # the public name, in URLs and stored events: "six-nimmt"
    title: str  # how people write it: "6 nimmt!"
    blurb: str  # a few symbols that show the game at a glance in the lobby: "104 · ▼"
    package: str  # the module name shared by its rules, views and bot: "six_nimmt"
    rules: Rules[Any, Any, Any, Any]
    min_players: int
    max_players: int
    default_players: int
    lower_score_wins: bool = False
    replay_cut: ReplayCut
    option_notes: Mapping[str, str]
    rules_module: str = ""
    views_module: str = ""
    bot_module: str = ""

    def __post_init__(self) -> None:
        if self.rules.name != self.name:
            raise ValueError(f"the rules of {self.name!r} call themselves {self.rules.name!r}")
        if not self.min_players <= self.default_players <= self.max_players:
            raise ValueError(f"{self.name}: default_players is outside min_players..max_players")
        if not self.rules_module:
            object.__setattr__(self, "rules_module", f"domain.{self.package}")
        if not self.views_module:
            object.__setattr__(self, "views_module", f"projections.{self.package}")
        if not self.bot_module:
            object.__setattr__(self, "bot_module", f"bots.{self.package}")
