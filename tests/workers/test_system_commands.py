"""The ids of the commands the system plays (timeouts, bots) are out of every player's reach, on a
real Redis (issue 24, defect 2): a seat that sends a command under its own next timeout id (or its
bot's) can no longer make itself immune to the turn timer, and a timer job that cannot play what
its timer calls for ends instead of being queued again for ever.

Random tests take a replayable seed (``SEEDS``); time is a ``FakeClock``, never a sleep."""

from __future__ import annotations

import random
import string
from typing import Any

import pytest
import redis

from domain.fairness import SecretSeeds
from services.errors import AppError, RuleError
from services.store.event_store import SyncEventStore
from services.store.keys import game_keys
from services.store.queue import lifecycle_queue
from services.table import commands as write_side
from services.table.commands import RESERVED_PREFIXES, GameCommands
from tests.workers.conftest import FakeClock
from tests.workers.test_lifecycle import accepted, drain, folded, records, run, table
from workers.lifecycle import bot_move, tick

pytestmark = pytest.mark.redis

SEEDS = range(6)
STEPS = 70
TURN_SECONDS = 5


def hostile_id(rng: random.Random, version: int, seat: int, players: int) -> str:
    """A command id a player might send: the system's ids it could predict (this version or one
    of the next few, its own seat or another's), look-alikes of the stored scopes, or noise."""
    v = version + rng.randrange(6)
    other = rng.randrange(players)
    tail = f"{rng.getrandbits(32):08x}"
    return rng.choice(
        [
            f"timeout-{v}-{seat}",
            f"timeout-{v}-{other}",
            f"bot-{v}-{seat}",
            f"bot-{v}-{other}",
            f"expire-{v}",
            f"bots-{tail}",
            f"leave-{seat}-{tail}",
            f"reclaim-{seat}-{tail}",
            "create",
            f"sys{seat}:timeout-{v}-{seat}",
            f":timeout-{v}-{seat}",
            f"{seat}:bot-{v}-{seat}",
            f"Timeout-{v}-{seat}",
            "".join(
                rng.choice(string.ascii_letters + string.digits + "-:_ ") for _ in range(rng.randint(1, 24))
            ),
            tail,
        ]
    )


def chooser(rng: random.Random) -> SecretSeeds:
    """Seeds for picking the players' legal moves with the bots' code (not the game's own)."""
    return SecretSeeds(rng.randbytes(32), rng.randbytes(32))


@pytest.mark.parametrize("squatting", [False, True], ids=["refused", "squatting-allowed"])
@pytest.mark.parametrize("seed", SEEDS)
def test_every_timed_table_advances_whatever_ids_its_players_send_and_no_timer_job_loops(
    sync: redis.Redis, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, seed: int, squatting: bool
) -> None:
    """The timer-immunity property. ``squatting``: players' reserved-looking ids are let through (as
    before the rule), to show that the system's own scope alone keeps every timer and bot working."""
    if squatting:
        monkeypatch.setattr(write_side, "RESERVED_PREFIXES", ())
    rng = random.Random(seed)
    game, players = rng.choice([("skull-king", 2), ("skull", 3), ("six-nimmt", 3)])
    game_id = table(sync, clock, game, players, players, turn_seconds=TURN_SECONDS, takeover_after=2)
    store = SyncEventStore(sync)
    fired: list[tuple[str, int]] = []
    left = False
    refused = squatted = timeouts = 0
    for _ in range(STEPS):
        before = folded(sync, clock, game_id)
        state = before.state
        if state.status == "finished":
            break
        people = sorted(set(before.table.to_act(state)) - state.bots)
        if not people:  # only bots are awaited: their jobs move the game on
            drain(sync)
            assert folded(sync, clock, game_id).version > before.version, "the bots stalled"
            continue
        roll = rng.random()
        if roll < 0.5:  # a seat moves, under an id of its choice
            seat = rng.choice(people)
            command_id = hostile_id(rng, before.version, seat, players)
            move = bot_move(before, seat, chooser(rng))

            async def send(
                c: GameCommands,
                seat: int = seat,
                cid: str = command_id,
                m: Any = move,
                v: int = before.version,
            ) -> None:
                await c.command(game_id, seat, cid, m, v)

            try:
                run(sync, clock, send)
            except AppError as error:
                if error.code == "reserved_command_id":
                    assert not squatting and command_id.startswith(RESERVED_PREFIXES)
                    refused += 1
                else:
                    assert error.code == "command_id_reused", error.code  # the seat's own id again
            else:
                assert squatting or not command_id.startswith(RESERVED_PREFIXES)
                squatted += command_id.startswith(RESERVED_PREFIXES)
            drain(sync)
        elif roll < 0.55 and not left:  # a seat leaves: its bot plays on under system ids
            seat = rng.choice(people)
            run(sync, clock, lambda c, seat=seat: c.leave(game_id, seat))
            left = True
            drain(sync)
        else:  # the awaited people let their time run out
            clock.advance(TURN_SECONDS)
            now_fired = tick(store, lifecycle_queue(sync), clock())
            assert len(now_fired) == 1, now_fired
            fired += now_fired
            drain(sync)
            after = folded(sync, clock, game_id)
            assert after.version > before.version, f"the timer at version {before.version} did not advance"
            timeouts += 1
            assert tick(store, lifecycle_queue(sync), clock()) == [], "a fired timer was queued again"
        assert lifecycle_queue(sync).count == 0
    assert len(fired) == len(set(fired)), "a timer job was queued twice for one version"
    assert timeouts > 0
    assert refused > 0 if not squatting else squatted > 0
    if not squatting:
        player_ids = [r.id for r in records(sync, game_id) if r.kind == "command"]
        assert not [i for i in player_ids if i.startswith(RESERVED_PREFIXES)]
    accepted(sync, game_id)


