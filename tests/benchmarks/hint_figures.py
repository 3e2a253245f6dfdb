"""Figures, printed (never asserted): CPU time of one hint (the strong level at its production budget,
as ``POST /games/{id}/hint`` spends it) and of one reviewed move (``workers.review.REVIEW_BUDGET``),
over the decisions of 3-seat games played by the normal bot.

Run: ``PYTHONPATH=. python -m tests.benchmarks.hint_figures [decisions per game]``
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from bots import choose
from bots.levels import advise
from domain.games import game_names, spec
from projections.views import seat_view
from services.table.hints import hint_rng
from tests.support.play import new_game
from workers.review import REVIEW_BUDGET


def quantile(values: list[float], p: float) -> float:
    return sorted(values)[min(len(values) - 1, int(p * len(values)))] * 1000


def main(decisions: int) -> None:
    for game in game_names():
        g = new_game(game, min(max(3, spec(game).min_players), spec(game).max_players), seed=7)
        rng = random.Random(7)
        hint: list[float] = []
        review: list[float] = []
        version = 0
        while g.state.status == "playing" and len(hint) < decisions:
            version += 1
            seat = sorted(g.table.to_act(g.state))[0]
            view = seat_view(g.state, version, seat)
            if len(view["legal"]) > 1:
                start = time.process_time()
                advise(game, view, "strong", hint_rng(g.seeds, "bench", version, seat))
                hint.append(time.process_time() - start)
                start = time.process_time()
                advise(game, view, "strong", hint_rng(g.seeds, "bench", version, seat), REVIEW_BUDGET)
                review.append(time.process_time() - start)
            g.act(seat, choose(game, view, rng))
        hint_ms = f"median {statistics.median(hint) * 1000:6.1f} p95 {quantile(hint, 0.95):6.1f}"
        review_ms = f"median {statistics.median(review) * 1000:6.1f} p95 {quantile(review, 0.95):6.1f}"
        print(f"{game:11s} decisions {len(hint):3d}  hint CPU ms: {hint_ms}  review move CPU ms: {review_ms}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
