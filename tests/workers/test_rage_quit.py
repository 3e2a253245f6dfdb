"""Rage-quit on a real Redis (issue 24, defect 7): registered players play a rated table through the
write side and the workers' jobs; one leaves mid-game, a bot plays the seat to the end, and the
projection worker records the game rated for everyone with the leaver last.

Replayable: the players' moves come from seeded choosers; time is a ``FakeClock``."""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
import redis

from domain.fairness import SecretSeeds
from domain.table import Account
from services.store import ratings as store_ratings
from services.store.event_store import SyncEventStore
from services.table.commands import GameCommands
from tests.workers.conftest import FakeClock
from tests.workers.test_lifecycle import accepted, drain, folded, run
from workers.lifecycle import bot_move

pytestmark = pytest.mark.redis

PLAYERS = [Account(id=f"{n:016x}", name=f"Quitter {n}") for n in range(3)]


def rated_table(sync: redis.Redis, clock: FakeClock) -> str:
    async def work(c: GameCommands) -> str:
        game_id, _ = await c.create("six-nimmt", len(PLAYERS), {"rounds": 1, "turn_seconds": 0})
        for account in PLAYERS:
            await c.join(game_id, account.name, f"cs-{account.id}", account)
        return game_id

    return run(sync, clock, work)


@pytest.mark.parametrize("seed", range(3))
def test_a_player_who_leaves_mid_game_is_ranked_last_and_the_game_stays_rated_for_the_others(
    real_redis: redis.Redis, clock: FakeClock, seed: int
) -> None:
    rng = random.Random(seed)
    chooser = SecretSeeds(rng.randbytes(32), rng.randbytes(32))
    game_id = rated_table(real_redis, clock)
    leaver, leave_at = rng.randrange(len(PLAYERS)), rng.randint(1, 12)
    moves = 0
    for _ in range(500):
        head = folded(real_redis, clock, game_id)
        if head.state.status == "finished":
            break
        people = sorted(set(head.table.to_act(head.state)) - head.state.bots)
        if moves == leave_at and leaver not in head.state.left:
            run(real_redis, clock, lambda c: c.leave(game_id, leaver))
        elif people:
            seat = people[0]
            move = bot_move(head, seat, chooser)

            async def send(
                c: GameCommands, seat: int = seat, move: Any = move, v: int = head.version
            ) -> None:
                await c.command(game_id, seat, f"m-{v}-{seat}", move, v)

            run(real_redis, clock, send)
            moves += 1
        drain(real_redis)  # the bot's moves, the projection and the finish's record
    assert folded(real_redis, clock, game_id).state.status == "finished"
    drain(real_redis)
    (raw,) = SyncEventStore(real_redis).run(store_ratings.records([game_id]))
    assert raw is not None
    record: dict[str, Any] = msgspec.json.decode(raw)
    assert record["rated"] is True and record["unrated_reason"] is None
    by_seat = {row["seat"]: row for row in record["seats"]}
    assert by_seat[leaver]["forfeit"] == "left"
    assert by_seat[leaver]["rank"] == len(PLAYERS) and by_seat[leaver]["winner"] is False
    assert all(row["rank"] < len(PLAYERS) for seat, row in by_seat.items() if seat != leaver)
    assert all(row["rating"] is not None for row in record["seats"])  # everyone rated, the leaver too
    change = by_seat[leaver]["rating"]
    assert change["after"]["mu"] < change["before"]["mu"]
    accepted(real_redis, game_id)
