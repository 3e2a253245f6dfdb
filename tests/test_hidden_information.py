"""Hidden information: nothing served from a game tells a viewer what the rules hide from it.

One property for every registered game (``domain.games.specs()``: a game registered later is held to
it with no line here), over seeded random games (player counts and table options drawn from the
game's own options type, practice tables with hints), for every viewer (each seat and a spectator)
at every version (but those where the game's state is still its initial state, which is made of the
table's public options alone). The seed of each game is in the test's id and in every finding, so a
failure replays with ``-k``.

**What is served from the state.** Each game's rules provide ``scramble(state, viewer, rng)``
(``domain.kernel.Rules``): the state with everything hidden from ``viewer`` changed at random and
everything it may see kept. A viewer must not be able to tell the two apart, so everything served
from the state must be byte for byte the same for both: the whole view envelope
(``projections.views.seat_view``: the game's view, ``scores``, the players panel, the legal
moves), which is also what the live stream sends at each version (``services/api/live.py``
``_message``: the rendered view and a clock read from the timers), the scoreboard, and the hint a
seat gets (``bots.levels.advise`` at the hint's level on a small fixed budget, from the seat's
own view: for the seat's own scramble). The scramble is held to being a state the game could be in:
of the game's state type, the same for the same ``rng``, and (at the end of a batch) one where the
rules accept a legal command of an awaited seat. A scramble that never changes anything would make
all this vacuous: each game's scramble must change the state somewhere in each random game.

**Events.** Events are not a function of the state, so they are checked field by field. A field of a
game event (a top-level field, or one element of a list field such as one seat's dealt hand) is
*hidden* from a viewer at that event when changing it to another value that the same field takes
elsewhere in the game (see ``alternatives``: the values the same seat's later events give it, the
nearest occurrences, one anywhere), and folding the changed event and the rest of its batch, leaves
a different table state at the batch's end, different only in parts that the game's scramble for
that viewer changes there (the game's own account of what it hides: ``Served.hideable``), while the
viewer is served exactly the same (its whole view and the scoreboard) at every version from the
event to the batch's end. Two such events are then two histories the viewer cannot tell apart from
everything it is served, so whatever it is served of the events themselves must not tell them apart
either: the event as the API shows it to the viewer during play (``services.table.queries.shown_event``,
the table's ``redact`` around the game's: the events of ``/events``, of a command's answer and of
the audit), its narration in every language (``projections.narration.narrate`` of that shown event)
and the replay index built from the stored stream with either event
(``services.history.replay_index.build_index``) must be equal. Why to the batch's end: a batch is
appended and served whole, so a field its own batch sets again (the last bid, which
``bids_revealed`` makes public) or shows (Skull's ``skull_owner``, whose skull lies face up) is not
hidden, while an inconsistent state made by the change inside the batch is caught by the views of
the next events. A field whose change leaves no trace at the batch's end (who acted and why, a
derived count), changes what the viewer is served or a part no scramble touches (a public fact kept
in the state but in no read model: High Card's count of rounds scored), or makes no event or no
state (a disc the seat does not hold) is public or impossible, and is not checked; so is a part a
game's scramble forgets to draw again. The table's own events are public by design
(``domain.table``) except ``hint_given``: a hint is not a fact of the state but the bot's answer to
the seat's view, so for every other viewer it is asked again in that viewer's scramble (where the
seat's hand may differ); if that answer differs, the viewer must be shown the same event for both.

``findings(game, seed)`` is the property's whole check, and names each leak by game, seed, viewer,
version, part and field: the mutation tests below plant a leak in each game's rules and expect it to
be named.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest

from bots.levels import advise
from bots.search import Budget
from domain.fairness import Chance, SecretSeeds
from domain.games import GameSpec, game_names, spec, table_for
from domain.kernel import Event, Rejected
from domain.six_nimmt.cards import bullheads_of
from domain.skull_king.cards import suit_of
from domain.skull_king.tricks import lead_suit
from domain.table import HintGiven, Table, TableState, is_table_event
from projections.narration import narrate
from projections.views import encode, own_part, public_part, scoreboard, seat_view
from projections.words import LANGUAGES
from services.history.records import CommandRecord, Entry, StoredEvent, encode_event
from services.history.replay_index import build_index
from services.table.queries import shown_event
from tests.support.play import seeds_from

SEEDS = range(4)  # random games per registered game
MAX_COMMANDS = 300  # a game still running after this many commands is checked as far as it went
HINT_LEVEL = "strong"  # the level of a hint (services/table/hints.py HINT_LEVEL)
HINT_BUDGET = Budget(simulations=2, cpu_seconds=60.0)  # bound by simulations alone: reproducible
HINTS_PER_GAME = 2  # hints asked for at a practice table
HINT_CHECKS = 2  # versions per game whose awaited seat's hint is compared with its scramble's
EVENTS_PER_TYPE = 10  # events of each game event type whose fields are checked, per game
ALTERNATIVES = 3  # other values tried per field (see ``alternatives``)
SCRAMBLES = 3  # scrambles drawn to learn which parts of a state are hidden from a viewer
ELEMENTS = 4  # elements of a list field tried per event, each as a field of its own
CONSISTENCY_EVERY = 3  # every third version (at a batch's end), the scramble is also held to
# being the same for the same rng and to a state where the rules accept a legal command
SMALL_INTS = (0, 1, 2, 3)  # the values an integer option is drawn among besides its default

Viewer = int | None


@dataclass(frozen=True)
class Finding:
    """One leak: what ``viewer`` at ``version`` of the game played from ``seed`` could learn, and where
    (``part``: ``view``, ``scoreboard``, ``hint``, ``events``, ``narration``, ``replay index``,
    ``scramble`` or ``rules``; ``field``: the path of the first difference, or the event field)."""

    game: str
    seed: int
    viewer: Viewer
    version: int
    part: str
    field: str

    def __str__(self) -> str:
        who = "a spectator" if self.viewer is None else f"seat {self.viewer}"
        return f"{self.game} (seed {self.seed}): {who} at version {self.version}: {self.part}: {self.field}"


@dataclass
class Played:
    """A random game: the state after each version (``states[v - 1]``), its events and the command
    record of the batch each event opens."""

    game: GameSpec
    seed: int
    table: Table
    seeds: SecretSeeds
    states: list[TableState] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    records: list[CommandRecord | None] = field(default_factory=list)
    hint_seeds: dict[int, str] = field(default_factory=dict)  # version of a hint_given -> its rng seed

    def add(self, record: CommandRecord, events: Sequence[Event]) -> None:
        state = self.states[-1] if self.states else None
        for offset, event in enumerate(events):
            state = self.table.evolve(state, event)
            self.states.append(state)
            self.events.append(event)
            self.records.append(record if offset == 0 else None)

    def batch_end(self, index: int) -> int:
        """The index of the last event of the batch the event at ``index`` belongs to."""
        end = index
        while end + 1 < len(self.records) and self.records[end + 1] is None:
            end += 1
        return end

    @property
    def state(self) -> TableState:
        return self.states[-1]

    @property
    def version(self) -> int:
        return len(self.states)


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    views: int = 0  # (version, viewer) pairs compared with their scramble
    scrambled: int = 0  # of which the scramble changed the state
    hidden: int = 0  # (event field, viewer) pairs found hidden and checked
    fields: set[str] = field(default_factory=set)  # the event fields found hidden from someone
    hints: int = 0  # hints compared

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)


class _Enough(Exception):
    """Raised to stop at the first finding."""


# -- random games ------------------------------------------------------------------------------------


def random_options(game: GameSpec, rng: random.Random) -> dict[str, Any]:
    """Each option of the game's options type kept at its default or drawn among its values (both
    booleans, every literal, ``None`` and a few small integers within the field's bounds)."""
    options: dict[str, Any] = {}
    for option in mi.type_info(game.rules.options_type).fields:  # type: ignore[attr-defined]
        values = _values(option.type)
        if values and rng.random() < 0.5:
            options[option.name] = rng.choice(values)
    return options


