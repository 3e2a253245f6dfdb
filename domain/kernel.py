"""The shared kernel: what every game's rules look like to the rest of Tablestream.

Each game is a *Decider* (``Rules``): ``initial_state``, ``start``, ``decide``, ``evolve``,
``is_terminal``, plus ``legal_commands``, per-seat ``redact`` and per-viewer ``scramble``. Commands
and events are msgspec Structs in tagged unions with explicit, stable tags (field ``type``).
Everything is pure: the only source of chance is the ``Chance`` object handed in, derived from
committed seeds (and ``scramble``'s own ``rng``, handed in by its caller).

What every game builds its Decider from: ``Deciders`` and ``Evolvers`` (one small function per
command or event type), ``Unfolding`` (a decision made in steps, each on the state the previous
events lead to) and ``fold``, the one place events are folded into a state.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import msgspec

from domain.fairness import Chance

Seat = int


class Rejected(Exception):
    """The rules refuse a command. ``code`` is stable snake_case; ``message`` is one human sentence.

    A plain ``Rejected`` is a rule violation (HTTP 422); a ``Conflict`` is a refusal because of the
    table's state rather than the command's content (HTTP 409: full, not started, game over).
    """

    kind: ClassVar[str] = "rule"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class Conflict(Rejected):
    kind: ClassVar[str] = "conflict"


class Command(msgspec.Struct, tag_field="type", frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Base of every player command. Subclasses set an explicit ``tag`` (the wire ``type``)."""


class Event(msgspec.Struct, tag_field="type", frozen=True, kw_only=True):
    """Base of every stored event. Subclasses set an explicit ``tag``; past tense names."""


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Base of a game's table options; every field has a default and is recorded at creation."""


S = TypeVar("S")
C = TypeVar("C", bound=Command)
E = TypeVar("E", bound=Event)
Opt = TypeVar("Opt", bound=Options)
E_contra = TypeVar("E_contra", contravariant=True)


@runtime_checkable
class Rules(Protocol, Generic[S, C, E, Opt]):
    """One game's rules. Implementations are stateless modules/objects; state is a frozen Struct.

    ``evolve`` only records what ``decide`` decided: it never validates, never draws, never fails.
    """

    name: str  # the public game name: "skull", "six-nimmt", "skull-king"
    options_type: type[Opt]
    command_type: Any  # the tagged Union of this game's commands
    event_type: Any  # the tagged Union of this game's events (table events excluded)
    state_type: type[S]

    def check_options(self, options: Opt, players: int) -> None:
        """Raise ``Rejected`` (``invalid_options``, ``bad_player_count``) for a table the rules refuse."""

    def initial_state(self, options: Opt, players: int) -> S: ...

    def start(self, state: S, chance: Chance) -> list[E]:
        """The events that open play once every seat is taken (first player, first deal, ...)."""

    def decide(self, state: S, command: C, seat: Seat, chance: Chance) -> list[E]:
        """The events a command produces, or ``Rejected`` with a specific code."""

    def evolve(self, state: S, event: E) -> S: ...

    def is_terminal(self, state: S) -> bool: ...

    def current_round(self, state: S) -> int:
        """The 1-based round being played (whose seed is in use); draws before round 1 belong to 1."""

    def rounds_completed(self, state: S) -> int:
        """How many rounds are over, so their seeds may be revealed."""

    def withheld_rounds(self, state: S) -> frozenset[int]:
        """Completed rounds whose seed must stay secret until the game ends, because the seed would
        let anyone re-derive a chance outcome the rules keep hidden (Skull's blind draw of a lost
        disc). Games whose hidden draws all come to light by the round's end return an empty set."""

    def phase(self, state: S) -> str: ...

    def to_act(self, state: S) -> list[Seat]:
        """Seats whose command is awaited now."""

    def legal_commands(self, state: S, seat: Seat) -> list[C]:
        """Every command ``seat`` may send now, fully spelled out; empty when none."""

    def redact(self, event: E, viewer: Seat | None) -> E:
        """The event as ``viewer`` (``None``: a spectator) may see it during play."""

    def scramble(self, state: S, viewer: Seat | None, rng: random.Random) -> S:
        """``state`` with everything hidden from ``viewer`` (``None``: a spectator) changed at random,
        and everything ``viewer`` may see kept exactly: a state the viewer cannot tell from the true one.

        The change is consistent, a state the game could be in: the other hands and the undealt or
        set-aside cards dealt again together (hands of the same sizes, keeping what play has shown,
        such as a suit a seat cannot hold), the other seats' face-down discs drawn again from the discs
        they hold, unrevealed selections and bids changed to other legal ones. ``rng`` is the only
        chance. Every read model of the state (the viewer's view, the scores, the players panel, its
        legal commands, the scoreboard, a hint) must be the same for both states: the hidden
        information property (``tests/test_hidden_information.py``) checks it for every game.
        """

    def default_command(self, state: S, seat: Seat, chance: Chance) -> C | None:
        """The command played for ``seat`` when its time runs out, where the rules name one (a
        documented, deterministic choice, or a draw from ``chance`` with a documented label);
        ``None`` leaves the choice to the seat's bot."""

    def scores(self, state: S) -> list[int]:
        """Current totals per seat."""

    def winners(self, state: S) -> list[Seat]:
        """The winning seats once terminal (ties share); empty before."""


