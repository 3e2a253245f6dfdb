"""The one-round-trip command path (``GameCommands.command`` on a held head): a command decided on
the head an API process holds is appended in one round trip, and answers exactly as the path that
loads first.

The property plays the same random steps on two tables dealt alike (one practice seed) on one real
Redis: on one, two API processes take the fast path (each with its own cache, so each often holds a
head the other moved past); on the other, two processes always load first. Every step's outcome,
every stored event and the armed timer must be equal on both."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis
from hypothesis import example, given, settings
from hypothesis import strategies as st

from services.errors import AppError
from services.history.folding import Folded, StateCache, decode_events
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore
from services.store.keys import game_keys
from services.store.operations import Handover
from services.store.tokens import TokenStore, digest_of
from services.table.callers import TokenChanged, TokenCheck
from services.table.commands import CommandOutcome, GameCommands
from services.table.lifecycle import Lifecycle

pytestmark = pytest.mark.redis
SEED = "5eed" * 16  # a practice seed: both tables are dealt the same cards
PLAYERS = 4


async def no_poke(game_id: str, handover: Handover) -> None:
    return None


async def no_bots(game_id: str, version: int, seats: list[int]) -> None:
    raise AssertionError("no table of these tests has bots")


@dataclass
class Side:
    """Two API processes (own store, token store and fold cache each) and an observer (its own cache:
    its loads change nothing the processes hold) on one Redis, all on one table."""

    fast: bool
    client: aioredis.Redis
    now: list[int]
    processes: list[GameCommands] = field(default_factory=list)
    observer: GameCommands | None = None
    game_id: str = ""
    tokens: list[str] = field(default_factory=list)
    sent: list[tuple[int, str, dict[str, Any], int | None]] = field(default_factory=list)

    def handler(self, fast: bool) -> GameCommands:
        store = EventStore(self.client)
        lifecycle = Lifecycle(store, no_bots, clock=lambda: self.now[0])
        return GameCommands(store, TokenStore(self.client), no_poke, StateCache(), lifecycle, fast_path=fast)

    async def start(self) -> None:
        self.processes = [self.handler(self.fast) for _ in range(2)]
        self.observer = self.handler(False)
        self.game_id, _ = await self.observer.create(
            "skull-king", PLAYERS, {"seed": SEED, "turn_seconds": 60}
        )
        for seat in range(PLAYERS):
            _, token = await self.observer.join(self.game_id, f"P{seat}", "")
            self.tokens.append(token)

    async def state(self) -> Folded:
        assert self.observer is not None
        return await self.observer.load(self.game_id)

    async def timer(self) -> dict[bytes, bytes]:
        return await self.client.hgetall(game_keys(self.game_id).timer)  # type: ignore[misc]

    async def stored(self) -> list[tuple[int, Any]]:
        assert self.observer is not None
        folded = await self.state()
        entries = await self.observer.store.read(self.game_id, after=1)  # the first names the game
        return [(v, msgspec.to_builtins(e)) for v, e in decode_events(folded.table, entries)]


def check_of(side: Side, seat: int, token_of: int | None, role: int | None) -> TokenCheck | None:
    """``None``: the caller was looked up this request; else the identity a process assumed from
    memory: seat ``role``'s, by the token of seat ``token_of`` (-1: a token the game never issued)."""
    if token_of is None or role is None:
        return None
    token = side.tokens[token_of] if token_of >= 0 else "never-issued"
    return TokenCheck(side.game_id, digest_of(token), str(role))


async def answer(call: Awaitable[CommandOutcome]) -> tuple[Any, ...]:
    try:
        outcome = await call
    except AppError as error:
        return ("error", error.kind, error.code, error.message, error.details)
    except TokenChanged:
        return ("token_changed",)
    events = [(v, msgspec.to_builtins(e)) for v, e in outcome.events]
    return ("ok", outcome.first, outcome.version, outcome.duplicate, outcome.finished, events)