def _values(kind: Any) -> list[Any]:
    if isinstance(kind, mi.BoolType):
        return [False, True]
    if isinstance(kind, mi.LiteralType):
        return list(kind.values)
    if isinstance(kind, mi.NoneType):
        return [None]
    if isinstance(kind, mi.IntType):
        low = kind.ge if kind.ge is not None else (kind.gt + 1 if kind.gt is not None else 0)
        high = kind.le if kind.le is not None else (kind.lt - 1 if kind.lt is not None else None)
        return [low + n for n in SMALL_INTS if high is None or low + n <= high]
    if isinstance(kind, mi.UnionType):
        return [value for member in kind.types for value in _values(member)]
    return []


def random_table(game: GameSpec, seed: int, rng: random.Random) -> tuple[int, dict[str, Any]]:
    """A player count and options the game accepts: the smallest and the largest table for the first
    two seeds, then any; options the rules refuse with that count are dropped one by one."""
    low, high = game.min_players, game.max_players
    players = low if seed == 0 else high if seed == 1 else rng.randint(low, high)
    options = random_options(game, rng)
    table = table_for(game.name)
    while True:
        try:
            table.rules.check_options(table.parse_options(options), players)
            return players, options
        except Rejected:
            options.popitem()


def play(game: GameSpec, seed: int) -> Played:
    """A seeded random game of ``game``: random legal commands, and at a practice table a few hints
    asked for first (the ``strong`` bot's, on ``HINT_BUDGET``)."""
    rng = random.Random(f"{game.name}:{seed}")
    players, options = random_table(game, seed, rng)
    table = table_for(game.name)
    seeds = seeds_from(f"hidden-{game.name}-{seed}")
    practice = rng.random() < 0.5
    played = Played(game=game, seed=seed, table=table, seeds=seeds)
    created = table.create(
        f"hidden-{game.name}-{seed}", players, options, seeds.chain_commitment(0), practice
    )
    played.add(CommandRecord(id="create", kind="create", body={}), created)
    for seat in range(players):
        joined = table.join(played.state, f"P{seat + 1}", f"cs{seed}-{seat}", seeds)
        played.add(CommandRecord(id=f"join-{seat}", kind="join", body={}), joined)
    hints = HINTS_PER_GAME if practice else 0
    for step in range(MAX_COMMANDS):
        state = played.state
        if state.status != "playing":
            break
        seat = rng.choice(sorted(table.to_act(state)))
        legal = table.legal_commands(state, seat)
        if hints and len(legal) > 1 and rng.random() < 0.1:
            hints -= 1
            hint_seed = f"hint-{game.name}-{seed}-{played.version}"
            advice = _advice(game.name, seat_view(state, played.version, seat), hint_seed)
            command = msgspec.convert(advice.command, table.command_type)
            given = table.hint(state, seat, command, _reason(advice))
            played.hint_seeds[played.version + 1] = hint_seed
            played.add(CommandRecord(id=f"hint-{step}", kind="hint", seat=seat, body={}), given)
        record = CommandRecord(id=f"c{step}", kind="command", seat=seat, body={})
        played.add(record, table.decide(played.state, rng.choice(legal), seat, seeds))
    return played


