"""The table: what every game shares around its rules.

Longer than 500 lines because it is one aggregate: the table's events, its state and every rule
of its lifecycle (seats, the start, timeouts, bots, leaving and reclaiming a seat, closing, the seed
reveals and the final result) decide and fold over one state with shared invariants; split, each
part would reach into the others' private state.

A table is created with options and a seed commitment, fills its seats, starts by itself when the
last seat is taken, and keeps the fairness bookkeeping (seed reveals at round ends, fresh chains,
the final result) in the same batch as the game events that triggered it. Game rules never see
any of this; the table never sees a game's internals beyond the ``Rules`` protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

import msgspec

from domain.fairness import CHAIN_LENGTH, Chance, SeedSource, chain_position, player_mix
from domain.kernel import Command, Conflict, Event, Rejected, Rules, Seat, Unfolding, fold

MAX_NAME = 40
MAX_CLIENT_SEED = 64
RULES_VERSION = 1

Status = Literal["waiting", "playing", "finished", "expired", "closed"]
TakeoverReason = Literal["left", "timeouts", "host"]

TABLE_OPTIONS = (
    "turn_seconds",
    "expire_minutes",
    "takeover_after",
    "bot_pace_ms",
    "turn_based",
    "private",
    "bot_level",
)
"""Options of the table rather than the game: peeled off the create request like ``seed``."""
PUBLIC_TURN_SECONDS = 60
MAX_EXPIRE_MINUTES = 60
"""The longest a new table may wait for players (``expire_minutes``): every table is listed in the
lobby and counts against the caps on waiting tables, so none may hold a place for days. Tables
recorded before this bound keep theirs (``TableTimers`` still reads up to 7 days)."""
MAX_TURN_SECONDS = 86_400
"""The longest turn of a real-time table (a day, the bound since the online lifecycle)."""
MAX_TURN_BASED_SECONDS = 7 * 86_400
"""The longest turn of a turn-based table (``turn_based``): a week, for games that wait for you."""
MAX_TURN_BASED_EXPIRE_MINUTES = 24 * 60
"""The longest a new turn-based table may wait for players: a day, since its players come and go
at leisure. It is listed and counted against the caps on waiting tables like any other."""
TURN_BASED_EXPIRE_MINUTES = 24 * 60
"""A turn-based table's default wait for players."""


class TableCreated(Event, tag="table_created", frozen=True):
    game_id: str
    game: str
    players: int
    options: dict[str, Any]
    practice: bool
    commitment: str  # s_0 of chain 0, hex
    rules_version: int = RULES_VERSION


class PlayerJoined(Event, tag="player_joined", frozen=True):
    seat: int
    name: str
    client_seed: str


class SeatClaimed(Event, tag="seat_claimed", frozen=True):
    """The player at ``seat`` is the registered account ``account_id`` (public, like the name).

    A separate event rather than a field of ``player_joined``: streams written before accounts
    existed must re-run to the same bytes, so ``player_joined`` keeps its exact encoding."""

    seat: int
    account_id: str
    display_name: str


class GameStarted(Event, tag="game_started", frozen=True):
    mix: str  # hex of the players' entropy mix


class SeedRevealed(Event, tag="seed_revealed", frozen=True):
    round: int
    seed: str


class SeedChainCommitted(Event, tag="seed_chain_committed", frozen=True):
    chain: int
    first_round: int
    commitment: str


class GameFinished(Event, tag="game_finished", frozen=True):
    scores: list[int]
    winners: list[int]


class TableTimersSet(Event, tag="table_timers_set", frozen=True, omit_defaults=True):
    """The table's online options, in the create batch of tables created since the online
    lifecycle (older streams have none: no turn timer, no expiry).

    ``bot_pace_ms`` came later: 0 (no pacing) is left out of the bytes, so an event recorded before
    it existed re-runs to exactly its stored bytes (the other fields have no default: always there).
    ``turn_based`` (a table whose turns may last days) came later still, left out when false.
    ``private`` likewise: only a private table (never listed in the lobby, joined by its invite link)
    has it in its bytes. ``bot_level`` (the level of a bot that takes a seat over) likewise, left
    out when ``normal``.
    """

    turn_seconds: int
    expire_minutes: int
    takeover_after: int
    bot_pace_ms: int = 0
    turn_based: bool = False
    private: bool = False
    bot_level: str = "normal"


class BotSeated(Event, tag="bot_seated", frozen=True, omit_defaults=True):
    """The host filled an empty seat with a bot: a join by a bot (its client seed is empty).
    ``level``: the bot's level (``BOT_LEVELS``), left out of the bytes when ``normal`` (a bot
    recorded before levels played ``normal``)."""

    seat: int
    name: str
    level: str = "normal"