# A step: (process, kind, a, b, c); the numbers pick among what the table offers at that moment.
steps = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.sampled_from(
            ["move", "move", "move", "move", "any_seat", "retry", "reuse", "wrong_token", "forget"]
        ),
        st.integers(0, 7),
        st.integers(0, 7),
        st.sampled_from(["none", "head", "stale", "ahead"]),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=max(10, settings().max_examples // 4), deadline=None)
@given(steps=steps)
@example(steps=[(0, "move", 0, 0, "none"), (0, "move", 0, 0, "head"), (1, "move", 1, 0, "head")])
@example(steps=[(0, "move", 0, 0, "none"), (1, "move", 0, 0, "none"), (0, "retry", 0, 0, "none")])
@example(steps=[(0, "move", 0, 0, "none"), (0, "wrong_token", 1, 0, "none"), (0, "reuse", 0, 1, "none")])
@example(steps=[(0, "move", 0, 0, "stale"), (0, "any_seat", 3, 0, "head"), (1, "forget", 0, 0, "none")])
def test_random_interleavings_of_two_processes_answer_as_the_path_that_loads_first(
    redis_server: EmbeddedRedis, steps: list[tuple[int, str, int, int, str]]
) -> None:
    """Moves, moves by any seat (often refused), retries of a sent command, an id reused with
    another body, wrong tokens assumed from memory, and caches dropped, from either of two processes
    in any order: the fast side's outcomes, stored events and timer equal the loading side's.
    Random by default (the hypothesis profile); a failure prints a ``@reproduce_failure`` blob."""
    asyncio.run(play(redis_server.url, steps))


async def play(url: str, steps: list[tuple[int, str, int, int, str]]) -> None:
    client = aioredis.Redis.from_url(url)
    await client.flushall()
    now = [1_000_000]
    fast, slow = Side(True, client, now), Side(False, client, now)
    try:
        for side in (fast, slow):
            await side.start()
        for number, (process, kind, a, b, version_pick) in enumerate(steps):
            now[0] += 1_000
            state = await slow.state()
            assert (await fast.state()).version == state.version
            to_act = sorted(state.table.to_act(state.state))
            answers = []
            for side in (fast, slow):
                handler = side.processes[process]
                call = step_call(side, handler, number, kind, a, b, version_pick, state, to_act)
                answers.append(None if call is None else await answer(call))
            assert answers[0] == answers[1], (number, kind, answers)
            assert await fast.timer() == await slow.timer(), number
        assert await fast.stored() == await slow.stored()
    finally:
        await client.aclose()


def step_call(
    side: Side,
    handler: GameCommands,
    number: int,
    kind: str,
    a: int,
    b: int,
    version_pick: str,
    state: Folded,
    to_act: list[int],
) -> Awaitable[CommandOutcome] | None:
    expected = {"none": None, "head": state.version, "stale": state.version - 1, "ahead": state.version + 1}
    if kind == "forget":
        handler.cache = StateCache()
        return None
    if kind in ("retry", "reuse"):
        if not side.sent:
            return None
        seat, command_id, body, sent_expected = side.sent[a % len(side.sent)]
        if kind == "reuse":
            body = {"type": "no-such-command", "n": b}
        return handler.command(
            side.game_id, seat, command_id, body, sent_expected, check_of(side, seat, seat, seat)
        )
    if not to_act:
        return None
    seat = to_act[a % len(to_act)] if kind != "any_seat" else a % PLAYERS
    legal = state.table.legal_commands(state.state, to_act[a % len(to_act)])
    body = msgspec.to_builtins(legal[b % len(legal)]) if legal else {"type": "no-such-command"}
    command_id = f"c{number}"
    version = expected[version_pick]
    if kind == "wrong_token":
        check = check_of(side, seat, -1 if b % 2 else (seat + 1) % PLAYERS, seat)
    else:
        check = check_of(side, seat, seat, seat) if b % 2 else None
    side.sent.append((seat, command_id, body, version))
    return handler.command(side.game_id, seat, command_id, body, version, check)


def round_trips(store: EventStore) -> list[str]:
    """Every request ``store`` sends from now on (a name per round trip), noted in the list returned."""
    sent: list[str] = []
    execute = store._execute

    async def noted(request: Any) -> Any:
        sent.append(getattr(request, "script", None) or type(request).__name__)
        return await execute(request)

    store._execute = noted  # type: ignore[method-assign]
    return sent


@pytest.mark.anyio
async def test_a_command_on_the_head_the_process_holds_is_one_round_trip(
    real_redis_async: aioredis.Redis,
) -> None:
    side = Side(True, real_redis_async, [1_000_000])
    await side.start()
    handler = side.processes[0]
    state = await handler.load(side.game_id)  # the process holds the head (as after its view read)
    await handler.seeds(side.game_id)
    seat = sorted(state.table.to_act(state.state))[0]
    body = msgspec.to_builtins(state.table.legal_commands(state.state, seat)[0])
    sent = round_trips(handler.store)
    check = check_of(side, seat, seat, seat)
    outcome = await handler.command(side.game_id, seat, "first", body, state.version, check)
    assert (outcome.version, sent) == (state.version + 1, ["append"])
    assert (await side.state()).version == outcome.version


@pytest.mark.anyio
async def test_a_head_moved_by_another_process_is_loaded_again_and_the_command_decided_on_it(
    real_redis_async: aioredis.Redis,
) -> None:
    side = Side(True, real_redis_async, [1_000_000])
    await side.start()
    first, second = side.processes
    state = await first.load(side.game_id)
    await second.load(side.game_id)  # both hold the same head
    await second.seeds(side.game_id)
    seats = sorted(state.table.to_act(state.state))  # the bids: every seat acts at once
    bid = msgspec.to_builtins(state.table.legal_commands(state.state, seats[0])[0])
    await first.command(side.game_id, seats[0], "a", bid, None)
    sent = round_trips(second.store)
    bid = msgspec.to_builtins(state.table.legal_commands(state.state, seats[1])[0])
    outcome = await second.command(side.game_id, seats[1], "b", bid, None)
    assert outcome.version == state.version + 2
    assert sent[0] == "append" and "Pipelined" in sent[1:]  # the append missed, then the load


@pytest.mark.anyio
async def test_a_revoked_token_assumed_from_memory_is_refused_by_the_append_and_nothing_is_written(
    real_redis_async: aioredis.Redis,
) -> None:
    side = Side(True, real_redis_async, [1_000_000])
    await side.start()
    handler = side.processes[0]
    state = await handler.load(side.game_id)
    seat = sorted(state.table.to_act(state.state))[0]
    body = msgspec.to_builtins(state.table.legal_commands(state.state, seat)[0])
    await handler.seeds(side.game_id)
    await handler.tokens.revoke(side.game_id, side.tokens[seat])
    sent = round_trips(handler.store)
    with pytest.raises(TokenChanged):
        await handler.command(side.game_id, seat, "x", body, None, check_of(side, seat, seat, seat))
    assert sent == ["append"]
    assert (await side.state()).version == state.version