def _advice(game: str, view: dict[str, Any], rng_seed: str) -> Any:
    plain = msgspec.json.decode(encode(view))  # exactly what GET /games/{id}/view gives the seat
    return advise(game, plain, HINT_LEVEL, random.Random(rng_seed), HINT_BUDGET)


def _reason(advice: Any) -> dict[str, Any] | None:
    return None if advice.reason is None else {"key": advice.reason, "params": dict(advice.params)}


# -- the property ------------------------------------------------------------------------------------


def findings(game: str, seed: int, parts: frozenset[str] | None = None, first: bool = False) -> Report:
    """Every leak the property finds in the random game ``seed`` of ``game`` (``parts``: only the
    checks ``views``, ``hints``, ``events``; ``first``: stop at the first finding)."""
    report = Report()
    known = spec(game)
    if not callable(getattr(known.rules, "scramble", None)):
        report.add(Finding(game, seed, None, 0, "rules", "scramble is missing"))
        return report
    played = play(known, seed)
    wanted = parts or frozenset({"views", "hints", "events"})
    sink = _stopping(report) if first else report.add
    try:
        if "views" in wanted:
            _check_views(played, report, sink)
        if "hints" in wanted:
            _check_hints(played, report, sink)
        if "events" in wanted:
            _check_events(played, report, sink)
    except _Enough:
        pass
    return report


