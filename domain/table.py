"""The table: what every game shares around its rules.

A table is created with options and a seed commitment, fills its seats, starts by itself when the
last seat is taken, and keeps the fairness bookkeeping (seed reveals at round ends, fresh chains,
the final result) in the same batch as the game events that triggered it. Game rules never see
any of this; the table never sees a game's internals beyond the ``Rules`` protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, Union

import msgspec

from domain.fairness import CHAIN_LENGTH, Chance, SeedSource, chain_position, player_mix
from domain.kernel import Command, Conflict, Event, Rejected, Rules, Seat, Unfolding, fold

MAX_NAME = 40
MAX_CLIENT_SEED = 64
RULES_VERSION = 1

Status = Literal["waiting", "playing", "finished"]


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


TABLE_EVENTS: tuple[type[Event], ...] = (
    TableCreated,
    PlayerJoined,
    SeatClaimed,
    GameStarted,
    SeedRevealed,
    SeedChainCommitted,
    GameFinished,
)


class Account(msgspec.Struct, frozen=True):
    """A registered account taking a seat: its stable id and its display name."""

    id: str
    name: str


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


class Table:
    """The Decider of a whole table, generic over one game's ``Rules``."""

    def __init__(self, rules: Rules[Any, Any, Any, Any]) -> None:
        self.rules = rules
        self.name = rules.name
        self.event_type: Any = Union[(*TABLE_EVENTS, *_members(rules.event_type))]
        self.command_type: Any = rules.command_type

    # -- deciding --------------------------------------------------------------------------

    def create(
        self, game_id: str, players: Any, options: dict[str, Any], commitment: str, practice: bool
    ) -> list[Event]:
        """The ``table_created`` event, or ``Rejected`` for a player count or options the game refuses."""
        if not isinstance(players, int) or isinstance(players, bool):
            raise Rejected("bad_player_count", "The number of players must be a whole number.")
        typed = self.parse_options(options)
        self.rules.check_options(typed, players)
        return [
            TableCreated(
                game_id=game_id,
                game=self.name,
                players=players,
                options=msgspec.to_builtins(typed),
                practice=practice,
                commitment=commitment,
            )
        ]

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
        """Take the next free seat; taking the last one starts the game in the same batch. With an
        ``account`` the seat is also claimed for it (``seat_claimed`` right after ``player_joined``)."""
        if state.status != "waiting" or len(state.seated) >= state.players:
            raise Conflict("table_full", "Every seat at this table is taken.")
        if account is not None and any(p.account and p.account.id == account.id for p in state.seated):
            raise Conflict("already_seated", "This account already has a seat at this table.")
        name = name.strip()
        if not 1 <= len(name) <= MAX_NAME:
            raise Rejected("invalid_name", f"A player name must have 1 to {MAX_NAME} characters.")
        if len(client_seed) > MAX_CLIENT_SEED:
            raise Rejected("invalid_client_seed", f"A client seed has at most {MAX_CLIENT_SEED} characters.")
        joined = PlayerJoined(seat=len(state.seated), name=name, client_seed=client_seed)
        batch: Unfolding[TableState, Event] = Unfolding(self, state).add(joined)
        if account is not None:
            batch.add(SeatClaimed(seat=joined.seat, account_id=account.id, display_name=account.name))
        if joined.seat + 1 < state.players:
            return batch.events
        mix = player_mix(mix_scope(state), [p.client_seed for p in state.seated] + [client_seed])
        batch.add(GameStarted(mix=mix.hex()))
        chance = Chance(seeds, mix)
        started = batch.state
        return batch.events + self._with_bookkeeping(
            started, self.rules.start(started.game_state, chance), chance
        )

    def decide(self, state: TableState, command: Command, seat: Seat, seeds: SeedSource) -> list[Event]:
        if state.status == "waiting":
            raise Conflict("not_started", "The game has not started yet: seats are still open.")
        if state.status == "finished":
            raise Conflict("game_over", "The game is over; no more commands are accepted.")
        if not 0 <= seat < state.players:
            raise Rejected("not_seated", "Only a seated player may act.")
        assert state.mix is not None
        chance = Chance(seeds, bytes.fromhex(state.mix))
        return self._with_bookkeeping(
            state, self.rules.decide(state.game_state, command, seat, chance), chance
        )

    def _with_bookkeeping(self, state: TableState, game_events: list[Event], chance: Chance) -> list[Event]:
        """Append seed reveals for rounds that ended, a fresh chain when one runs out, the result."""
        rules = self.rules
        after_state = fold(rules, state.game_state, game_events)
        events = list(game_events)
        terminal = rules.is_terminal(after_state)
        withheld = frozenset() if terminal else rules.withheld_rounds(after_state)
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
            )
        assert state is not None, "a table's first event is table_created"
        if isinstance(event, PlayerJoined):
            player = Player(seat=event.seat, name=event.name, client_seed=event.client_seed)
            return msgspec.structs.replace(state, seated=(*state.seated, player))
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
        return msgspec.structs.replace(state, game_state=self.rules.evolve(state.game_state, event))

    def fold(self, state: TableState | None, events: Sequence[Event]) -> TableState | None:
        return fold(self, state, events)

    # -- seeing ----------------------------------------------------------------------------

    def redact(self, event: Event, viewer: Seat | None, finished: bool) -> Event:
        """What ``viewer`` may see of ``event``; once the game is over, everything."""
        if finished or isinstance(event, TABLE_EVENTS):
            return event
        shown: Event = self.rules.redact(event, viewer)
        return shown

    def to_act(self, state: TableState) -> list[Seat]:
        return self.rules.to_act(state.game_state) if state.status == "playing" else []

    def legal_commands(self, state: TableState, seat: Seat | None) -> list[Command]:
        if state.status != "playing" or seat is None:
            return []
        return self.rules.legal_commands(state.game_state, seat)


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
