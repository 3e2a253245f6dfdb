"""Quick play's matcher: everyone queued is seated once, across random arrivals, cancellations and
matchers killed mid-match; close ratings are paired first; a cancel leaves nothing; bots only with
consent, after the wait.

The property runs on seeds (``QP_SEEDS=...`` replays others): each seed fixes the arrivals, the
cancellations and where each matcher is killed. A kill raises ``Killed`` (not an error the matcher
handles) at a step of finishing a match, and the next matcher is a new one with its own write side
and cache, as a restarted process would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
from collections import Counter
from dataclasses import dataclass, field

import msgspec
import pytest
import redis
import redis.asyncio as aioredis

from domain.table import Account
from projections.ratings import Skill
from services.accounts.names import checked_seat_name
from services.errors import AppError, ConflictError
from services.history.export import build_export
from services.history.verify import verify_export
from services.people.quickplay import (
    ABANDON_MS,
    MARKER,
    MAX_WAIT_MS,
    WAIT_BOUND_MS,
    Group,
    Matcher,
    QuickPlay,
    Waiting,
    plan,
)
from services.store import quickplay as store_ops
from services.store.event_store import EventStore
from services.store.keys import name_claim_key, rating_key
from services.store.operations import Handover
from services.store.tokens import TokenStore
from services.table.commands import GameCommands
from tests.support.waiting import wait_until
from tests.workers.conftest import FakeClock
from workers import lifecycle
from workers.quickplay import LeaseLost, QuickplayLoop

pytestmark = pytest.mark.anyio
GAME = "six-nimmt"
SEEDS = [int(s) for s in os.environ.get("QP_SEEDS", "1,2,3,4,5,6,7,8").split(",")]


class Killed(BaseException):
    """The matcher's process dies here."""


async def no_poke(game_id: str, handover: Handover) -> None:
    return None


def commands_on(client: aioredis.Redis) -> GameCommands:
    """A write side with its own cache: a separate process's."""
    return GameCommands(EventStore(client), TokenStore(client), no_poke)


@dataclass
class Holder:
    """A player with a ticket, as its client knows it."""

    ticket: str
    secret: str
    name: str
    cancelled: bool = False
    seen: list[dict[str, object]] = field(default_factory=list)


class Harness:
    def __init__(self, client: aioredis.Redis, clock: FakeClock) -> None:
        self.client = client
        self.clock = clock
        self.quickplay = QuickPlay(EventStore(client), clock)
        self.holders: list[Holder] = []
        self.kills = 0

    def matcher(self, kill_at: int | None = None) -> Matcher:
        steps = 0

        async def hook(step: str) -> None:
            nonlocal steps
            steps += 1
            if kill_at is not None and steps == kill_at:
                self.kills += 1
                raise Killed(step)

        return Matcher(commands_on(self.client), self.clock, hook)

    async def queue(
        self, name: str, players: int, bots: bool = False, account: Account | None = None
    ) -> Holder:
        opened = await self.quickplay.open(GAME, players, name, bots, account, None)
        holder = Holder(opened.ticket, opened.secret, name)
        self.holders.append(holder)
        return holder

    async def poll_all(self) -> None:
        """Every holder asks about its ticket (so none counts as abandoned); no token is taken."""
        for holder in self.holders:
            await self.quickplay.read(holder.ticket, holder.secret, deliver=False)

    async def cancel(self, holder: Holder) -> str:
        try:
            await self.quickplay.cancel(holder.ticket, holder.secret)
        except AppError as refused:
            return refused.code
        holder.cancelled = True
        return "cancelled"

    async def state(self, holder: Holder) -> dict[str, object] | None:
        try:
            shown = await self.quickplay.state(holder.ticket, holder.secret)
        except AppError as refused:
            assert refused.code == "ticket_not_found"
            return None
        holder.seen.append(shown)
        return shown

    async def keys_of(self, ticket: str) -> list[bytes]:
        return [key async for key in self.client.scan_iter(match=f"*{ticket}*")]

    async def tables(self) -> list[str]:
        found = [key async for key in self.client.scan_iter(match="ts:{*}:events")]
        return sorted(key.decode().split("{")[1].split("}")[0] for key in found)