def _stopping(report: Report) -> Callable[[Finding], None]:
    def add(finding: Finding) -> None:
        report.add(finding)
        raise _Enough

    return add


def viewers(state: TableState) -> list[Viewer]:
    return [*range(state.players), None]


def scrambled(played: Played, state: TableState, viewer: Viewer, rng: random.Random) -> TableState:
    """The table with its game state replaced by the game's scramble for ``viewer``."""
    game_state = played.table.rules.scramble(state.game_state, viewer, rng)  # type: ignore[attr-defined]
    return msgspec.structs.replace(state, game_state=game_state)


def _rng(played: Played, version: int, viewer: Viewer, purpose: str = "") -> random.Random:
    return random.Random(f"{played.game.name}:{played.seed}:{version}:{viewer}:{purpose}")


def _check_views(played: Played, report: Report, add: Callable[[Finding], None]) -> None:
    game, seed = played.game.name, played.seed
    first = played.states[0]
    initial = played.table.rules.initial_state(first.options, first.players)
    for version, state in enumerate(played.states, start=1):
        if state.game_state == initial:  # made of the table's public options alone: nothing hidden
            continue
        public = encode(public_part(state, version))
        board = encode(scoreboard(state, version))
        settled = version == played.version or played.records[version] is not None  # a batch's end
        for viewer in viewers(state):
            other = scrambled(played, state, viewer, _rng(played, version, viewer))
            report.views += 1
            report.scrambled += other.game_state != state.game_state

            def finding(part: str, detail: str, viewer: Viewer = viewer, version: int = version) -> None:
                add(Finding(game, seed, viewer, version, part, detail))

            if type(other.game_state) is not type(state.game_state):
                finding("scramble", f"returned a {type(other.game_state).__name__}")
                continue
            mine = encode(own_part(state, viewer))
            for part, true, shown in (
                ("view", public, encode(public_part(other, version))),
                ("view", mine, encode(own_part(other, viewer))),
                ("scoreboard", board, encode(scoreboard(other, version))),
            ):
                if shown != true:
                    finding(part, difference(msgspec.json.decode(true), msgspec.json.decode(shown)))
            if settled and version % CONSISTENCY_EVERY == 0:
                if scrambled(played, state, viewer, _rng(played, version, viewer)) != other:
                    finding("scramble", "differs for the same rng")
                refused = _refused(played, other, _rng(played, version, viewer, "decide"))
                if refused is not None:
                    finding("scramble", refused)


def _refused(played: Played, state: TableState, rng: random.Random) -> str | None:
    """Why the rules refuse a legal command of an awaited seat in a (scrambled) state, if they do."""
    rules = played.table.rules
    if state.status != "playing" or state.mix is None:
        return None
    awaited = sorted(rules.to_act(state.game_state))
    if not awaited:
        return None
    seat = rng.choice(awaited)
    legal = rules.legal_commands(state.game_state, seat)
    if not legal:
        return f"seat {seat} is awaited with no legal command"
    command = rng.choice(legal)
    try:
        rules.decide(state.game_state, command, seat, Chance(played.seeds, bytes.fromhex(state.mix)))
    except Exception as refusal:  # an inconsistent state may fail anywhere in decide
        return f"seat {seat}'s legal {msgspec.to_builtins(command)} is refused: {refusal!r}"
    return None


def _check_hints(played: Played, report: Report, add: Callable[[Finding], None]) -> None:
    """The hint an awaited seat would get, from its true state and from its own scramble."""
    rng = _rng(played, 0, None, "hints")
    awaited = [
        (version, seat)
        for version, state in enumerate(played.states, start=1)
        for seat in played.table.to_act(state)
        if len(played.table.legal_commands(state, seat)) > 1
    ]
    for version, seat in rng.sample(awaited, min(HINT_CHECKS, len(awaited))):
        state = played.states[version - 1]
        other = scrambled(played, state, seat, _rng(played, version, seat))
        hint_seed = f"check-{played.seed}-{version}"
        true = _advice(played.game.name, seat_view(state, version, seat), hint_seed)
        shown = _advice(played.game.name, seat_view(other, version, seat), hint_seed)
        report.hints += 1
        if true != shown:
            true_plain, shown_plain = msgspec.to_builtins(true), msgspec.to_builtins(shown)
            add(
                Finding(
                    played.game.name, played.seed, seat, version, "hint", difference(true_plain, shown_plain)
                )
            )