class SeatLeft(Event, tag="seat_left", frozen=True):
    """A seat's player left: while waiting the seat is free again; during play a bot takes it."""

    seat: int


class BotTookOver(Event, tag="bot_took_over", frozen=True):
    """A bot plays ``seat`` for the rest of the game."""

    seat: int
    reason: TakeoverReason


class TurnTimedOut(Event, tag="turn_timed_out", frozen=True):
    """``seat``'s time ran out; the default action's events follow in the same batch.

    ``withheld_round`` is set when the default drew from that round's seed (Skull's random discard
    of the challenger's own disc): the seed then stays sealed until the game ends, like a blind draw.
    """

    seat: int
    withheld_round: int | None = None


class TableExpired(Event, tag="table_expired", frozen=True):
    """A waiting table nobody filled in time; no one can join it any more."""


class SeatReclaimed(Event, tag="seat_reclaimed", frozen=True):
    """The player of ``seat``, taken over by a bot after timeouts, plays it again."""

    seat: int


class TableClosed(Event, tag="table_closed", frozen=True):
    """An operator closed a waiting or running table (stuck or abusive): the game ends here, aborted,
    with no result and no rating. ``operator`` is who did it (``admin`` for the admin token, else an
    operator account's id). The seeds of every round played so far are revealed in the same batch, as
    at a game's end, so the offline verifier can check every chance outcome up to the close."""

    reason: str
    operator: str


MAX_CLOSE_REASON = 200


class HintGiven(Event, tag="hint_given", frozen=True, omit_defaults=True):
    """At a practice table, ``seat`` asked for a hint and was suggested ``command`` (one of its
    legal commands), with ``reason`` (a glossary key and its values, ``{"key": ..., "params": ...}``)
    where the advising policy gives one. A table event: the game state does not change.

    What a seat may do next is as hidden as its hand: until the game is over only ``seat`` sees
    ``command`` and ``reason``; every other viewer sees that a hint was asked for, and nothing else
    (``Table.redact``: both ``None``)."""

    seat: int
    command: dict[str, Any] | None = None
    reason: dict[str, Any] | None = None


TABLE_EVENTS: tuple[type[Event], ...] = (
    TableCreated,
    PlayerJoined,
    SeatClaimed,
    GameStarted,
    SeedRevealed,
    SeedChainCommitted,
    GameFinished,
    TableTimersSet,
    BotSeated,
    SeatLeft,
    BotTookOver,
    TurnTimedOut,
    TableExpired,
    SeatReclaimed,
    TableClosed,
    HintGiven,
)
_TABLE_EVENT_TYPES = frozenset(TABLE_EVENTS)


def is_table_event(event: Event) -> bool:
    """Whether ``event`` is the table's rather than its game's. Events are concrete structs, so their
    type decides: a set lookup, where ``isinstance`` against the tuple costs more than the fold."""
    return type(event) in _TABLE_EVENT_TYPES


class Account(msgspec.Struct, frozen=True):
    """A registered account taking a seat: its stable id and its display name."""

    id: str
    name: str


MAX_BOT_PACE_MS = 5000

BotLevel = Literal["easy", "normal", "strong"]
BOT_LEVELS: tuple[BotLevel, ...] = ("easy", "normal", "strong")
"""The levels a host may seat (``bots.levels`` plays them); a bot recorded before levels
played ``normal``."""
DEFAULT_BOT_LEVEL: BotLevel = "normal"


