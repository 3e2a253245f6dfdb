"""The ``strong`` level: determinised Monte Carlo search from one seat's own view.

For each simulation it samples a whole game state consistent with the view (the game's bot's
``sample``, ``bots.determinise``: the unseen cards/discs drawn among what the view leaves possible),
then plays every candidate move in that same sample and lets the ``normal`` policy play every seat
to the end of the round (the domain's own ``decide``/``evolve``, so no rule is guessed; each seat's
policy reads its bot's ``light_view`` of the state). A move's value is how the round went for the
bot's seat, as the game's bot's ``value`` says (each game's against the mean of the others: score
gained, bullheads taken, points, discs kept, the game won). Every per-game part comes from the
game's bot module through the registry (``bots.bot_for``); nothing here knows a game by name.

A candidate's share is the share of the samples in which it came out best (a tie among several
splits that sample equally among them). It plays the candidate with the largest share; equal shares
go to the best mean value, then to the ``normal`` policy's pick. So the chosen move always heads
the shares a hint or a review shows.

Budget (production): at most ``SIMULATIONS`` samples and at most ``CPU_SECONDS`` of CPU time of
the calling thread per move (``time.thread_time``: the search runs in one thread, and in the API
hints run in worker threads beside others, whose CPU must not eat a hint's budget), whichever
comes first; at least one sample is always played out. All chance, sampling and rollouts alike,
comes from the ``rng`` handed in.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

from bots import Bot, bot_for
from domain.games import spec
from domain.kernel import Rejected, fold

SIMULATIONS = 24  # samples (determinisations) per move at most
CPU_SECONDS = 0.15  # CPU time of the searching thread per move at most
MAX_CANDIDATES = 12  # moves weighed per decision: the normal policy's pick and its neighbours
MAX_STEPS = 2_000  # a rollout never runs longer than this (a guard: rounds end well before)

Command = dict[str, Any]
T = TypeVar("T")


@dataclass(frozen=True)
class Budget:
    simulations: int = SIMULATIONS
    cpu_seconds: float = CPU_SECONDS


PRODUCTION = Budget()


@dataclass
class Outcome:
    """What the search found: the chosen move, every candidate's share (best first: the chosen move
    heads it) and mean value."""

    command: Command
    shares: list[tuple[Command, float]]
    values: dict[int, float]
    simulations: int
    normal: Command


def search(game: str, view: dict[str, Any], rng: random.Random, budget: Budget = PRODUCTION) -> Outcome:
    """The best-looking of ``view["legal"]`` over sampled hidden states (at least one sample)."""
    started = time.thread_time()
    legal: list[Command] = list(view["legal"])
    rules = spec(game).rules
    bot = bot_for(game)
    normal = bot.choose(view, rng)
    candidates = _candidates(legal, normal)
    if len(candidates) == 1:
        return Outcome(candidates[0], [(candidates[0], 1.0)], {0: 0.0}, 0, normal)
    seat: int = view["seat"]
    totals = [0.0] * len(candidates)
    wins = [0.0] * len(candidates)
    done = 0
    while done < budget.simulations:
        sample = bot.sample(view, rng)
        seed = rng.getrandbits(64)
        values = []
        for command in candidates:
            sim_rng = random.Random(seed)
            values.append(_rollout(rules, bot, sample, seat, command, sim_rng))
        best = max(values)
        leaders = [i for i, v in enumerate(values) if v >= best - 1e-9]
        for i, v in enumerate(values):
            totals[i] += v
        for i in leaders:
            wins[i] += 1 / len(leaders)
        done += 1
        if time.thread_time() - started >= budget.cpu_seconds:
            break
    means = [t / done for t in totals]
    # the largest share of samples won first, then the best mean value, then the normal policy's
    # choice (candidate 0) and the order of the legal list; the chosen move is the first of them,
    # so what a hint or a review shows (the shares, best first) always leads with what is played
    order = sorted(range(len(candidates)), key=lambda i: (-round(wins[i], 9), -round(means[i], 9), i))
    shares = [(candidates[i], wins[i] / done) for i in order]
    return Outcome(candidates[order[0]], shares, dict(enumerate(means)), done, normal)


def _candidates(legal: list[Command], normal: Command) -> list[Command]:
    """The normal policy's pick first, then the rest of the legal list; when there are more than
    ``MAX_CANDIDATES``, the ones nearest to the pick in the legal list's order (bids by count)."""
    index = legal.index(normal)
    rest = sorted((i for i in range(len(legal)) if i != index), key=lambda i: (abs(i - index), i))
    return [normal, *(legal[i] for i in rest[: MAX_CANDIDATES - 1])]


class RolloutChance:
    """The chance of an imagined round: the draws a rollout's rules ask for (Skull's discard of a
    lost bid, the next round's deal when the round ends) from a seeded ``random.Random``.

    It answers the part of ``domain.fairness.Chance`` the rules use (``uniform``, ``shuffle``),
    without a table's HMAC streams: nobody audits an imagined deal, and dealing 104 cards through
    HMAC-SHA256 at the end of every rollout was an eighth of a 6 nimmt! search's CPU."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def uniform(self, round_number: int, label: str, n: int) -> int:
        return self._rng.randrange(n)

    def shuffle(self, round_number: int, label: str, items: Sequence[T]) -> list[T]:
        out = list(items)
        self._rng.shuffle(out)
        return out


def _chance(rng: random.Random) -> RolloutChance:
    # 768 bits, as many as the seeds of a table's chance: the rollout's own choices that follow
    # draw from ``rng`` after them
    return RolloutChance(rng.getrandbits(768))


def _rollout(rules: Any, bot: Bot, state: Any, seat: int, command: Command, rng: random.Random) -> float:
    """Play ``command`` for ``seat`` in ``state``, then the normal policy for everyone to the end of
    the round; the round's value for ``seat`` (``bot.value``)."""
    before = state
    chance = _chance(rng)
    round_at = rules.rounds_completed(state)
    typed = msgspec.convert(command, rules.command_type)
    try:
        state = fold(rules, state, rules.decide(state, typed, seat, chance))
    except Rejected:  # a sample the rules refuse for this move: the move is worth nothing here
        return -1e6
    for _ in range(MAX_STEPS):
        if rules.is_terminal(state) or rules.rounds_completed(state) != round_at:
            break
        actors = rules.to_act(state)
        if not actors:
            break
        actor = actors[0]
        moves = rules.legal_commands(state, actor)
        wire = msgspec.to_builtins(moves)
        if len(moves) == 1:
            move = moves[0]
        else:
            view = bot.light_view(state, actor)
            view["legal"] = wire
            move = moves[wire.index(bot.choose(view, rng))]
        state = fold(rules, state, rules.decide(state, move, actor, chance))
    return bot.value(rules, before, state, seat)


def relative(before: Sequence[float], after: Sequence[float], seat: int) -> float:
    """What ``seat`` gained from ``before`` to ``after`` (one number per seat: a score, a worth)
    less the mean of what the other seats gained: the shape of every game's ``value`` so far."""
    gains = [a - b for a, b in zip(after, before, strict=True)]
    others = [g for s, g in enumerate(gains) if s != seat]
    return gains[seat] - (sum(others) / len(others) if others else 0.0)