# -- events ------------------------------------------------------------------------------------------

Path = tuple[str] | tuple[str, int]


def paths(event: dict[str, Any], rng: random.Random) -> Iterator[Path]:
    """Every field of an event's builtins but its type, and ``ELEMENTS`` elements (drawn) of each
    list (or tuple) field."""
    for name, value in event.items():
        if name == "type":
            continue
        yield (name,)
        if isinstance(value, (list, tuple)):
            for index in sorted(rng.sample(range(len(value)), min(ELEMENTS, len(value)))):
                yield (name, index)


class _Everything(random.Random):
    """A ``random.Random`` whose sample is everything, in order: every element of every list field."""

    def sample(self, population: Any, k: int, *, counts: Any = None) -> list[Any]:
        return list(population)


_ALL = _Everything()


def _pool_key(tag: str, path: Path) -> tuple[str, str, bool]:
    return tag, path[0], len(path) > 1


def _at(event: dict[str, Any], path: Path) -> Any:
    value = event[path[0]]
    return value[path[1]] if len(path) > 1 else value  # type: ignore[misc]


def _with(event: dict[str, Any], path: Path, value: Any) -> dict[str, Any]:
    changed = dict(event)
    if len(path) > 1:
        items = list(changed[path[0]])
        items[path[1]] = value  # type: ignore[misc]
        changed[path[0]] = items
    else:
        changed[path[0]] = value
    return changed


@dataclass(frozen=True)
class Occurrence:
    index: int  # the event's index in the game
    seat: Any  # the event's ``seat`` field, if it has one
    value: Any
    encoded: bytes


def occurrences(played: Played) -> dict[tuple[str, str, bool], list[Occurrence]]:
    """The values each field (and each list field's elements) takes in the game's events."""
    pool: dict[tuple[str, str, bool], list[Occurrence]] = {}
    for index, event in enumerate(played.events):
        if is_table_event(event):
            continue
        plain = msgspec.to_builtins(event)
        for path in paths(plain, _ALL):
            value = _at(plain, path)
            found = Occurrence(index, plain.get("seat"), value, msgspec.json.encode(value))
            pool.setdefault(_pool_key(plain["type"], path), []).append(found)
    return pool


def alternatives(
    pool: list[Occurrence], index: int, seat: Any, current: Any, rng: random.Random
) -> list[Any]:
    """Up to ``ALTERNATIVES`` other values of a field for the event at ``index``, taken in turn from
    the values it takes next in the same seat's events (a card still in that seat's hand), the
    nearest occurrences in the game (another element of the same event: another seat's hand) and
    anywhere in the game; each value once."""
    later = sorted(
        (o for o in pool if seat is not None and o.seat == seat and o.index > index), key=_at_index
    )
    nearest = sorted(pool, key=lambda o: abs(o.index - index))
    anywhere = rng.sample(pool, len(pool))
    seen = {msgspec.json.encode(current)}
    chosen: list[Any] = []
    sources = [iter(later), iter(nearest), iter(anywhere)]
    while sources and len(chosen) < ALTERNATIVES:
        for source in list(sources):
            found = next((o for o in source if o.encoded not in seen), None)
            if found is None:
                sources.remove(source)
            elif len(chosen) < ALTERNATIVES:
                seen.add(found.encoded)
                chosen.append(found.value)
    return chosen


def _at_index(found: Occurrence) -> int:
    return found.index


