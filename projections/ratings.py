"""Ratings across games: a finished table's result as a history record and rating updates.

Pure: the same finished table, finish time and prior ratings give the same record and the same
numbers, so folding the finished games again in their recorded finish order rebuilds every rating
exactly. The rating model is openskill's Plackett-Luce (any number of players, ties), one rating
per account per game. Leaderboards sort by its ordinal, mu - 3 sigma (``rating``: 0 for a new
player, below 0 after one loss); people read ``display``, the same order on a familiar scale:
``max(0, round(1000 + 40 (mu - 3 sigma)))``, 1000 for a new player, about 950 after one loss in a
game of two, and ``provisional`` until ``PROVISIONAL_GAMES`` rated games in that game.

A finished game is *rated* only when it is a real contest between registered players: not a
practice table (its deals are known in advance), no bot ever seated or took over a seat (stream
events ``bot_seated`` / ``bot_took_over``, recognised by tag), and every seat claimed by an account.
A seat taken back from its bot (``seat_reclaimed``) does not make the game rated again: the bot
played moves for it, so the result is not that of the people alone.
Unrated games still appear in the histories of the accounts that played them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import msgspec
from openskill.models import PlackettLuce

from domain.games import table_for
from domain.table import TableState

UNRATED_EVENT_TAGS = frozenset({"bot_seated", "bot_took_over"})
LOWER_SCORE_WINS = frozenset({"six-nimmt"})
TITLES = {"skull": "Skull", "six-nimmt": "6 nimmt!", "skull-king": "Skull King"}

_model = PlackettLuce()  # stateless: its parameters are the published defaults (mu 25, sigma 25/3)

DISPLAY_BASE = 1000  # a new player (ordinal 0)
DISPLAY_SCALE = 40  # display points per point of ordinal: one sigma of a new player is about 333
PROVISIONAL_GAMES = 5  # rated games in a game before its rating stops being provisional


def display_rating(mu: float, sigma: float) -> int:
    """The rating a person reads: the ordinal (mu - 3 sigma) mapped linearly onto a scale around
    1000. The same order as the ordinal; below 0 only for an ordinal under -25 (mu under -22 with a
    tiny sigma, past what any run of losses gives), where it stays 0."""
    return max(0, round(DISPLAY_BASE + DISPLAY_SCALE * (mu - 3 * sigma)))


def readable(mu: float, sigma: float, games: int) -> dict[str, Any]:
    """The fields a rating adds for people: ``display`` and ``provisional`` (too few rated games)."""
    return {"display": display_rating(mu, sigma), "provisional": games < PROVISIONAL_GAMES}


class Skill(msgspec.Struct, frozen=True):
    """One account's rating in one game."""

    mu: float
    sigma: float
    games: int = 0

    @property
    def rating(self) -> float:
        """What leaderboards sort by: a conservative estimate, mu - 3 sigma (the ordinal)."""
        return self.mu - 3 * self.sigma

    def shown(self) -> dict[str, Any]:
        return {
            "rating": self.rating,
            "mu": self.mu,
            "sigma": self.sigma,
            "games": self.games,
            **readable(self.mu, self.sigma, self.games),
        }


NEW_PLAYER = Skill(mu=_model.mu, sigma=_model.sigma, games=0)


def unrated_reason(state: TableState, event_tags: Collection[str]) -> str | None:
    """Why a finished table does not count for ratings, or ``None`` when it does."""
    if state.practice:
        return "practice"
    if UNRATED_EVENT_TAGS & set(event_tags):
        return "bots"
    if any(player.account is None for player in state.seated):
        return "anonymous_seats"
    return None


def ranks(game: str, scores: list[int]) -> list[int]:
    """Competition ranks from final scores (1 is best, ties share a rank); lower wins in 6 nimmt!."""
    sign = -1 if game in LOWER_SCORE_WINS else 1
    return [1 + sum(1 for other in scores if sign * other > sign * score) for score in scores]


def rate(game_ranks: list[int], before: list[Skill]) -> list[Skill]:
    """Each seat's rating after one game, given its rank and its rating before."""
    teams = [[_model.create_rating([skill.mu, skill.sigma])] for skill in before]
    after = _model.rate(teams, ranks=list(game_ranks))
    return [
        Skill(mu=team[0].mu, sigma=team[0].sigma, games=skill.games + 1)
        for team, skill in zip(after, before, strict=True)
    ]


def finish_record(
    state: TableState,
    event_tags: Collection[str],
    finished_at: float,
    before: Mapping[str, Skill],
) -> tuple[dict[str, Any], dict[str, Skill]]:
    """The history record of a finished table and, if it is rated, each account's new rating.

    ``before`` holds the accounts' current ratings in this game (missing: a new player)."""
    if state.status != "finished":
        raise ValueError("only a finished table has a result")
    scores = [int(s) for s in _scores(state)]
    places = ranks(state.game, scores)
    reason = unrated_reason(state, event_tags)
    updates: dict[str, Skill] = {}
    if reason is None:
        accounts = [p.account.id for p in state.seated if p.account is not None]
        prior = [before.get(account, NEW_PLAYER) for account in accounts]
        updates = dict(zip(accounts, rate(places, prior), strict=True))
    seats = []
    for player in state.seated:
        account = player.account
        change = None
        if account is not None and account.id in updates:
            change = {
                "before": before.get(account.id, NEW_PLAYER).shown(),
                "after": updates[account.id].shown(),
            }
        seats.append(
            {
                "seat": player.seat,
                "name": player.name,
                "account": None if account is None else {"id": account.id, "name": account.name},
                "score": scores[player.seat],
                "rank": places[player.seat],
                "winner": player.seat in state.winners,
                "rating": change,
            }
        )
    record = {
        "game_id": state.game_id,
        "game": state.game,
        "title": f"{TITLES.get(state.game, state.game)}: {', '.join(p.name for p in state.seated)}",
        "finished_at": finished_at,
        "rated": reason is None,
        "unrated_reason": reason,
        "seats": seats,
        "replay": f"/replay/{state.game_id}",
        "export": f"/games/{state.game_id}/export",
    }
    return record, updates


def _scores(state: TableState) -> list[int]:
    return list(table_for(state.game).rules.scores(state.game_state))