async def run_passes(harness: Harness, rng: random.Random, passes: int, kill_chance: float) -> None:
    for _ in range(passes):
        kill_at = rng.randint(1, 6) if rng.random() < kill_chance else None
        with contextlib.suppress(Killed):
            await harness.matcher(kill_at).run_pass()


async def check_seated_once(harness: Harness, players: int) -> None:
    """Every holder not cancelled is seated, once, at a table of its own queue's size whose every
    person holds a ticket; cancelled ones have no trace; one table per match."""
    seats: Counter[tuple[str, int]] = Counter()
    by_table: dict[str, set[str]] = {}
    for holder in harness.holders:
        shown = await harness.state(holder)
        if holder.cancelled:
            assert shown is None and await harness.keys_of(holder.ticket) == []
            continue
        assert shown is not None and shown["state"] == "seated", shown
        game_id, seat = str(shown["game_id"]), int(shown["seat"])  # type: ignore[call-overload]
        seats[(game_id, seat)] += 1
        by_table.setdefault(game_id, set()).add(MARKER + holder.ticket)
        tokens = [s.get("token") for s in holder.seen if s.get("token")]
        assert len(tokens) == 1  # the seat token reached its holder once
        role = await TokenStore(harness.client).role(game_id, str(tokens[0]))
        assert role == str(seat)
    assert all(count == 1 for count in seats.values())
    commands = commands_on(harness.client)
    for game_id, markers in by_table.items():
        folded = await commands.load(game_id)
        people = {p.client_seed for p in folded.state.seated if p.seat not in folded.state.bots}
        assert people == markers  # nobody at the table twice, nobody from elsewhere
        assert len(folded.state.seated) == players and folded.state.status == "playing"
    assert await harness.tables() == sorted(by_table)  # no table made twice, none left over
    assert await harness.client.zcard(store_ops.MATCHES) == 0


async def random_session(harness: Harness, seed: int) -> int:
    rng = random.Random(seed)
    players = rng.randint(2, 4)
    clients = rng.randint(players + 1, 14)

    async def arrive(n: int) -> Holder:
        return await harness.queue(f"P{n}", players, bots=rng.random() < 0.5)

    order = list(range(clients))
    rng.shuffle(order)
    await asyncio.gather(*(arrive(n) for n in order))  # concurrently queued
    for _ in range(rng.randint(2, 5)):  # cancellations racing passes of matchers that may be killed
        victims = rng.sample(harness.holders, rng.randint(0, 3))
        kill_at = rng.randint(1, 6) if rng.random() < 0.6 else None

        async def one_pass(kill_at: int | None = kill_at) -> None:
            with contextlib.suppress(Killed):
                await harness.matcher(kill_at).run_pass()

        results = await asyncio.gather(one_pass(), *(harness.cancel(v) for v in victims))
        for outcome in results[1:]:
            assert outcome in ("cancelled", "already_matched", "ticket_not_found")
        harness.clock.advance(rng.uniform(0.5, 5))
        await harness.poll_all()
    # the rest wait past the bound and agree to bots; passes (some killed) seat everyone
    harness.clock.advance(WAIT_BOUND_MS / 1000)
    await harness.poll_all()
    for holder in harness.holders:
        if not holder.cancelled:
            with contextlib.suppress(AppError):
                await harness.quickplay.agree_to_bots(holder.ticket, holder.secret)
    await run_passes(harness, rng, 6, kill_chance=0.5)
    await harness.matcher().run_pass()  # one that is not killed finishes whatever is left
    return players