class TableTimers(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The online options: ``turn_seconds`` (0: no turn timer), ``expire_minutes`` for a waiting
    table, ``takeover_after`` consecutive timeouts before a bot takes the seat, ``bot_pace_ms``
    how long a bot waits before it acts while a person sits at the table (0: at once). A table
    recorded before pacing has no ``bot_pace_ms``: 0. ``turn_based``: a table whose turns may last
    up to a week (``MAX_TURN_BASED_SECONDS``; a real-time one's at most ``MAX_TURN_SECONDS``). ``private``
    (never listed in the lobby; joined only by its invite link); one recorded before private tables
    is public."""

    turn_seconds: Annotated[int, msgspec.Meta(ge=0, le=MAX_TURN_BASED_SECONDS)]
    expire_minutes: Annotated[int, msgspec.Meta(ge=1, le=7 * 24 * 60)] = 30
    takeover_after: Annotated[int, msgspec.Meta(ge=1, le=100)] = 3
    bot_pace_ms: Annotated[int, msgspec.Meta(ge=0, le=MAX_BOT_PACE_MS)] = 0
    turn_based: bool = False
    private: bool = False
    bot_level: BotLevel = "normal"  # the level of a bot taking a seat over


def table_timers(options: dict[str, Any], practice: bool, bot_pace_ms: int = 0) -> dict[str, Any]:
    """The online options of a create request, defaults filled in (``turn_seconds``: 0 for a
    practice table, 60 for a public one; ``bot_pace_ms``: the server's default, given here);
    ``Rejected('invalid_options')`` for bad values."""
    given = {key: options[key] for key in TABLE_OPTIONS if key in options}
    given.setdefault("turn_seconds", 0 if practice else PUBLIC_TURN_SECONDS)
    given.setdefault("bot_pace_ms", bot_pace_ms)
    if given.get("turn_based") is True:
        given.setdefault("expire_minutes", TURN_BASED_EXPIRE_MINUTES)
    try:
        resolved: dict[str, Any] = msgspec.to_builtins(msgspec.convert(given, TableTimers))
    except msgspec.ValidationError as exc:
        raise Rejected("invalid_options", f"The table options are invalid: {exc}.") from None
    turn_based = resolved["turn_based"]
    if not turn_based and resolved["turn_seconds"] > MAX_TURN_SECONDS:
        raise Rejected(
            "turn_too_long",
            f"A turn lasts at most {MAX_TURN_SECONDS} seconds (a day) at a real-time table; "
            "mark the table turn-based (turn_based: true) for longer turns.",
        )
    longest_wait = MAX_TURN_BASED_EXPIRE_MINUTES if turn_based else MAX_EXPIRE_MINUTES
    if resolved["expire_minutes"] > longest_wait:
        raise Rejected(
            "invalid_options",
            f"The table options are invalid: expire_minutes is at most {longest_wait} "
            + (
                "(a turn-based table waits for players a day at most)."
                if turn_based
                else "(a table waits for players an hour at most)."
            ),
        )
    if not turn_based:
        del resolved["turn_based"]  # recorded only when true: a real-time table's event as before
    if not resolved["private"]:  # a public table's create record stays as it was before the option
        del resolved["private"]
    if resolved["bot_level"] == DEFAULT_BOT_LEVEL:  # likewise, a table before bot levels
        del resolved["bot_level"]
    return resolved


class Player(msgspec.Struct, frozen=True):
    seat: int
    name: str
    client_seed: str
    account: Account | None = None


class TableState(msgspec.Struct, frozen=True, kw_only=True):
    game_id: str
    game: str
    players: int
    options: Any
    practice: bool
    commitments: tuple[str, ...]  # per chain, s_0 hex
    seated: tuple[Player, ...] = ()
    mix: str | None = None
    status: Status = "waiting"
    revealed: dict[int, str] = msgspec.field(default_factory=dict)  # round -> its seed, hex
    game_state: Any = None
    winners: tuple[int, ...] = ()
    timers: TableTimers | None = None  # None: a table from before the online lifecycle
    bots: frozenset[int] = frozenset()  # seats a bot plays
    takeovers: dict[int, TakeoverReason] = msgspec.field(default_factory=dict)  # why, per seat in bots
    bot_levels: dict[int, str] = msgspec.field(default_factory=dict)  # the host's bots' levels, per seat
    left: frozenset[int] = frozenset()  # seats whose player left during play
    streaks: tuple[int, ...] = ()  # per seat: timeouts since it last finished a turn itself
    timing_out: int | None = None  # the seat whose default action is being recorded
    sealed: frozenset[int] = frozenset()  # rounds whose seed a default drew from
    hinted: frozenset[int] = frozenset()  # seats that asked for a hint (practice tables only)

    def holds(self, seat: int) -> bool:
        """Whether ``seat``'s player is at the table: seated, and not left during play."""
        return seat not in self.left and any(player.seat == seat for player in self.seated)

    def free_seats(self) -> list[int]:
        taken = {player.seat for player in self.seated}
        return [seat for seat in range(self.players) if seat not in taken]

    def bot_level(self, seat: int) -> str:
        """The level of the bot playing ``seat``: the host's choice when it seated the bot, else
        (a takeover) the table's ``bot_level`` option."""
        if seat in self.bot_levels:
            return self.bot_levels[seat]
        return self.timers.bot_level if self.timers is not None else DEFAULT_BOT_LEVEL

    def names(self) -> list[str]:
        by_seat = {player.seat: player.name for player in self.seated}
        return [by_seat.get(seat, f"Seat {seat + 1}") for seat in range(self.players)]


class Table:
    """The Decider of a whole table, generic over one game's ``Rules``."""

    def __init__(self, rules: Rules[Any, Any, Any, Any]) -> None:
        self.rules = rules
        self.name = rules.name
        self.event_type: Any = Union[(*TABLE_EVENTS, *_members(rules.event_type))]
        self.command_type: Any = rules.command_type

    # -- deciding --------------------------------------------------------------------------

    def create(
        self,
        game_id: str,
        players: Any,
        options: dict[str, Any],
        commitment: str,
        practice: bool,
        timers: dict[str, Any] | None = None,
    ) -> list[Event]:
        """The ``table_created`` event, or ``Rejected`` for a player count or options the game refuses.

        ``timers`` (the online options, see ``table_timers``) add a ``table_timers_set`` event; a
        table recorded before the online lifecycle has none, and re-runs as it was recorded.
        """
        if not isinstance(players, int) or isinstance(players, bool):
            raise Rejected("bad_player_count", "The number of players must be a whole number.")
        typed = self.parse_options(options)
        self.rules.check_options(typed, players)
        events: list[Event] = [
            TableCreated(
                game_id=game_id,
                game=self.name,
                players=players,
                options=msgspec.to_builtins(typed),
                practice=practice,
                commitment=commitment,
            )
        ]
        if timers is not None:
            try:
                parsed = msgspec.convert(timers, TableTimers)
            except msgspec.ValidationError as exc:
                raise Rejected("invalid_options", f"The table options are invalid: {exc}.") from None
            events.append(TableTimersSet(**msgspec.structs.asdict(parsed)))
        return events

    def parse_options(self, options: dict[str, Any]) -> Any:
        try:
            return msgspec.convert(options, self.rules.options_type)
        except msgspec.ValidationError as exc:
            raise Rejected("invalid_options", f"The table options are invalid: {exc}.") from None

    def join(
        self,
        state: TableState,
        name: str,
        client_seed: str,
        seeds: SeedSource,
        account: Account | None = None,
    ) -> list[Event]:
        """Take the lowest free seat; taking the last one starts the game in the same batch. With an
        ``account`` the seat is also claimed for it (``seat_claimed`` right after ``player_joined``)."""
        _expect_open(state)
        if account is not None and any(p.account and p.account.id == account.id for p in state.seated):
            raise Conflict("already_seated", "This account already has a seat at this table.")
        name = name.strip()
        if not 1 <= len(name) <= MAX_NAME:
            raise Rejected("invalid_name", f"A player name must have 1 to {MAX_NAME} characters.")
        if len(client_seed) > MAX_CLIENT_SEED:
            raise Rejected("invalid_client_seed", f"A client seed has at most {MAX_CLIENT_SEED} characters.")
        joined = PlayerJoined(seat=state.free_seats()[0], name=name, client_seed=client_seed)
        seated: list[Event] = [joined]
        if account is not None:
            seated.append(SeatClaimed(seat=joined.seat, account_id=account.id, display_name=account.name))
        return self._seat(state, seated, seeds)

    def fill_with_bots(
        self, state: TableState, seeds: SeedSource, level: str = DEFAULT_BOT_LEVEL, count: int | None = None
    ) -> list[Event]:
        """A bot of ``level`` (``BOT_LEVELS``) in each of the ``count`` lowest free seats, or in every
        free seat when ``count`` is None (the host's request: one level per seat, by asking once per
        level); the table starts once every seat is taken."""
        if level not in BOT_LEVELS:
            raise Rejected("invalid_bot_level", f"A bot's level is one of {', '.join(BOT_LEVELS)}.")
        # the level's own constant, not the caller's equal copy (a decoded request): msgspec leaves a
        # default out of the bytes only when it is the default object itself, and the verifier re-runs
        # a "normal" request from a record that names no level
        level = BOT_LEVELS[BOT_LEVELS.index(level)]
        if state.status != "waiting":
            raise Conflict("not_waiting", "Bots fill the seats of a table that is still waiting.")
        _expect_open(state)
        free = state.free_seats()
        if count is not None and not 1 <= count <= len(free):
            raise Rejected(
                "invalid_bot_count",
                f"Bots can take from 1 to {len(free)} seat{'' if len(free) == 1 else 's'} of this table.",
            )
        bots = [BotSeated(seat=s, name=bot_name(s), level=level) for s in free[:count]]
        return self._seat(state, bots, seeds)

    def _seat(self, state: TableState, seated: list[Event], seeds: SeedSource) -> list[Event]:
        batch: Unfolding[TableState, Event] = Unfolding(self, state).add(*seated)
        if len(batch.state.seated) < state.players:
            return batch.events
        mix = player_mix(mix_scope(state), [p.client_seed for p in batch.state.seated])
        batch.add(GameStarted(mix=mix.hex()))
        chance = Chance(seeds, mix)
        started = batch.state
        return batch.events + self._with_bookkeeping(
            started, self.rules.start(started.game_state, chance), chance
        )

    def decide(self, state: TableState, command: Command, seat: Seat, seeds: SeedSource) -> list[Event]:
        """A seated player's own command (not a bot's: a seat a bot took over is the bot's)."""
        chance = self._playing(state, seat, seeds)
        if seat in state.bots:
            raise Conflict(
                "seat_taken_over",
                "A bot plays this seat (one taken over after missed turns can be taken back).",
            )
        return self._with_bookkeeping(
            state, self.rules.decide(state.game_state, command, seat, chance), chance
        )

    def bot_decide(self, state: TableState, command: Command, seat: Seat, seeds: SeedSource) -> list[Event]:
        """A bot's command for the seat it plays."""
        chance = self._playing(state, seat, seeds)
        if seat not in state.bots:
            raise Rejected("not_a_bot", "No bot plays this seat.")
        return self._with_bookkeeping(
            state, self.rules.decide(state.game_state, command, seat, chance), chance
        )

    def default_command(self, state: TableState, seat: Seat, seeds: SeedSource) -> Command | None:
        """The game's documented default for ``seat`` now (``None``: the bot's move stands in)."""
        chance = self._playing(state, seat, seeds)
        found: Command | None = self.rules.default_command(state.game_state, seat, chance)
        return found

    def timeout(self, state: TableState, seat: Seat, command: Command, seeds: SeedSource) -> list[Event]:
        """``seat``'s time ran out: ``turn_timed_out``, then ``command`` (its default action) as if the
        seat had sent it, then, at ``takeover_after`` timeouts in a row, a bot takes the seat."""
        chance = self._playing(state, seat, seeds)
        if state.timers is None or state.timers.turn_seconds == 0:
            raise Conflict("no_turn_timer", "This table has no turn timer.")
        if seat not in self.to_act(state):
            raise Conflict("not_awaited", "This seat is not awaited, so its time cannot run out.")
        probe = _Recording(seeds)
        self.rules.default_command(state.game_state, seat, Chance(probe, bytes.fromhex(state.mix or "")))
        withheld = max(probe.requested) if probe.requested else None
        timed_out = TurnTimedOut(seat=seat, withheld_round=withheld)
        lead = self.evolve(state, timed_out)
        game_events = self.rules.decide(state.game_state, command, seat, chance)
        follow: list[Event] = []
        if seat not in state.bots and lead.streaks[seat] >= state.timers.takeover_after:
            follow.append(BotTookOver(seat=seat, reason="timeouts"))
        return [timed_out, *self._with_bookkeeping(lead, game_events, chance, follow)]

    def leave(self, state: TableState, seat: Seat) -> list[Event]:
        """While waiting the seat is freed; during play a bot takes it over at once."""
        if state.status in ("finished", "expired", "closed"):
            raise Conflict("game_over", "The game is over; there is nothing to leave.")
        if not state.holds(seat):
            raise Conflict("not_seated", "This seat has already been left.")
        if state.status == "waiting":
            return [SeatLeft(seat=seat)]
        if seat in state.bots:
            return [SeatLeft(seat=seat)]
        return [SeatLeft(seat=seat), BotTookOver(seat=seat, reason="left")]

    def reclaim(self, state: TableState, seat: Seat) -> list[Event]:
        """``seat``'s player takes back the seat a bot took over after their timeouts. Not a seat
        that was left (its player gave it up) nor one the host filled with a bot (no player)."""
        if state.status == "closed":
            raise Conflict("table_closed", "This table was closed by an operator.")
        if state.status == "waiting":
            raise Conflict("not_started", "The game has not started yet: seats are still open.")
        if state.status == "expired":
            raise Conflict("table_expired", "This table expired before it was filled.")
        if state.status == "finished":
            raise Conflict("game_over", "The game is over; there is no seat to take back.")
        if not 0 <= seat < state.players:
            raise Rejected("not_seated", "Only a seated player may take a seat back.")
        if seat not in state.bots:
            raise Conflict("not_taken_over", "No bot plays this seat: it is already yours.")
        if state.takeovers.get(seat) != "timeouts":
            raise Conflict(
                "cannot_reclaim", "Only a seat a bot took over after missed turns can be taken back."
            )
        return [SeatReclaimed(seat=seat)]

    def hint(
        self, state: TableState, seat: Seat, command: Command, reason: dict[str, Any] | None
    ) -> list[Event]:
        """``seat`` asks for a hint and is suggested ``command``: only at a practice table (its
        deals are known in advance and it is never rated), only for a seat whose player is awaited
        now, and only one of its legal commands. Who suggested it (the ``strong`` bot, from the
        seat's own view) is the server's business; a re-run checks what can be checked: the rules."""
        self.check_hint(state, seat)
        suggested = msgspec.to_builtins(command)
        if suggested not in msgspec.to_builtins(self.legal_commands(state, seat)):
            raise Rejected("illegal_hint", "A hint is one of the seat's legal commands.")
        if reason is not None and not (
            isinstance(reason.get("key"), str) and isinstance(reason.get("params", {}), dict)
        ):
            raise Rejected("invalid_hint_reason", "A hint's reason is a glossary key and its values.")
        return [HintGiven(seat=seat, command=suggested, reason=reason)]

    def check_hint(self, state: TableState, seat: Seat) -> None:
        """``Rejected`` unless ``seat`` may ask for a hint now (see ``hint``)."""
        self._playing(state, seat, _NO_SEEDS)
        if not state.practice:
            raise Rejected("hints_not_allowed", "Hints are given at practice tables only.")
        if seat in state.bots:
            raise Conflict("seat_taken_over", "A bot plays this seat.")
        if seat not in self.to_act(state):
            raise Conflict("not_your_turn", "It is not your turn.")

    def expire(self, state: TableState) -> list[Event]:
        """A waiting table nobody filled in time."""
        if state.status != "waiting":
            raise Conflict("not_waiting", "Only a waiting table expires.")
        return [TableExpired()]

    def close(self, state: TableState, reason: str, operator: str, seeds: SeedSource) -> list[Event]:
        """An operator ends a waiting or running table: ``table_closed``, then the seeds of every
        round begun and not yet revealed (the game is over: nothing is hidden any more)."""
        if state.status == "closed":
            raise Conflict("table_closed", "This table was closed by an operator.")
        if state.status in ("finished", "expired"):
            raise Conflict("game_over", "The game is over; there is nothing to close.")
        reason = reason.strip()
        if not 1 <= len(reason) <= MAX_CLOSE_REASON:
            raise Rejected("invalid_reason", f"A reason has 1 to {MAX_CLOSE_REASON} characters.")
        if not operator:
            raise Rejected("invalid_operator", "A table is closed by a named operator.")
        events: list[Event] = [TableClosed(reason=reason, operator=operator)]
        if state.status == "playing" and state.mix is not None:
            chance = Chance(seeds, bytes.fromhex(state.mix))
            for round_number in range(1, self.rules.current_round(state.game_state) + 1):
                if round_number not in state.revealed:
                    events.append(SeedRevealed(round=round_number, seed=chance.reveal(round_number)))
        return events

    def _playing(self, state: TableState, seat: Seat, seeds: SeedSource) -> Chance:
        if state.status == "closed":
            raise Conflict("table_closed", "This table was closed by an operator.")
        if state.status == "waiting":
            raise Conflict("not_started", "The game has not started yet: seats are still open.")
        if state.status == "expired":
            raise Conflict("table_expired", "This table expired before it was filled.")
        if state.status == "finished":
            raise Conflict("game_over", "The game is over; no more commands are accepted.")
        if not 0 <= seat < state.players:
            raise Rejected("not_seated", "Only a seated player may act.")
        assert state.mix is not None
        return Chance(seeds, bytes.fromhex(state.mix))

    def _with_bookkeeping(
        self, state: TableState, game_events: list[Event], chance: Chance, follow: Sequence[Event] = ()
    ) -> list[Event]:
        """Append seed reveals for rounds that ended, a fresh chain when one runs out, the result.

        ``follow`` (a takeover) comes right after the game events unless the game just ended.
        """
        rules = self.rules
        after_state = fold(rules, state.game_state, game_events)
        events = list(game_events)
        terminal = rules.is_terminal(after_state)
        if not terminal:
            events.extend(follow)
        withheld = frozenset() if terminal else rules.withheld_rounds(after_state) | state.sealed
        for round_number in range(1, rules.rounds_completed(after_state) + 1):
            if round_number not in state.revealed and not _exposes(round_number, withheld):
                events.append(SeedRevealed(round=round_number, seed=chance.reveal(round_number)))
        if not terminal:
            next_chain, _ = chain_position(rules.current_round(after_state) + 1)
            if next_chain >= len(state.commitments):
                events.append(
                    SeedChainCommitted(
                        chain=next_chain,
                        first_round=next_chain * CHAIN_LENGTH + 1,
                        commitment=chance.chain_commitment(next_chain),
                    )
                )
        else:
            events.append(
                GameFinished(scores=list(rules.scores(after_state)), winners=list(rules.winners(after_state)))
            )
        return events

    # -- evolving --------------------------------------------------------------------------

    def evolve(self, state: TableState | None, event: Event) -> TableState:
        if not is_table_event(event):  # a game's own event, the common case
            assert state is not None, "a table's first event is table_created"
            return self._game_evolved(state, event)
        if isinstance(event, TableCreated):
            options = msgspec.convert(event.options, self.rules.options_type)
            return TableState(
                game_id=event.game_id,
                game=event.game,
                players=event.players,
                options=options,
                practice=event.practice,
                commitments=(event.commitment,),
                game_state=self.rules.initial_state(options, event.players),
                streaks=(0,) * event.players,
            )
        assert state is not None, "a table's first event is table_created"
        if isinstance(event, (PlayerJoined, BotSeated)):
            seed = event.client_seed if isinstance(event, PlayerJoined) else ""
            player = Player(seat=event.seat, name=event.name, client_seed=seed)
            seated = tuple(sorted((*state.seated, player), key=lambda p: p.seat))
            if isinstance(event, PlayerJoined):
                return msgspec.structs.replace(state, seated=seated)
            takeovers: dict[int, TakeoverReason] = {**state.takeovers, event.seat: "host"}
            levels = {**state.bot_levels, event.seat: event.level}
            return msgspec.structs.replace(
                state, seated=seated, bots=state.bots | {event.seat}, takeovers=takeovers, bot_levels=levels
            )
        if isinstance(event, SeatClaimed):
            account = Account(id=event.account_id, name=event.display_name)
            seated = tuple(
                msgspec.structs.replace(p, account=account) if p.seat == event.seat else p
                for p in state.seated
            )
            return msgspec.structs.replace(state, seated=seated)
        if isinstance(event, GameStarted):
            return msgspec.structs.replace(state, mix=event.mix, status="playing")
        if isinstance(event, SeedRevealed):
            return msgspec.structs.replace(state, revealed={**state.revealed, event.round: event.seed})
        if isinstance(event, SeedChainCommitted):
            return msgspec.structs.replace(state, commitments=(*state.commitments, event.commitment))
        if isinstance(event, GameFinished):
            return msgspec.structs.replace(state, status="finished", winners=tuple(event.winners))
        if isinstance(event, TableTimersSet):
            timers = TableTimers(
                turn_seconds=event.turn_seconds,
                expire_minutes=event.expire_minutes,
                takeover_after=event.takeover_after,
                bot_pace_ms=event.bot_pace_ms,
                turn_based=event.turn_based,
                private=event.private,
                bot_level=event.bot_level if event.bot_level in BOT_LEVELS else DEFAULT_BOT_LEVEL,
            )
            return msgspec.structs.replace(state, timers=timers)
        if isinstance(event, SeatLeft):
            takeovers = {s: r for s, r in state.takeovers.items() if s != event.seat}
            if state.status == "waiting":
                seated = tuple(p for p in state.seated if p.seat != event.seat)
                levels = {s: lv for s, lv in state.bot_levels.items() if s != event.seat}
                return msgspec.structs.replace(
                    state,
                    seated=seated,
                    bots=state.bots - {event.seat},
                    takeovers=takeovers,
                    bot_levels=levels,
                )
            if event.seat in state.bots:  # a bot already played it (timeouts): now for good
                takeovers[event.seat] = "left"
            return msgspec.structs.replace(state, left=state.left | {event.seat}, takeovers=takeovers)
        if isinstance(event, BotTookOver):
            takeovers = {**state.takeovers, event.seat: event.reason}
            return msgspec.structs.replace(state, bots=state.bots | {event.seat}, takeovers=takeovers)
        if isinstance(event, SeatReclaimed):
            takeovers = {s: r for s, r in state.takeovers.items() if s != event.seat}
            streaks = tuple(0 if s == event.seat else n for s, n in enumerate(state.streaks))
            return msgspec.structs.replace(
                state, bots=state.bots - {event.seat}, takeovers=takeovers, streaks=streaks
            )
        if isinstance(event, TurnTimedOut):
            streaks = _bumped(state.streaks, event.seat)
            sealed = state.sealed if event.withheld_round is None else state.sealed | {event.withheld_round}
            return msgspec.structs.replace(state, streaks=streaks, timing_out=event.seat, sealed=sealed)
        if isinstance(event, TableExpired):
            return msgspec.structs.replace(state, status="expired")
        if isinstance(event, TableClosed):
            return msgspec.structs.replace(state, status="closed", timing_out=None)
        if isinstance(event, HintGiven):
            return msgspec.structs.replace(state, hinted=state.hinted | {event.seat})
        return self._game_evolved(state, event)  # unreachable while TABLE_EVENTS lists the above

    def _game_evolved(self, state: TableState, event: Event) -> TableState:
        game_state = self.rules.evolve(state.game_state, event)
        if state.timing_out is None and not any(state.streaks):
            return msgspec.structs.replace(state, game_state=game_state)
        return self._finished_turns(state, game_state)

    def _finished_turns(self, state: TableState, game_state: Any) -> TableState:
        """A seat that stops being awaited has finished a turn: by the default action being recorded
        (``timing_out``), or by itself, which ends its run of timeouts."""
        before = set(self.rules.to_act(state.game_state))
        done = before - set(self.rules.to_act(game_state))
        timing_out = state.timing_out
        streaks = list(state.streaks)
        for seat in done:
            if seat == timing_out:
                timing_out = None
            else:
                streaks[seat] = 0
        return msgspec.structs.replace(
            state, game_state=game_state, timing_out=timing_out, streaks=tuple(streaks)
        )

    def fold(self, state: TableState | None, events: Sequence[Event]) -> TableState | None:
        return fold(self, state, events)

    # -- seeing ----------------------------------------------------------------------------

    def redact(self, event: Event, viewer: Seat | None, finished: bool) -> Event:
        """What ``viewer`` may see of ``event``; once the game is over, everything."""
        if finished:
            return event
        if isinstance(event, HintGiven):
            return event if viewer == event.seat else HintGiven(seat=event.seat)
        if is_table_event(event):
            return event
        shown: Event = self.rules.redact(event, viewer)
        return shown

    def to_act(self, state: TableState) -> list[Seat]:
        return self.rules.to_act(state.game_state) if state.status == "playing" else []

    def legal_commands(self, state: TableState, seat: Seat | None) -> list[Command]:
        if state.status != "playing" or seat is None:
            return []
        return self.rules.legal_commands(state.game_state, seat)


def is_private(state: TableState) -> bool:
    """Whether the table is private: never listed in the lobby, seen and joined only by its link."""
    return state.timers is not None and state.timers.private


def bot_name(seat: Seat) -> str:
    return f"Bot {seat + 1}"


def _expect_open(state: TableState) -> None:
    if state.status == "closed":
        raise Conflict("table_closed", "This table was closed by an operator.")
    if state.status == "expired":
        raise Conflict("table_expired", "This table expired before it was filled.")
    if state.status != "waiting" or not state.free_seats():
        raise Conflict("table_full", "Every seat at this table is taken.")


def _bumped(streaks: tuple[int, ...], seat: Seat) -> tuple[int, ...]:
    return tuple(n + 1 if s == seat else n for s, n in enumerate(streaks))


class _NoSeeds:
    """A ``SeedSource`` for a decision that draws nothing (a hint): asking it is a bug."""

    def round_seed(self, round_number: int) -> bytes:
        raise AssertionError("a hint draws no chance")

    def chain_commitment(self, chain: int) -> str:
        raise AssertionError("a hint commits no chain")


_NO_SEEDS = _NoSeeds()


class _Recording:
    """A ``SeedSource`` that notes which rounds' seeds were asked for."""

    def __init__(self, seeds: SeedSource) -> None:
        self.seeds = seeds
        self.requested: set[int] = set()

    def round_seed(self, round_number: int) -> bytes:
        self.requested.add(round_number)
        return self.seeds.round_seed(round_number)

    def chain_commitment(self, chain: int) -> str:
        return self.seeds.chain_commitment(chain)


def _exposes(round_number: int, withheld: frozenset[int]) -> bool:
    """Would revealing this round's seed expose a withheld one? Within a chain s_(i-1) = SHA-256(s_i),
    so a seed gives away every earlier seed of its chain."""
    chain, _ = chain_position(round_number)
    return any(w <= round_number and chain_position(w)[0] == chain for w in withheld)


def mix_scope(state: TableState) -> str:
    """What the players' mix binds besides their client seeds: the game id, so no two tables share
    a deal - except practice tables, which bind their seed's commitment instead, so that the same
    practice seed and client seeds deal the same cards at any table."""
    return f"practice:{state.commitments[0]}" if state.practice else state.game_id


def _members(union: Any) -> tuple[Any, ...]:
    return tuple(getattr(union, "__args__", (union,)))
