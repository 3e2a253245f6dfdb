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

import msgspec

from domain.kernel import Rules


@dataclass(frozen=True, kw_only=True)
class ReplayCut:
    """How the game's stream is cut into rounds and steps for the replay viewer, on event tags alone.

    ``round_opens``: the events that open a round (each carries ``round``); ``round_ends``: the
    events that close one (each carries ``round``; the public log records the head after it, and
    the replay viewer counts the rounds played by it). ``step_opens``: the
    event types that open a step, with the kind of step (``"trick"``, ``"bidding"``). ``step_closes``:
    the events after which the next opening event starts a new step even of the same kind (the next
    trick after ``trick_won``). An event that opens the kind of step in progress continues it.
    """

    round_opens: frozenset[str]
    round_ends: frozenset[str]
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
    beside the option in the lobby and served by ``GET /games/options``. ``draws``: every label the
    game draws with from its ``Chance`` (``uniform`` or ``shuffle``), with the draw in words (the
    round it uses, what it decides, the canonical order of what is shuffled); served by
    ``GET /games/options`` so anyone can re-derive an outcome, and held to the game's actual draws by
    ``tests/test_registry.py``.
    ``max_players_with_options``: the largest table an option allows, when one widens the range, and
    ``widening_option`` that boolean option (Skull: 12 players with ``two_sets``); the lobby and the
    create schema offer the wider tables with it. ``seat_options``: the table options whose value is
    a seat, 0 to the table's players - 1 (Skull's ``first_player``).
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
    draws: Mapping[str, str]
    max_players_with_options: int | None = None
    widening_option: str = ""  # the boolean option allowing max_players_with_options: "two_sets"
    seat_options: frozenset[str] = frozenset()  # options whose value is a seat: "first_player"
    rules_module: str = ""
    views_module: str = ""
    bot_module: str = ""

    def __post_init__(self) -> None:
        if self.rules.name != self.name:
            raise ValueError(f"the rules of {self.name!r} call themselves {self.rules.name!r}")
        if not self.min_players <= self.default_players <= self.max_players:
            raise ValueError(f"{self.name}: default_players is outside min_players..max_players")
        self._check_options()
        if not self.rules_module:
            object.__setattr__(self, "rules_module", f"domain.{self.package}")
        if not self.views_module:
            object.__setattr__(self, "views_module", f"projections.{self.package}")
        if not self.bot_module:
            object.__setattr__(self, "bot_module", f"bots.{self.package}")

    def _check_options(self) -> None:
        fields = {f.name: f for f in msgspec.structs.fields(self.rules.options_type)}
        if (self.max_players_with_options is None) != (not self.widening_option):
            raise ValueError(f"{self.name}: max_players_with_options and widening_option go together")
        if self.max_players_with_options is not None:
            if self.max_players_with_options <= self.max_players:
                raise ValueError(f"{self.name}: max_players_with_options is not above max_players")
            widening = fields.get(self.widening_option)
            if widening is None or widening.type is not bool or widening.default is not False:
                raise ValueError(
                    f"{self.name}: {self.widening_option!r} is not a boolean option, off by default"
                )
        unknown = sorted(self.seat_options - set(fields))
        if unknown:
            raise ValueError(f"{self.name}: seat_options names no option of the game: {', '.join(unknown)}")