def _awaited_timer(sync: redis.Redis, clock: FakeClock, game_id: str) -> tuple[int, list[int]]:
    head = folded(sync, clock, game_id)
    return head.version, sorted(head.table.to_act(head.state))


def _squat(sync: redis.Redis, game_id: str, seat: int, command_id: str) -> None:
    """A seat's own record under ``command_id``, as the store keeps a player's (``<seat>:<id>``),
    for a different command than the system's: what main accepted from a player."""
    sync.hset(game_keys(game_id).seat_commands, f"{seat}:{command_id}", "f00d 2 2")


def test_a_seat_holding_its_own_next_timeout_id_is_still_timed_out(
    sync: redis.Redis, clock: FakeClock
) -> None:
    """The attack of the issue: a record of the seat's under ``timeout-<V>-<seat>`` (V: the version
    it is awaited at), as a player could write one before ids were reserved, stops nothing."""
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=TURN_SECONDS, takeover_after=9)
    version, seats = _awaited_timer(sync, clock, game_id)
    for seat in seats:  # each seat times out at the version the previous timeout left
        for ahead in range(6):
            _squat(sync, game_id, seat, f"timeout-{version + ahead}-{seat}")
    store = SyncEventStore(sync)
    clock.advance(TURN_SECONDS)
    assert tick(store, lifecycle_queue(sync), clock()) == [(game_id, version)]
    drain(sync)
    timed_out = [(r.id, r.seat) for r in records(sync, game_id) if r.kind == "timeout"]
    assert [seat for _, seat in timed_out] == seats
    assert timed_out[0][0] == f"timeout-{version}-{seats[0]}"
    assert folded(sync, clock, game_id).version > version
    assert tick(store, lifecycle_queue(sync), clock()) == []  # nothing left to fire: no loop


def test_a_seat_holding_its_bots_next_id_and_leaving_is_played_by_its_bot(
    sync: redis.Redis, clock: FakeClock
) -> None:
    """The same with ``bot-<V>-<seat>`` and a leave, at a table without a turn timer (where a stuck
    bot would stall the table for good)."""
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=0)
    version, seats = _awaited_timer(sync, clock, game_id)
    seat = seats[0]
    for ahead in range(1, 4):  # the leave's batch is SeatLeft, BotTookOver: the bot acts at version + 2
        _squat(sync, game_id, seat, f"bot-{version + ahead}-{seat}")
    run(sync, clock, lambda c: c.leave(game_id, seat))
    drain(sync)
    bots = [r for r in records(sync, game_id) if r.kind == "bot" and r.seat == seat]
    assert bots and bots[0].id == f"bot-{version + 2}-{seat}"
    assert folded(sync, clock, game_id).version > version + 2


def test_a_timer_job_whose_command_is_refused_takes_its_deadline_off_instead_of_firing_for_ever(
    sync: redis.Redis, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=TURN_SECONDS)
    version, _ = _awaited_timer(sync, clock, game_id)

    async def refused(*args: Any, **kwargs: Any) -> Any:
        raise RuleError("not_awaited", "refused for the test")

    monkeypatch.setattr(GameCommands, "timeout", refused)
    store = SyncEventStore(sync)
    clock.advance(TURN_SECONDS)
    assert tick(store, lifecycle_queue(sync), clock()) == [(game_id, version)]
    drain(sync)
    timer = store.read_timer(game_id)
    assert int(timer["version"]) == version and "deadline" not in timer
    for _ in range(3):  # the loop's later ticks find nothing due: the job is not queued again
        clock.advance(1)
        assert tick(store, lifecycle_queue(sync), clock()) == []
    assert lifecycle_queue(sync).count == 0


def test_a_player_command_id_beginning_like_a_system_id_is_refused_with_its_own_code(
    sync: redis.Redis, clock: FakeClock
) -> None:
    game_id = table(sync, clock, "skull-king", 2, 2, turn_seconds=0)
    head = folded(sync, clock, game_id)
    seat = sorted(head.table.to_act(head.state))[0]
    move = bot_move(head, seat, chooser(random.Random(1)))
    for command_id in [
        f"timeout-{head.version}-{seat}",
        f"bot-{head.version + 1}-{seat}",
        "create",
        "expire-3",
    ]:
        with pytest.raises(AppError) as refused:
            run(sync, clock, lambda c, cid=command_id: c.command(game_id, seat, cid, move, head.version))
        assert refused.value.code == "reserved_command_id"
        assert "timeout-" in refused.value.message
    assert folded(sync, clock, game_id).version == head.version  # nothing appended
    outcome = run(sync, clock, lambda c: c.command(game_id, seat, "my-timeout-1", move, head.version))
    assert outcome.version > head.version