@pytest.mark.parametrize("seed", SEEDS)
async def test_clients_queued_concurrently_are_each_seated_once_across_cancels_and_killed_matchers(
    seed: int, fake_redis_async: aioredis.Redis
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    players = await random_session(harness, seed)
    await check_seated_once(harness, players)


@pytest.mark.redis
@pytest.mark.parametrize("seed", SEEDS[:3])
async def test_the_same_holds_on_a_real_redis(seed: int, real_redis_async: aioredis.Redis) -> None:
    harness = Harness(real_redis_async, FakeClock())
    players = await random_session(harness, seed)
    await check_seated_once(harness, players)


@pytest.mark.parametrize("kill_at", [1, 2])
async def test_a_matcher_killed_at_any_step_of_a_match_is_finished_by_the_next_without_a_second_table(
    kill_at: int, fake_redis_async: aioredis.Redis
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    for n in range(3):
        await harness.queue(f"P{n}", 3)
    with pytest.raises(Killed):
        await harness.matcher(kill_at).run_pass()
    assert harness.kills == 1
    cancel = await harness.cancel(harness.holders[0])  # claimed: too late to cancel
    assert cancel == "already_matched"
    await harness.matcher().run_pass()
    await check_seated_once(harness, 3)
    assert len(await harness.tables()) == 1


@pytest.mark.parametrize("bots", [False, True])
async def test_nobody_outside_a_match_can_take_a_seat_at_its_table_at_any_step(
    bots: bool, fake_redis_async: aioredis.Redis
) -> None:
    """A lobby watcher who joins the match's table the moment it exists (at every step of finishing
    the match) is refused: the players are seated in the table's create write itself."""
    harness = Harness(fake_redis_async, FakeClock())
    holders = [await harness.queue(f"P{n}", 3, bots=bots) for n in range(1 if bots else 3)]
    if bots:
        harness.clock.advance(WAIT_BOUND_MS / 1000)
        await harness.poll_all()
    outsider = commands_on(fake_redis_async)
    refusals: list[str] = []

    async def hijack(step: str) -> None:
        for game_id in await harness.tables():
            try:
                await outsider.join(game_id, "Hijacker", "lobby")
            except AppError as refused:
                refusals.append(refused.code)
            else:
                raise AssertionError(f"an outsider took a seat at {game_id} after step {step}")

    matcher = Matcher(commands_on(fake_redis_async), harness.clock, hijack)
    done = await matcher.run_pass()
    assert len(done.seated) == 1 and refusals and set(refusals) <= {"table_full", "not_waiting"}
    for holder in holders:
        assert (await harness.state(holder) or {})["state"] == "seated"
    folded = await outsider.load(done.seated[0][1])
    assert folded.state.status == "playing"
    assert {p.name for p in folded.state.seated if p.seat not in folded.state.bots} == {
        h.name for h in holders
    }
    # the create write's join (and bots) records re-run as any request's do
    entries = await EventStore(fake_redis_async).read(folded.game_id)
    setup = verify_export(json.loads(json.dumps(build_export(entries, running=True)))).rounds[0]
    assert setup.failures == [] and setup.checked["rules re-run"] == 1 + len(holders) + int(bots)


async def test_a_match_whose_table_is_refused_gives_its_players_back_to_the_queue_in_their_places(
    fake_redis_async: aioredis.Redis,
) -> None:
    """A create the rules refuse writes nothing; the match is not tried for ever: its tickets are
    queued again at their old places (cancellable again), and the next match seats them."""
    harness = Harness(fake_redis_async, FakeClock())
    first = await harness.queue("First", 2)
    harness.clock.advance(1)
    second = await harness.queue("Second", 2)
    refusing = commands_on(fake_redis_async)
    real_create = refusing.create
    refused: list[str] = []

    async def create_refused(*args: object, **kwargs: object) -> tuple[str, str]:
        refused.append(str(kwargs.get("game_id")))
        raise ConflictError("already_seated", "This account already has a seat at this table.")

    refusing.create = create_refused  # type: ignore[method-assign]
    done = await Matcher(refusing, harness.clock).run_pass()
    assert done.seated == [] and len(refused) == 1
    assert await harness.tables() == [] and await fake_redis_async.zcard(store_ops.MATCHES) == 0
    shown = [await harness.state(h) or {} for h in (first, second)]
    assert [s["state"] for s in shown] == ["queued", "queued"]
    assert [s["position"] for s in shown] == [1, 2]
    refusing.create = real_create  # type: ignore[method-assign]
    await harness.matcher().run_pass()
    await check_seated_once(harness, 2)


def test_a_group_never_holds_two_tickets_of_one_account() -> None:
    """The planner passes over a ticket whose account is already in the group, and takes the next."""
    first = Waiting("a1", 0, 1000, False, frozenset({"a:acct"}))
    twin = Waiting("a2", 1, 1000, False, frozenset({"a:acct"}))
    others = [Waiting(f"o{n}", 10 + n, 1000, False, frozenset({f"a:other{n}"})) for n in range(2)]
    groups = plan([first, twin, *others], 3, now_ms=WAIT_BOUND_MS)
    assert [sorted(t.id for t in g.tickets) for g in groups] == [["a1", "o0", "o1"]]


def test_a_group_with_an_accounts_ticket_never_holds_two_tickets_of_one_network() -> None:
    """A rated group passes over a second ticket of a network already in it, the account's own
    network or another's, and takes the next; a group of guests only may share a network."""
    rated = Waiting("acct", 0, None, False, frozenset({"a:ada"}), client="home")
    same_home = Waiting("guest-home", 1, None, False, client="home")
    office = [Waiting(f"office{n}", 2 + n, None, False, client="office") for n in range(2)]
    cafe = Waiting("cafe", 5, None, False, client="cafe")
    groups = plan([rated, same_home, *office, cafe], 3, now_ms=WAIT_BOUND_MS)
    assert [[t.id for t in g.tickets] for g in groups] == [["acct", "office0", "cafe"]]

    guests = [Waiting(f"g{n}", n, None, False, client="home") for n in range(3)]
    assert [len(g.tickets) for g in plan(guests, 3, now_ms=WAIT_BOUND_MS)] == [3]


def test_an_accounts_ticket_does_not_join_guests_who_already_share_a_network() -> None:
    """Two guests of one network picked first make the group unfit for an account's ticket: the
    account waits for another group rather than make a rated table one network could steer."""
    twins = [Waiting(f"twin{n}", n, None, False, client="home") for n in range(2)]
    account = Waiting("acct", 2, None, False, frozenset({"a:ada"}), client="elsewhere")
    stranger = Waiting("stranger", 3, None, False, client="cafe")
    groups = plan([*twins, account, stranger], 3, now_ms=WAIT_BOUND_MS)
    assert [[t.id for t in g.tickets] for g in groups] == [["twin0", "twin1", "stranger"]]


async def test_an_anonymous_ticket_whose_name_was_registered_meanwhile_sits_as_a_guest(
    fake_redis_async: aioredis.Redis,
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    taken = await harness.queue("Grace", 2)
    other = await harness.queue("Hopper", 2)
    await fake_redis_async.set(name_claim_key(checked_seat_name("GRACE").skeleton), "0123456789abcdef")
    await harness.matcher().run_pass()
    shown = await harness.state(taken) or {}
    folded = await commands_on(fake_redis_async).load(str(shown["game_id"]))
    names = {p.client_seed: p.name for p in folded.state.seated}
    assert names[MARKER + taken.ticket] == f"Guest {taken.ticket[:4]}"
    assert names[MARKER + other.ticket] == "Hopper"


async def set_rating(client: aioredis.Redis, account_id: str, display: int) -> None:
    mu = (display - 1000) / 20 + 3  # display = 1000 + 20 (mu - 3 sigma), sigma 1
    await client.hset(rating_key(GAME), account_id, msgspec.json.encode(Skill(mu=mu, sigma=1.0, games=10)))


async def test_ratings_pairing_prefers_close_ratings(fake_redis_async: aioredis.Redis) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    ratings = {"a": 1000, "b": 1500, "c": 1030, "d": 1470}
    holders = {}
    for account_id, display in ratings.items():  # arrival order: 1000, 1500, 1030, 1470
        await set_rating(fake_redis_async, account_id, display)
        holders[account_id] = await harness.queue(
            account_id, 2, account=Account(id=account_id, name=account_id)
        )
        harness.clock.advance(0.1)
    await harness.matcher().run_pass()
    tables = {k: (await harness.state(h) or {}).get("game_id") for k, h in holders.items()}
    assert tables["a"] == tables["c"] and tables["b"] == tables["d"] and tables["a"] != tables["b"]


def test_the_rating_window_widens_with_the_wait_and_opens_at_the_bound() -> None:
    far = [Waiting("x", 0, 1000, False), Waiting("y", 0, 1400, False)]
    assert plan(far, 2, now_ms=1000) == []  # 400 apart, the window is about 110
    assert plan(far, 2, now_ms=20_000) == []  # 300 at 20 s: still too far
    assert plan(far, 2, now_ms=WAIT_BOUND_MS) == [Group(tuple(far), bots=False)]
    close = [Waiting("x", 0, 1000, False), Waiting("y", 0, 1250, False)]
    assert plan(close, 2, now_ms=16_000) == [Group(tuple(close), bots=False)]  # 260 at 16 s


def test_an_anonymous_player_pairs_with_anonymous_ones_before_accounts() -> None:
    queue = [
        Waiting("anon", 0, None, False),
        Waiting("acct", 1, 1000, False),
        Waiting("anon2", 2, None, False),
    ]
    assert plan(queue, 2, now_ms=100) == [Group((queue[0], queue[2]), bots=False)]


async def test_a_cancelled_ticket_leaves_no_trace_and_is_never_seated(
    fake_redis_async: aioredis.Redis,
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    before = sorted(await fake_redis_async.keys("*"))
    alone = await harness.queue("Alone", 2, account=Account(id="acct1", name="Alone"))
    assert await harness.keys_of(alone.ticket) != []
    assert await harness.cancel(alone) == "cancelled"
    assert set(await fake_redis_async.keys("*")) <= {*before, store_ops.QUEUES.encode()}
    assert await fake_redis_async.zcard(store_ops.queue_key(store_ops.queue_name(GAME, 2))) == 0
    assert await harness.state(alone) is None
    other = await harness.queue("Other", 2)
    await harness.matcher().run_pass()
    assert (await harness.state(other) or {})["state"] == "queued"  # the cancelled one is not its partner
    again = await harness.queue("Alone", 2, account=Account(id="acct1", name="Alone"))  # no owner left over
    harness.clock.advance(6)  # an account and an anonymous player pair once the window reaches 150
    await harness.poll_all()
    await harness.matcher().run_pass()
    assert (await harness.state(again) or {})["state"] == "seated"


async def test_bots_fill_after_the_wait_only_for_those_who_agreed(fake_redis_async: aioredis.Redis) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    willing = await harness.queue("Willing", 3, bots=True)
    await harness.matcher().run_pass()
    harness.clock.advance(WAIT_BOUND_MS / 1000 - 1)
    await harness.poll_all()
    await harness.matcher().run_pass()
    assert (await harness.state(willing) or {})["state"] == "queued"  # before the bound: no bots
    harness.clock.advance(1)
    await harness.poll_all()
    await harness.matcher().run_pass()
    shown = await harness.state(willing) or {}
    assert shown["state"] == "seated"
    folded = await commands_on(fake_redis_async).load(str(shown["game_id"]))
    assert len(folded.state.bots) == 2 and folded.state.status == "playing"

    unwilling = await harness.queue("Unwilling", 3)
    for _ in range(int(MAX_WAIT_MS / WAIT_BOUND_MS) - 1):
        harness.clock.advance(WAIT_BOUND_MS / 1000)
        await harness.poll_all()
        await harness.matcher().run_pass()
        assert (await harness.state(unwilling) or {})["state"] == "queued"  # no consent: no bots
    harness.clock.advance(WAIT_BOUND_MS / 1000)
    await harness.poll_all()
    await harness.matcher().run_pass()
    assert (await harness.state(unwilling) or {})["state"] == "timed_out"

    late = await harness.queue("Late", 3)
    harness.clock.advance(WAIT_BOUND_MS / 1000)
    await harness.poll_all()
    await harness.matcher().run_pass()
    assert (await harness.state(late) or {})["state"] == "queued"
    await harness.quickplay.agree_to_bots(late.ticket, late.secret)  # the offer, taken while waiting
    await harness.matcher().run_pass()
    assert (await harness.state(late) or {})["state"] == "seated"


async def test_a_ticket_nobody_asks_about_is_removed_rather_than_seated(
    fake_redis_async: aioredis.Redis,
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    gone = await harness.queue("ClosedTab", 2)
    harness.clock.advance(ABANDON_MS / 1000)
    here = await harness.queue("Here", 2)
    await harness.matcher().run_pass()
    assert await harness.keys_of(gone.ticket) == []
    assert (await harness.state(here) or {})["state"] == "queued"


@pytest.mark.redis
def test_the_worker_loop_finishes_a_match_its_killed_predecessor_claimed(
    sync: redis.Redis,
) -> None:
    """A real Redis, a real matcher thread: a matcher dies after creating the table; the worker's
    loop (as restarted) finishes the match, and later arrivals are matched by it too."""
    clock = FakeClock(lifecycle.clock())  # type: ignore[arg-type]
    holders: list[Holder] = []

    async def setup() -> Harness:
        client = aioredis.Redis(
            connection_pool=aioredis.ConnectionPool(**sync.connection_pool.connection_kwargs)
        )
        harness = Harness(client, clock)
        for n in range(2):
            holders.append(await harness.queue(f"P{n}", 2))
        with pytest.raises(Killed):
            await harness.matcher(kill_at=2).run_pass()
        holders.append(await harness.queue("P2", 2))
        holders.append(await harness.queue("P3", 2))
        return harness

    harness = asyncio.run(setup())
    loop = QuickplayLoop(sync, interval=0.05, now=clock)
    loop.start()
    try:

        def all_seated() -> bool:
            async def check() -> bool:
                client = aioredis.Redis(
                    connection_pool=aioredis.ConnectionPool(**sync.connection_pool.connection_kwargs)
                )
                try:
                    q = QuickPlay(EventStore(client), clock)
                    states = [await q.read(h.ticket, h.secret, deliver=False) for h in holders]
                    return all(s is not None and s["state"] == "seated" for s in states)
                finally:
                    await client.aclose()

            return asyncio.run(check())

        wait_until(all_seated, 30, "every queued player seated")
    finally:
        loop.stop()
        loop.join(timeout=10)

    async def verify() -> None:
        client = aioredis.Redis(
            connection_pool=aioredis.ConnectionPool(**sync.connection_pool.connection_kwargs)
        )
        harness.client = client
        harness.quickplay = QuickPlay(EventStore(client), clock)
        await check_seated_once(harness, 2)
        assert len(await harness.tables()) == 2
        await client.aclose()

    asyncio.run(verify())


async def test_one_matcher_runs_at_a_time_and_one_that_lost_its_lease_stops_before_writing(
    fake_redis_async: aioredis.Redis, fake_redis: redis.Redis
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    first, second = QuickplayLoop(fake_redis), QuickplayLoop(fake_redis)
    assert await first.step(harness.matcher()) is not None
    assert await second.step(harness.matcher()) is None  # the lease is the first's
    assert await first.step(harness.matcher()) is not None  # renewed by its holder
    for n in range(2):
        await harness.queue(f"P{n}", 2)
    await fake_redis_async.set(store_ops.LEASE, second.holder)  # the first stalled; the second took over
    stalled = Matcher(
        commands_on(fake_redis_async), harness.clock, guard=lambda: first._renew(EventStore(fake_redis_async))
    )
    with pytest.raises(LeaseLost):
        await stalled.run_pass()
    assert await harness.tables() == [] and await fake_redis_async.zcard(store_ops.MATCHES) == 0
    assert await second.step(harness.matcher()) is not None
    await check_seated_once(harness, 2)


async def test_a_ticket_that_expired_without_a_matcher_leaves_its_queue(
    fake_redis_async: aioredis.Redis,
) -> None:
    harness = Harness(fake_redis_async, FakeClock())
    lost = await harness.queue("Lost", 2)
    assert 0 < await fake_redis_async.ttl(store_ops.ticket_key(lost.ticket)) <= 3600
    await fake_redis_async.delete(store_ops.ticket_key(lost.ticket))  # as its hour ran out
    await harness.matcher().run_pass()
    assert await fake_redis_async.zcard(store_ops.queue_key(store_ops.queue_name(GAME, 2))) == 0