def _check_events(played: Played, report: Report, add: Callable[[Finding], None]) -> None:
    game, seed = played.game.name, played.seed
    rng = _rng(played, 0, None, "events")
    pool = occurrences(played)
    served = Served(played)
    by_type: dict[str, list[int]] = {}
    for index, event in enumerate(played.events):
        if isinstance(event, HintGiven):
            _check_hint_event(played, index, report, add)
        elif not is_table_event(event) and index > 0:
            by_type.setdefault(type(event).__name__, []).append(index)
    indexed: set[tuple[str, str, bool]] = set()
    for indices in by_type.values():
        for index in sorted(rng.sample(indices, min(EVENTS_PER_TYPE, len(indices)))):
            version, event, last = index + 1, played.events[index], played.batch_end(index)
            plain = msgspec.to_builtins(event)
            for path in paths(plain, rng):
                key = _pool_key(plain["type"], path)
                worlds = []
                for value in alternatives(pool[key], index, plain.get("seat"), _at(plain, path), rng):
                    world = _world(played, index, last, _with(plain, path, value))
                    if world is not None and served.public_alike(index, world[1]):
                        worlds.append(world)
                label = f"{plain['type']}.{path[0]}" + (f"[{path[1]}]" if len(path) > 1 else "")
                for viewer in viewers(played.states[index]) if worlds else []:
                    twin = next(
                        (
                            w
                            for w in worlds
                            if served.own_alike(index, w[1], viewer)
                            and changed_parts(played.states[last], w[1][-1]) <= served.hideable(last, viewer)
                        ),
                        None,
                    )
                    if twin is None:
                        continue
                    report.hidden += 1
                    report.fields.add(label.split("[")[0])
                    _compare_shown(played, version, event, twin[0], viewer, label, add)
                    if key not in indexed:
                        indexed.add(key)
                        if _index(played, index, event) != _index(played, index, twin[0]):
                            add(Finding(game, seed, viewer, version, "replay index", label))


class Served:
    """What each viewer is served at each version of the game (encoded), computed once, and whether
    another run of states from a version on serves the same."""

    def __init__(self, played: Played) -> None:
        self.played = played
        self._public: dict[int, tuple[bytes, bytes]] = {}
        self._own: dict[tuple[int, Viewer], bytes] = {}
        self._hideable: dict[tuple[int, Viewer], set[str]] = {}

    def public(self, index: int) -> tuple[bytes, bytes]:
        if index not in self._public:
            state, version = self.played.states[index], index + 1
            self._public[index] = encode(public_part(state, version)), encode(scoreboard(state, version))
        return self._public[index]

    def own(self, index: int, viewer: Viewer) -> bytes:
        if (index, viewer) not in self._own:
            self._own[(index, viewer)] = encode(own_part(self.played.states[index], viewer))
        return self._own[(index, viewer)]

    def hideable(self, index: int, viewer: Viewer) -> set[str]:
        """The parts of the state at ``index`` that the game's scramble for ``viewer`` changes (in any of
        ``SCRAMBLES`` draws): the game's own account of what it hides from the viewer there."""
        if (index, viewer) not in self._hideable:
            state, parts = self.played.states[index], set()
            for draw in range(SCRAMBLES):
                other = scrambled(self.played, state, viewer, _rng(self.played, index, viewer, f"hide{draw}"))
                parts |= changed_parts(state, other)
            self._hideable[(index, viewer)] = parts
        return self._hideable[(index, viewer)]

    def public_alike(self, first: int, states: list[TableState]) -> bool:
        """Whether ``states`` (the states at index ``first`` on) serve the same public part of the
        views and the same scoreboard as the game's own states there."""
        try:
            return all(
                (encode(public_part(state, first + n + 1)), encode(scoreboard(state, first + n + 1)))
                == self.public(first + n)
                for n, state in enumerate(states)
            )
        except Exception:  # an impossible state may break a view: not a world to compare
            return False

    def own_alike(self, first: int, states: list[TableState], viewer: Viewer) -> bool:
        """Whether ``states`` serve ``viewer`` the same own part of its view as the game's own."""
        try:
            return all(
                encode(own_part(state, viewer)) == self.own(first + n, viewer)
                for n, state in enumerate(states)
            )
        except Exception:
            return False


def changed_parts(one: Any, other: Any, path: str = "") -> set[str]:
    """Where two states differ: the paths of the differing fields, down through structs and through
    tuples of structs or tuples (one seat's hand, one seat's discs), a tuple of plain values whole."""
    if one == other:
        return set()
    if isinstance(one, msgspec.Struct) and type(one) is type(other):
        return {
            part
            for name in one.__struct_fields__
            for part in changed_parts(getattr(one, name), getattr(other, name), f"{path}.{name}")
        }
    nested = isinstance(one, tuple) and any(isinstance(item, (msgspec.Struct, tuple)) for item in one)
    if nested and isinstance(other, tuple) and len(one) == len(other):
        return {
            part
            for number, pair in enumerate(zip(one, other, strict=True))
            for part in changed_parts(*pair, f"{path}[{number}]")
        }
    return {path}