# -- folding -----------------------------------------------------------------------------------


class Evolves(Protocol[S, E_contra]):
    """Anything that records events into a state: a game's ``Rules``, its ``Evolvers``, a table."""

    def evolve(self, state: S, event: E_contra, /) -> S: ...


def fold(rules: Evolves[S, E], state: S, events: Iterable[E]) -> S:
    """The state after ``events``, in order: the one place Tablestream folds events."""
    for event in events:
        state = rules.evolve(state, event)
    return state


class Unfolding(Generic[S, E]):
    """The events one decision has produced so far, and the state they lead to.

    A decision that unfolds in steps (a bid that ends the auction, a trick that ends the round)
    ``add``s each event as it is decided; the next step then decides on ``state``, exactly the state
    a replay of ``events`` will see.
    """

    def __init__(self, rules: Evolves[S, E], state: S) -> None:
        self.rules = rules
        self.state = state
        self.events: list[E] = []

    def add(self, *events: E) -> Unfolding[S, E]:
        self.state = fold(self.rules, self.state, events)
        self.events.extend(events)
        return self


# -- dispatching -----------------------------------------------------------------------------------

Decide = Callable[[S, Any, Seat, Chance], list[E]]
"""How one command type is decided: ``(state, command, seat, chance) -> events``."""

Evolve = Callable[[S, Any], S]
"""How one event type is recorded: ``(state, event) -> state``."""


class Deciders(Generic[S, E]):
    """A game's ``decide``: one small function per command type, looked up by the command's type.

    ``admit`` runs first for every known command: the checks a game makes whatever the command
    (a seated, not eliminated player). An unknown command is ``Rejected('unknown_command')``.
    """

    def __init__(
        self,
        game: str,
        by_type: Mapping[type[Command], Decide[S, E]],
        admit: Callable[[S, Seat], None] | None = None,
    ) -> None:
        self.game = game
        self.by_type = dict(by_type)
        self.admit = admit

    def decide(self, state: S, command: Command, seat: Seat, chance: Chance) -> list[E]:
        decide = self.by_type.get(type(command))
        if decide is None:
            raise Rejected("unknown_command", f"{self.game} knows only the commands {_spelled(self.tags())}.")
        if self.admit is not None:
            self.admit(state, seat)
        return decide(state, command, seat, chance)

    def tags(self) -> list[str]:
        return [str(kind.__struct_config__.tag) for kind in self.by_type]


class Evolvers(Generic[S, E]):
    """A game's ``evolve``: one small function per event type, looked up by the event's type."""

    def __init__(self, by_type: Mapping[type[Event], Evolve[S]]) -> None:
        self.by_type = dict(by_type)

    def evolve(self, state: S, event: E) -> S:
        return self.by_type[type(event)](state, event)


def _spelled(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"
