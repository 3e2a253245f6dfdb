"""Recorded games with the online lifecycle: timers, timeouts, bots and leaving, stored exactly as
the write side stores them (``services.table.commands.GameCommands``), for the domain and verifier tests."""

from __future__ import annotations

import random
from typing import Any

import msgspec

from domain.fairness import SecretSeeds
from domain.games import table_for
from domain.kernel import Command, Event
from services.history.records import CommandRecord
from tests.support.play import seeds_from
from tests.support.recorded import RecordedGame

TIMERS = {"turn_seconds": 60, "expire_minutes": 30, "takeover_after": 3}


def online_game(
    game: str,
    players: int,
    options: dict[str, Any] | None = None,
    seed: int = 0,
    timers: dict[str, Any] | None = None,
    humans: int | None = None,
) -> RecordedGame:
    """A table created with the online options; ``humans`` seats join, the host fills the rest with
    bots (all seats join when ``humans`` is ``None``)."""
    table = table_for(game)
    seeds: SecretSeeds = seeds_from(seed)
    timers = dict(TIMERS if timers is None else timers)
    created = table.create(
        f"online-{game}-{seed}", players, options or {}, seeds.chain_commitment(0), False, timers
    )
    state = table.fold(None, created)
    assert state is not None
    g = RecordedGame(table=table, seeds=seeds, state=state)
    body = {"game": game, "players": players, "options": options or {}, "table": timers}
    g.record(CommandRecord(id="create", kind="create", body=body), created)
    for seat in range(players if humans is None else humans):
        events = table.join(g.state, f"P{seat}", f"cs{seat}", seeds)
        g.record(
            CommandRecord(
                id=f"join-{seat}", kind="join", body={"name": f"P{seat}", "client_seed": f"cs{seat}"}
            ),
            events,
        )
    if humans is not None and humans < players:
        g.record(CommandRecord(id="bots", kind="bots", body={}), table.fill_with_bots(g.state, seeds))
    return g


def time_out(g: RecordedGame, seat: int, rng: random.Random) -> list[Event]:
    """``seat``'s time runs out: the rules' default, else a legal move standing in for the bot's."""
    command = g.table.default_command(g.state, seat, g.seeds)
    if command is None:
        command = rng.choice(g.table.rules.legal_commands(g.state.game_state, seat))
    return timed_out_with(g, seat, command)


def timed_out_with(g: RecordedGame, seat: int, command: Command) -> list[Event]:
    events = g.table.timeout(g.state, seat, command, g.seeds)
    version = len(g.entries)
    body = msgspec.to_builtins(command)
    return g.record(
        CommandRecord(id=f"timeout-{version}-{seat}", kind="timeout", seat=seat, body=body), events
    )


def bot_acts(g: RecordedGame, seat: int, rng: random.Random) -> list[Event]:
    command = rng.choice(g.table.rules.legal_commands(g.state.game_state, seat))
    events = g.table.bot_decide(g.state, command, seat, g.seeds)
    version = len(g.entries)
    body = msgspec.to_builtins(command)
    return g.record(CommandRecord(id=f"bot-{version}-{seat}", kind="bot", seat=seat, body=body), events)


def leave(g: RecordedGame, seat: int) -> list[Event]:
    events = g.table.leave(g.state, seat)
    return g.record(CommandRecord(id=f"leave-{len(g.entries)}", kind="leave", seat=seat, body={}), events)


def reclaim(g: RecordedGame, seat: int) -> list[Event]:
    events = g.table.reclaim(g.state, seat)
    return g.record(CommandRecord(id=f"reclaim-{len(g.entries)}", kind="reclaim", seat=seat, body={}), events)


def play_online(
    g: RecordedGame,
    rng: random.Random,
    timeout_share: float = 0.3,
    leave_share: float = 0.01,
    reclaim_share: float = 0.0,
) -> RecordedGame:
    """Play to the end: bots act for their seats, humans act, time out or (rarely) leave; with a
    ``reclaim_share`` a seat taken over after timeouts is sometimes taken back instead of its bot
    acting (0: the random choices are those of games recorded before reclaims)."""
    for _ in range(20_000):
        if g.state.status == "finished":
            return g
        seat = rng.choice(sorted(g.table.to_act(g.state)))
        if reclaim_share and g.state.takeovers.get(seat) == "timeouts" and rng.random() < reclaim_share:
            reclaim(g, seat)
        elif seat in g.state.bots:
            bot_acts(g, seat, rng)
        elif rng.random() < leave_share:
            leave(g, seat)
        elif rng.random() < timeout_share:
            time_out(g, seat, rng)
        else:
            g.act(seat, rng.choice(g.legal(seat)))
    raise AssertionError("the game did not finish")