def _world(
    played: Played, index: int, last: int, plain: dict[str, Any]
) -> tuple[Event, list[TableState]] | None:
    """The event at ``index`` with a changed field, and the states it and the rest of its batch (up to
    ``last``) lead to; ``None`` when the change makes no event or no state (a disc the seat does not
    hold), or leaves no trace at the batch's end (a field the batch sets again)."""
    table = played.table
    try:
        event = msgspec.convert(plain, table.event_type)
        states = [table.evolve(played.states[index - 1], event)]
        for later in played.events[index + 1 : last + 1]:
            states.append(table.evolve(states[-1], later))
    except Exception:
        return None
    if states[-1] == played.states[last]:
        return None
    return event, states


def _compare_shown(
    played: Played,
    version: int,
    event: Event,
    twin: Event,
    viewer: Viewer,
    label: str,
    add: Callable[[Finding], None],
) -> None:
    """Two events ``viewer`` cannot tell apart must be shown and narrated alike."""
    game, seed, table = played.game.name, played.seed, played.table
    shown = shown_event(table, version, event, viewer, False)
    other = shown_event(table, version, twin, viewer, False)
    if shown != other:
        add(Finding(game, seed, viewer, version, "events", f"{label}: {difference(shown, other)}"))
    names = played.states[version - 1].names()
    for lang in LANGUAGES:
        said = narrate(game, shown, names, lang, "player")
        if said != narrate(game, other, names, lang, "player"):
            add(Finding(game, seed, viewer, version, "narration", f"{label} ({lang}): {said!r}"))


def _check_hint_event(played: Played, index: int, report: Report, add: Callable[[Finding], None]) -> None:
    """A hint asked again in each other viewer's scramble: if its answer differs there, the viewer
    must be shown the same ``hint_given`` for both."""
    event = played.events[index]
    assert isinstance(event, HintGiven)
    version, before = index + 1, played.states[index - 1]
    for viewer in viewers(before):
        if viewer == event.seat:
            continue
        other = scrambled(played, before, viewer, _rng(played, version, viewer, "hint"))
        advice = _advice(played.game.name, seat_view(other, index, event.seat), played.hint_seeds[version])
        twin = HintGiven(seat=event.seat, command=advice.command, reason=_reason(advice))
        report.hints += 1
        if twin != event:
            report.hidden += 1
            report.fields.add("hint_given.command")
            _compare_shown(played, version, event, twin, viewer, "hint_given.command", add)


def _index(played: Played, index: int, event: Event) -> dict[str, Any]:
    """The replay index of the game's stored stream with ``event`` at ``index``."""
    events = [*played.events[:index], event, *played.events[index + 1 :]]
    return build_index(
        played.game.name,
        [_entry(v, e, r) for v, (e, r) in enumerate(zip(events, played.records, strict=True), 1)],
    )


def _entry(version: int, event: Event, record: CommandRecord | None) -> Entry:
    stored = StoredEvent(
        version=version,
        command_id=f"v{version}",
        event=msgspec.Raw(encode_event(event)),
        command=record,
    )
    return Entry(version, msgspec.json.encode(stored), "")


def difference(true: Any, shown: Any, path: str = "") -> str:
    """The path of the first difference between two JSON values, and both values there."""
    if isinstance(true, dict) and isinstance(shown, dict):
        for key in sorted(set(true) | set(shown)):
            if true.get(key, ...) != shown.get(key, ...):
                return difference(true.get(key), shown.get(key), f"{path}.{key}" if path else str(key))
    if isinstance(true, (list, tuple)) and isinstance(shown, (list, tuple)) and len(true) == len(shown):
        for number, (one, other) in enumerate(zip(true, shown, strict=True)):
            if one != other:
                return difference(one, other, f"{path}[{number}]")
    return f"{path or '(whole)'}: {_short(true)} != {_short(shown)}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# -- the tests ---------------------------------------------------------------------------------------


