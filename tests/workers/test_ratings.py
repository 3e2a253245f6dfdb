"""Players' read models from finished games: exactly once per game, and rebuilt to the same numbers.

Games are played through the domain with random legal moves and stored as the server stores them
(one batch per command), on fakeredis; the projector then records the finished ones.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fakeredis
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.games import spec
from domain.table import Account
from projections.ratings import (
    NEW_PLAYER,
    PROVISIONAL_GAMES,
    PROVISIONAL_WEIGHT,
    Skill,
    finish_record,
    ranks,
    rate,
    rated_ranks,
    unrated_reason,
)
from services.history.folding import StateCache
from services.store import ratings as store_ratings
from services.store.event_store import SyncEventStore
from tests.support.stored import StoredTable
from workers.projector import Projector
from workers.ratings import RatingsRecorder, rebuild, rebuilt_models, stored_models

ACCOUNTS = [Account(id=f"{n:016x}", name=f"Player {n}") for n in range(6)]


@dataclass(frozen=True)
class Plan:
    """One table: its game, which accounts sit (``None``: an anonymous seat), practice or not, seed."""

    game: str
    seats: tuple[Account | None, ...]
    practice: bool
    seed: int
    finish: bool = True
    leaver: int | None = None  # a seat whose player leaves during play (a bot plays it on)


OPTIONS = {"six-nimmt": {"rounds": 1}, "skull": {}, "skull-king": {}}


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    game = draw(st.sampled_from(["six-nimmt", "six-nimmt", "six-nimmt", "skull"]))
    players = draw(st.integers(spec(game).min_players, min(spec(game).max_players, len(ACCOUNTS))))
    accounts = draw(st.permutations(ACCOUNTS))[:players]
    anonymous = draw(st.sets(st.integers(0, players - 1), max_size=1 if draw(st.booleans()) else 0))
    seats = tuple(None if seat in anonymous else account for seat, account in enumerate(accounts))
    practice = draw(st.integers(0, 9)) == 0  # about one table in ten
    finish = draw(st.integers(0, 9)) > 0  # about one table in ten stays unfinished
    leaver = draw(st.one_of(st.none(), st.none(), st.integers(0, players - 1)))  # a third of tables
    return Plan(game, seats, practice, draw(st.integers(0, 10**6)), finish, leaver)


def store_game(store: SyncEventStore, game_id: str, plan: Plan) -> None:
    """Create, seat and (if the plan says so) play the table to its end, appending like the server
    (``tests.support.stored``)."""
    rng = random.Random(plan.seed)
    stored = StoredTable(
        store, game_id, plan.game, len(plan.seats), OPTIONS[plan.game], plan.seed, practice=plan.practice
    )
    table, seeds = stored.table, stored.seeds
    for seat, account in enumerate(plan.seats):
        joined = table.join(stored.state, f"P{seat}", f"cs{seat}", seeds, account)
        stored.append(joined, "join", None, {"name": f"P{seat}", "client_seed": f"cs{seat}"})
    steps = 0
    while stored.state.status != "finished" and (plan.finish or steps < 3):
        if steps == 2 and plan.leaver is not None:  # rage-quit: a bot takes the seat over
            stored.leave(plan.leaver)
        stored.step(rng)
        steps += 1


def fresh_store() -> SyncEventStore:
    return SyncEventStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()))


def ticking_clock() -> Callable[[], float]:
    ticks = itertools.count(1_700_000_000)
    return lambda: float(next(ticks))


def projector(store: SyncEventStore, clock: Callable[[], float]) -> Projector:
    """A new worker: its own cache, so it folds from the stream like any other process."""
    return Projector(store, ratings=RatingsRecorder(store, clock))


games = st.lists(plans(), min_size=1, max_size=6)
pokes = st.lists(st.integers(0, 5), max_size=12)


@pytest.mark.thorough
@settings(max_examples=25)
@given(games, pokes, st.randoms(use_true_random=False))
def test_ratings_rebuilt_from_the_streams_equal_the_incrementally_projected_ones(
    plan_list: list[Plan], extra: list[int], rng: random.Random
) -> None:
    store = fresh_store()
    clock = ticking_clock()
    ids = [f"g{n}" for n in range(len(plan_list))]
    for game_id, plan in zip(ids, plan_list, strict=True):
        store_game(store, game_id, plan)
    order = [*ids, *(ids[i % len(ids)] for i in extra)]  # every game, plus random duplicates
    rng.shuffle(order)
    for game_id in order:
        projector(store, clock).catch_up(game_id)
    projected = stored_models(store)
    assert rebuilt_models(store) == projected
    rebuild(store)
    assert stored_models(store) == projected


@pytest.mark.thorough
@settings(max_examples=25)
@given(games, st.randoms(use_true_random=False))
def test_a_duplicated_late_or_reordered_poke_changes_nothing(
    plan_list: list[Plan], rng: random.Random
) -> None:
    store = fresh_store()
    clock = ticking_clock()
    ids = [f"g{n}" for n in range(len(plan_list))]
    for game_id, plan in zip(ids, plan_list, strict=True):
        store_game(store, game_id, plan)
    shared = projector(store, clock)
    for game_id in ids:
        shared.catch_up(game_id)
    before = stored_models(store)
    log_before = store.run(store_ratings.finish_log())
    again = ids * 3
    rng.shuffle(again)
    for game_id in again:  # the same worker (cached folds) and fresh ones alike
        (shared if rng.random() < 0.5 else projector(store, clock)).catch_up(game_id)
        folded = store.load(game_id, StateCache())
        assert folded is not None
        RatingsRecorder(store, clock).record(folded)  # a recorder racing the projector
    assert stored_models(store) == before
    assert store.run(store_ratings.finish_log()) == log_before


@pytest.mark.thorough
@settings(max_examples=25)
@given(games)
def test_every_finished_game_appears_once_in_the_history_of_each_account_that_played_it(
    plan_list: list[Plan],
) -> None:
    store = fresh_store()
    clock = ticking_clock()
    ids = [f"g{n}" for n in range(len(plan_list))]
    for game_id, plan in zip(ids, plan_list, strict=True):
        store_game(store, game_id, plan)
        projector(store, clock).catch_up(game_id)
    models = stored_models(store)
    expected: dict[str, list[str]] = {}
    for game_id, plan in zip(ids, plan_list, strict=True):
        played = [a.id for a in plan.seats if a is not None]
        if plan.finish and played:
            for account_id in played:
                expected.setdefault(account_id, []).insert(0, game_id)
        rated = plan.finish and not plan.practice and None not in plan.seats
        record = models.records.get(game_id)
        assert (record is not None) == (plan.finish and bool(played))
        if record is not None:
            assert msgspec.json.decode(record)["rated"] is rated
    assert {a: [g for g, _ in rows] for a, rows in models.histories.items()} == expected
    counted = {a: 0 for a in expected}
    for plan in plan_list:
        if plan.finish and not plan.practice and None not in plan.seats and plan.game == "six-nimmt":
            for account in plan.seats:
                assert account is not None
                counted[account.id] += 1
    for account_id, rated_games in counted.items():
        raw = models.ratings.get("six-nimmt", {}).get(account_id)
        assert (raw is not None) == (rated_games > 0)
        if raw is not None:
            assert msgspec.json.decode(raw)["games"] == rated_games


# -- the pure parts ------------------------------------------------------------------------------------


def test_ranks_share_places_on_ties_and_lower_scores_win_in_six_nimmt() -> None:
    assert ranks("skull", [2, 0, 2, 1]) == [1, 4, 1, 3]
    assert ranks("six-nimmt", [12, 3, 12, 30]) == [2, 1, 2, 4]


def test_a_bot_seated_by_the_host_makes_a_game_unrated_but_a_takeover_does_not() -> None:
    store = fresh_store()
    store_game(store, "g", Plan("six-nimmt", tuple(ACCOUNTS[:2]), practice=False, seed=1))
    state = store.load("g", StateCache())
    assert state is not None
    assert unrated_reason(state.state, {"player_joined"}) is None
    assert unrated_reason(state.state, {"player_joined", "bot_seated"}) == "bots"
    assert unrated_reason(state.state, {"seat_left", "bot_took_over"}) is None
    record, updates = finish_record(state.state, {"bot_seated"}, 1.0, {})
    assert record["rated"] is False and updates == {}
    record, updates = finish_record(state.state, {"bot_took_over"}, 1.0, {})
    assert record["rated"] is True and set(updates) == {ACCOUNTS[0].id, ACCOUNTS[1].id}


def recorded(store: SyncEventStore, game_id: str) -> dict[str, Any]:
    raw = stored_models(store).records[game_id]
    record: dict[str, Any] = msgspec.json.decode(raw)
    return record


@pytest.mark.parametrize("seed", range(8))
def test_a_player_who_leaves_a_rated_game_loses_it_as_if_last_and_the_others_are_rated(seed: int) -> None:
    """The rage-quit rule: whatever the bot then scores for the seat, its player is ranked last
    and loses rating; the game stays rated for the players who played on, ranked by score."""
    rng = random.Random(seed)
    players = rng.randint(2, 5)
    seats = tuple(ACCOUNTS[:players])
    leaver = rng.randrange(players)
    store = fresh_store()
    store_game(store, "g", Plan("six-nimmt", seats, practice=False, seed=seed, leaver=leaver))
    projector(store, ticking_clock()).catch_up("g")
    record = recorded(store, "g")
    assert record["rated"] is True and record["unrated_reason"] is None
    by_seat = {row["seat"]: row for row in record["seats"]}
    assert by_seat[leaver]["forfeit"] == "left" and by_seat[leaver]["rank"] == players
    assert by_seat[leaver]["winner"] is False
    stayed = [row for seat, row in by_seat.items() if seat != leaver]
    assert all(row["forfeit"] is None and row["rank"] < players for row in stayed)
    assert ranks("six-nimmt", [row["score"] for row in stayed]) == [row["rank"] for row in stayed]
    change = by_seat[leaver]["rating"]
    assert change["after"]["mu"] < change["before"]["mu"]  # a loss: below every other seat
    for row in stayed:
        assert row["rating"] is not None and row["rating"]["after"]["games"] == 1


def test_a_seat_still_played_by_its_bot_after_missed_turns_forfeits_but_a_taken_back_one_does_not() -> None:
    store = fresh_store()
    store_game(store, "g", Plan("six-nimmt", tuple(ACCOUNTS[:3]), practice=False, seed=4))
    folded = store.load("g", StateCache())
    assert folded is not None
    state = folded.state
    timed_out = msgspec.structs.replace(state, bots=frozenset({1}), takeovers={1: "timeouts"})
    record, _ = finish_record(timed_out, {"bot_took_over"}, 1.0, {})
    assert [(row["seat"], row["forfeit"], row["rank"]) for row in record["seats"] if row["forfeit"]] == [
        (1, "timeouts", 3)
    ]
    taken_back = msgspec.structs.replace(state, bots=frozenset(), takeovers={})  # seat_reclaimed
    record, _ = finish_record(taken_back, {"bot_took_over", "seat_reclaimed"}, 1.0, {})
    assert record["rated"] is True and all(row["forfeit"] is None for row in record["seats"])
    assert rated_ranks("skull", [3, 1, 2], {0: "left", 2: "left"}) == [2, 1, 2]


def test_a_provisional_opponent_moves_an_established_rating_little_and_its_own_in_full() -> None:
    established = Skill(mu=30.0, sigma=4.0, games=20, met=("a", "b", "c"))
    rival = Skill(mu=30.0, sigma=4.0, games=20, met=("a", "b", "d"))
    full_loss = rate([2, 1], [established, rival])[0]
    loss_to_new = rate([2, 1], [established, NEW_PLAYER])[0]
    new_win = rate([2, 1], [established, NEW_PLAYER])[1]
    unweighted = rate([2, 1], [msgspec.structs.replace(established, games=0), NEW_PLAYER])
    assert established.mu - full_loss.mu > 0.3
    assert established.mu - loss_to_new.mu <= PROVISIONAL_WEIGHT * (established.mu - unweighted[0].mu) + 1e-9
    assert new_win.mu > NEW_PLAYER.mu + 1  # the new player's own rating moves in full
    assert not new_win.established and established.established


def ring(store: SyncEventStore, accounts: tuple[Account, ...], first_seed: int, games: int) -> None:
    for n in range(games):
        game_id = f"ring-{first_seed + n}"
        store_game(store, game_id, Plan("six-nimmt", accounts, practice=False, seed=first_seed + n))
        projector(store, ticking_clock()).catch_up(game_id)


def board(store: SyncEventStore) -> tuple[int, int, list[str]]:
    total, hidden, rows = store.run(store_ratings.leaderboard_page("six-nimmt", 0, 100))
    return total, hidden, [account_id for account_id, _ in rows]


@pytest.mark.thorough
def test_provisional_players_are_off_the_leaderboard_and_a_ring_of_newcomers_stays_provisional() -> None:
    store = fresh_store()
    pair = tuple(ACCOUNTS[:2])
    ring(store, pair, 0, 1)
    assert board(store) == (0, 2, [])  # one game each: rated, provisional, not listed
    ring(store, pair, 1, PROVISIONAL_GAMES + 1)  # a pair playing only each other: one opponent
    assert board(store) == (0, 2, [])
    first = tuple(ACCOUNTS[2:6])  # a server's first four regulars: any opponent counts
    ring(store, first, 100, PROVISIONAL_GAMES)
    total, hidden, listed = board(store)
    assert (total, hidden) == (4, 2) and set(listed) == {a.id for a in first}
    newcomers = tuple(Account(id=f"{n:016x}", name=f"New {n}") for n in range(10, 14))
    ring(store, newcomers, 200, PROVISIONAL_GAMES + 3)  # only each other, never an established player
    assert board(store)[:2] == (4, 6)
    mixed = (newcomers[0], *first[:3])  # one newcomer meets three established players
    ring(store, mixed, 300, 1)
    total, hidden, listed = board(store)
    assert (total, hidden) == (5, 5) and newcomers[0].id in listed
    assert rebuilt_models(store) == stored_models(store)
