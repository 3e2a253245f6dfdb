"""``tablestream arena``: bots play bot in bulk, in process, to measure the strength of each level.

No HTTP, no Redis: each game is the pure domain (``domain.games.table_for``) driven in memory, every
seat's bot choosing from that seat's own view (``projections.views.seat_view``), exactly as at a
table. Head-to-head tables seat two levels, half the seats each, alternating around the table
(which level sits first alternates from game to game). The games are seeded (``--seed``): the same
command prints the same figures. They run in parallel processes (``--processes``).

Per game it prints, for each pairing, the share of games won by a seat of each level (a shared win
is split) and the mean place of each level's seats (1 = best; ties share the mean place) with a
95% confidence interval of the per-game difference; and per level an openskill rating
(Plackett-Luce, over every game of the arena in that game, each game a match of its two levels
ranked by the mean place of their seats) as mu with its 95% interval mu ± 2 sigma.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from bots.levels import advise
from bots.search import PRODUCTION, Budget
from domain.fairness import SecretSeeds
from domain.games import game_names, spec, table_for
from projections.views import seat_view

PAIRINGS: tuple[tuple[str, str], ...] = (("strong", "normal"), ("normal", "easy"), ("easy", "random"))
SMOKE_GAMES = 1


def default_seats(game: str) -> int:
    """A game's arena table: its ``default_players`` made even (a pairing seats half each), as long
    as the game takes that many (Skull King's 3 seats become 4)."""
    players = spec(game).default_players
    return players + 1 if players % 2 and players < spec(game).max_players else players


@dataclass(frozen=True)
class Task:
    game: str
    pairing: tuple[str, str]
    index: int
    seed: int
    simulations: int
    seats: int = 0  # the table's size; 0: the game's default (``default_seats``)

    @property
    def players(self) -> int:
        return self.seats or default_seats(self.game)


@dataclass(frozen=True)
class Result:
    game: str
    pairing: tuple[str, str]
    levels: tuple[str, ...]  # per seat
    places: tuple[float, ...]  # per seat, 1 = best
    winners: tuple[int, ...]
    strong_cpu: tuple[float, ...]  # CPU seconds of each strong move with a choice


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()


def seat_levels(task: Task) -> tuple[str, ...]:
    first, second = task.pairing if task.index % 2 == 0 else task.pairing[::-1]
    return tuple(first if seat % 2 == 0 else second for seat in range(task.players))


def places_of(game: str, scores: list[int], winners: list[int]) -> tuple[float, ...]:
    """1 for the winners; the others ranked by score (lower is better in 6 nimmt!: the spec's
    ``lower_score_wins``), ties sharing."""
    lower_better = spec(game).lower_score_wins
    key = [(0 if s in winners else 1, scores[s] if lower_better else -scores[s]) for s in range(len(scores))]
    places = []
    for s in range(len(scores)):
        better = sum(1 for k in key if k < key[s])
        equal = sum(1 for k in key if k == key[s])
        places.append(better + (equal + 1) / 2)
    return tuple(places)


def play(task: Task) -> Result:
    """One whole game of bots, in memory."""
    table = table_for(task.game)
    players = task.players
    secret = _digest("arena", task.seed, task.game, task.pairing, task.index)
    seeds = SecretSeeds(_digest("root", secret), _digest("master", secret))
    game_id = f"arena-{task.game}-{task.index}"
    state = table.fold(None, table.create(game_id, players, {}, seeds.chain_commitment(0), practice=True))
    for seat in range(players):
        state = table.fold(state, table.join(state, f"Bot {seat + 1}", f"seat{seat}", seeds))
    levels = seat_levels(task)
    rngs = [random.Random(_digest(secret, "bot", seat)) for seat in range(players)]
    budget = Budget(simulations=task.simulations, cpu_seconds=PRODUCTION.cpu_seconds)
    cpu: list[float] = []
    version = 0
    while state is not None and state.status != "finished":
        seat = min(table.to_act(state))
        view = seat_view(state, version, seat)
        started = time.thread_time()
        command = advise(task.game, view, levels[seat], rngs[seat], budget).command
        if levels[seat] == "strong" and len(view["legal"]) > 1:
            cpu.append(time.thread_time() - started)
        typed = msgspec.convert(command, table.command_type)
        events = table.decide(state, typed, seat, seeds)
        state = table.fold(state, events)
        version += len(events)
    assert state is not None
    scores = list(table.rules.scores(state.game_state))
    winners = list(state.winners)
    return Result(
        task.game, task.pairing, levels, places_of(task.game, scores, winners), tuple(winners), tuple(cpu)
    )


# -- figures ------------------------------------------------------------------------------------


def _mean_ci(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% confidence interval (normal approximation)."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    mean = sum(values) / n
    if n == 1:
        return mean, math.inf
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def head_to_head(results: list[Result]) -> dict[str, Any]:
    """Win shares and mean places of the two levels of one pairing's games."""
    a, b = results[0].pairing
    wins = {a: [], b: []}  # per game: the share of the win that went to the level's seats
    place = {a: [], b: []}
    diff = []
    for r in results:
        share = {a: 0.0, b: 0.0}
        for w in r.winners:
            share[r.levels[w]] += 1 / len(r.winners)
        means = {}
        for level in (a, b):
            mine = [p for p, lv in zip(r.places, r.levels, strict=True) if lv == level]
            means[level] = sum(mine) / len(mine)
            wins[level].append(share[level])
            place[level].append(means[level])
        diff.append(means[a] - means[b])
    win_a, win_ci = _mean_ci(wins[a])
    gap, gap_ci = _mean_ci(diff)
    return {
        "pairing": (a, b),
        "games": len(results),
        "win_share": {a: win_a, b: 1 - win_a if results else 0.0},
        "win_ci": win_ci,
        "mean_place": {a: _mean_ci(place[a])[0], b: _mean_ci(place[b])[0]},
        "place_gap": gap,  # mean place of a minus b: negative means a places better
        "place_gap_ci": gap_ci,
        "beats": gap + gap_ci < 0 and win_a - win_ci > 0.5,
    }


def interleaved(results: list[Result]) -> list[Result]:
    """The games of each pairing taken in turn (the first of each, then the second of each, ...),
    each pairing's in the order given: the ratings are updated game after game, and a run's files
    given one pairing after another must not rate one pairing's games all before the next's (the
    later a level's games come, the less its shrunken sigma lets them move it)."""
    queues: dict[tuple[str, str], list[Result]] = defaultdict(list)
    for r in results:
        queues[r.pairing].append(r)
    longest = max((len(q) for q in queues.values()), default=0)
    return [q[i] for i in range(longest) for q in queues.values() if i < len(q)]


def ratings(results: list[Result]) -> dict[str, tuple[float, float]]:
    """An openskill rating per level over the games: (mu, sigma). Each game is a match of its two
    levels, ranked by the mean place of each level's seats (equal means: a tie), so a level's two
    seats never play against each other in the rating, and a 4-seat game counts once per level,
    as a 2-seat one does."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    rating = {level: model.rating(name=level) for r in results for level in r.levels}
    for r in interleaved(results):
        a, b = r.pairing
        mean = {
            level: sum(p for p, lv in zip(r.places, r.levels, strict=True) if lv == level)
            / r.levels.count(level)
            for level in (a, b)
        }
        [[rating[a]], [rating[b]]] = model.rate([[rating[a]], [rating[b]]], ranks=[mean[a], mean[b]])
    return {level: (r.mu, r.sigma) for level, r in rating.items()}


def report(results: list[Result], out: Any = None) -> list[dict[str, Any]]:
    out = out or sys.stdout
    tables = []
    for game in sorted({r.game for r in results}, key=game_names().index):
        mine = [r for r in results if r.game == game]
        sizes = "/".join(str(n) for n in sorted({len(r.levels) for r in mine}))
        print(f"\n== {spec(game).title} ({sizes} seats, {len(mine)} games)", file=out)
        print("  rating (openskill Plackett-Luce, mu ± 2 sigma):", file=out)
        for level, (mu, sigma) in sorted(ratings(mine).items(), key=lambda kv: -kv[1][0]):
            print(f"    {level:<7} {mu:6.2f} ± {2 * sigma:4.2f}", file=out)
        print("  head to head (half the seats each):", file=out)
        for pairing in PAIRINGS:
            games = [r for r in mine if r.pairing == pairing]
            if not games:
                continue
            h = head_to_head(games)
            a, b = pairing
            verdict = "beats" if h["beats"] else "does NOT clearly beat"
            print(
                f"    {a} vs {b}: {h['games']} game{'' if h['games'] == 1 else 's'}; "
                f"wins {a} {100 * h['win_share'][a]:.1f}% "
                f"(± {100 * h['win_ci']:.1f}), {b} {100 * h['win_share'][b]:.1f}%; mean place "
                f"{a} {h['mean_place'][a]:.2f}, {b} {h['mean_place'][b]:.2f} "
                f"(gap {h['place_gap']:+.3f} ± {h['place_gap_ci']:.3f}): {a} {verdict} {b}",
                file=out,
            )
            tables.append({"game": game, **h})
        cpu = [c for r in mine for c in r.strong_cpu]
        if cpu:
            cpu.sort()
            print(
                f"  strong CPU per move: mean {1000 * sum(cpu) / len(cpu):.1f} ms, "
                f"p99 {1000 * cpu[int(0.99 * (len(cpu) - 1))]:.1f} ms, max {1000 * cpu[-1]:.1f} ms "
                f"over {len(cpu)} moves",
                file=out,
            )
    return tables


def tasks(
    games: list[str],
    per_pairing: int,
    seed: int,
    simulations: int,
    pairings: tuple[tuple[str, str], ...] = PAIRINGS,
    seats: int = 0,
    first: int = 0,
) -> list[Task]:
    return [
        Task(game, pairing, index, seed, simulations, seats)
        for index in range(first, first + per_pairing)
        for game in games
        for pairing in pairings
    ]


def run_arena(
    games: list[str],
    per_pairing: int,
    seed: int,
    processes: int,
    simulations: int,
    pairings: tuple[tuple[str, str], ...] = PAIRINGS,
    out: Any = None,
    save: Callable[[Result], None] | None = None,
    seats: int = 0,
    first: int = 0,
) -> list[Result]:
    out = out or sys.stdout
    todo = tasks(games, per_pairing, seed, simulations, pairings, seats, first)
    if processes <= 1:
        done = []
        for task in todo:
            done.append(play(task))
            if save is not None:
                save(done[-1])
        return done
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        results = []
        for n, result in enumerate(pool.imap_unordered(play, todo, chunksize=1), 1):
            results.append(result)
            if save is not None:
                save(result)
            if n % 100 == 0:
                print(f"  ... {n}/{len(todo)} games", file=out, flush=True)
        return results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=int, default=1000, help="games per pairing and game (default 1000)")
    parser.add_argument("--smoke", action="store_true", help=f"{SMOKE_GAMES} games per pairing, no verdicts")
    parser.add_argument("--seed", type=int, default=1, help="the arena's seed (default 1)")
    parser.add_argument(
        "--first",
        type=int,
        default=0,
        help="the index of the first game (default 0): with --out, continues a run stopped after that many",
    )
    parser.add_argument("--processes", type=int, default=2, help="parallel processes (default 2)")
    parser.add_argument("--game", action="append", choices=game_names(), help="only this game (repeatable)")
    parser.add_argument("--out", help="append each game's result to this file (JSON lines) as it ends")
    parser.add_argument(
        "--report",
        metavar="FILE",
        action="append",
        help="print the figures of the results saved by --out in FILE (repeatable); play nothing",
    )
    parser.add_argument(
        "--pairing",
        action="append",
        choices=[f"{a}:{b}" for a, b in PAIRINGS],
        help="only this pairing (repeatable; default: all)",
    )
    parser.add_argument(
        "--seats",
        type=int,
        default=0,
        help="seats per table, an even number (default: the game's default table made even, 4 today; "
        "the two levels of a pairing sit alternately, half the seats each)",
    )
    parser.add_argument(
        "--sims",
        type=int,
        default=PRODUCTION.simulations,
        help=f"samples per strong move (default: the production {PRODUCTION.simulations}; "
        "the CPU cap per move stays the production one; figures in the docs use the default)",
    )


def seats_problem(games: list[str], seats: int) -> str | None:
    """Why a table of ``seats`` cannot seat a pairing in one of ``games``, or None."""
    if seats % 2:
        return f"--seats {seats}: a pairing seats two levels half the seats each, so it must be even."
    for game in games:
        low, high = spec(game).min_players, spec(game).max_players
        if not low <= seats <= high:
            return f"--seats {seats}: {spec(game).title} is for {low} to {high} players."
    return None


def load(path: str) -> list[Result]:
    decoder = msgspec.json.Decoder(Result)
    with open(path, "rb") as lines:
        return [decoder.decode(line) for line in lines if line.strip()]


def run(args: argparse.Namespace) -> int:
    if args.report:
        results = [r for path in args.report for r in load(path)]
        print(f"arena results from {', '.join(args.report)}: {len(results)} games", flush=True)
        report(results)
        return 0
    games = args.game or game_names()
    if args.seats:
        problem = seats_problem(games, args.seats)
        if problem:
            print(f"arena: {problem}", file=sys.stderr)
            return 2
    per_pairing = SMOKE_GAMES if args.smoke else args.games
    started = time.monotonic()
    print(
        f"arena: {', '.join(games)}; {per_pairing} games per pairing; seed {args.seed}; "
        f"{args.seats or 'default'} seats; {args.processes} processes; strong: {args.sims} samples, "
        f"{1000 * PRODUCTION.cpu_seconds:.0f} ms CPU cap",
        flush=True,
    )
    pairings = tuple(tuple(p.split(":")) for p in args.pairing) if args.pairing else PAIRINGS
    sink = open(args.out, "ab") if args.out else None  # noqa: SIM115 (closed below)

    def save(result: Result) -> None:
        assert sink is not None
        sink.write(msgspec.json.encode(result) + b"\n")
        sink.flush()

    try:
        results = run_arena(
            games,
            per_pairing,
            args.seed,
            args.processes,
            args.sims,
            pairings,  # type: ignore[arg-type]
            save=save if sink is not None else None,
            seats=args.seats,
            first=args.first,
        )
    finally:
        if sink is not None:
            sink.close()
    report(results)
    print(f"\n{len(results)} games in {time.monotonic() - started:.0f} s", flush=True)
    return 0