@pytest.mark.thorough
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("game", game_names())
def test_no_viewer_is_served_anything_that_tells_its_scramble_from_the_true_game(
    game: str, seed: int
) -> None:
    report = findings(game, seed)
    print(
        f"{game} seed {seed}: {report.views} views, {report.scrambled} scrambled, {report.hints} hints, "
        f"{report.hidden} hidden event fields checked ({', '.join(sorted(report.fields))})"
    )
    assert not report.findings, "\n".join(str(finding) for finding in report.findings[:20])
    assert report.scrambled, f"{game}'s scramble never changed anything: the property would hold vacuously"


def first_leak(game: str, parts: set[str]) -> Finding:
    """The first finding of the property in the first seeds' games of ``game``."""
    for seed in SEEDS:
        found = findings(game, seed, frozenset(parts), first=True).findings
        if found:
            return found[0]
    raise AssertionError(f"no leak found in {game}'s games with the seeds {list(SEEDS)}")


def _skull_with_skulls_in_hand(state: Any) -> list[int]:
    return [seat.points + seat.hand.count("skull") for seat in state.seats]


def _six_nimmt_with_the_hand_s_bullheads(state: Any) -> list[int]:
    return [total + bullheads_of(hand) for total, hand in zip(state.totals, state.hands, strict=True)]


def _skull_king_with_unrevealed_bids(state: Any) -> list[int]:
    hidden = [0 if state.bids_revealed or bid is None else bid for bid in state.bids] or [0] * state.players
    return [total + bid for total, bid in zip(state.totals, hidden, strict=True)]


LEAKY_SCORES: dict[str, Callable[[Any], list[int]]] = {
    "skull": _skull_with_skulls_in_hand,
    "six-nimmt": _six_nimmt_with_the_hand_s_bullheads,
    "skull-king": _skull_king_with_unrevealed_bids,
}
"""A planted leak per game: scores that count something hidden (skulls in hand, the bullheads of
the hand, the bids not yet revealed)."""


@pytest.mark.parametrize("game", sorted(LEAKY_SCORES))
def test_scores_that_count_a_hidden_part_are_named_as_a_leak_of_the_view(
    game: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spec(game).rules, "scores", LEAKY_SCORES[game])
    leak = first_leak(game, {"views"})
    assert (leak.game, leak.part) == (game, "view"), leak
    assert leak.field.startswith("scores["), leak
    assert leak.version > 0 and f"{game} (seed {leak.seed})" in str(leak)


@pytest.mark.parametrize("game", game_names())
def test_a_redact_that_shows_every_event_whole_is_named_as_a_leak_of_the_events(
    game: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(spec(game).rules, "redact", lambda event, viewer: event)
    leak = first_leak(game, {"events"})
    assert (leak.game, leak.part) == (game, "events"), leak
    hidden_field = leak.field.split(":")[0]
    assert "." in hidden_field and leak.version > 0, leak


def test_a_game_whose_rules_have_no_scramble_is_named_by_the_property(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = game_names()[0]
    monkeypatch.delattr(type(spec(game).rules), "scramble")
    leak = first_leak(game, {"views"})
    assert (leak.game, leak.part, leak.field) == (game, "rules", "scramble is missing")


@pytest.mark.parametrize("seed", SEEDS)
def test_skull_king_s_scramble_never_deals_a_seat_a_suit_it_showed_it_lacks(seed: int) -> None:
    """Beyond what the views show: a seat that did not follow the suit led holds none of it, in
    every scramble too (``domain/skull_king/scramble.py``)."""
    played = play(spec("skull-king"), seed)
    checked = 0
    for version, state in enumerate(played.states, start=1):
        game_state = state.game_state
        plays = [trick.plays for trick in game_state.taken] + [game_state.trick]
        lacking = {
            (play.seat, led)
            for trick in plays
            for number, play in enumerate(trick)
            if (led := lead_suit(trick[:number], game_state.options)) is not None
            and suit_of(play.card) not in (None, led)
        }
        for viewer in viewers(state) if lacking else []:
            other = scrambled(played, state, viewer, _rng(played, version, viewer)).game_state
            for seat, suit in lacking:
                assert suit not in {suit_of(card) for card in other.hands[seat]}, (
                    version,
                    viewer,
                    seat,
                    suit,
                )
                checked += 1
    assert checked
