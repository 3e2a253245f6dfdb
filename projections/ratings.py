"""Ratings across games: a finished table's result as a history record and rating updates.

Pure: the same finished table, finish time and prior ratings give the same record and the same
numbers, so folding the finished games again in their recorded finish order rebuilds every rating
exactly. The rating model is openskill's Plackett-Luce (any number of players, ties), one rating
per account per game. Leaderboards sort by its ordinal, mu - 3 sigma (``rating``: 0 for a new
player, below 0 after one loss); people read ``display``, the same order on a familiar scale:
``max(0, round(1000 + 20 (mu - 3 sigma)))``: 1000 for a new player, about 960 after one loss in a
game of two, 1150-1700 for a field of regulars.

A finished game is *rated* when it is a contest between registered players: not a practice table
(its deals are known in advance), no hint asked for (``hint_given``), no bot seated by the host
(stream event ``bot_seated``, recognised by tag), and every seat claimed by an account. A player
who leaves during play (``state.left``), or whose seat a bot still plays at the end after their
missed turns (taken over for ``timeouts`` and never taken back), *forfeits*: they share the last
place, below every seat that played on, whatever their bot scored, and the game stays rated for
everyone. A seat taken back (``seat_reclaimed``) is ranked by its score like the others. (Before
issue 24 any bot made a game unrated, so one rage-quit voided the game for all.)

A rating is *provisional* (``Skill.established`` is false) until ``PROVISIONAL_GAMES`` rated games
in that game against at least ``PROVISIONAL_OPPONENTS`` distinct opponents who were established
when they met (any opponent counts while the game has fewer than ``PROVISIONAL_OPPONENTS``
established players: the first players of a server have nobody to meet). So a ring of new accounts
playing only each other stays provisional for ever. A provisional opponent moves an established
player's rating little: an established seat's change is scaled by the mean weight of its
opponents (1 for an established one, ``PROVISIONAL_WEIGHT`` for a provisional one); a provisional
seat's own rating moves in full. Leaderboards list established players only.
Unrated games still appear in the histories of the accounts that played them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import msgspec
from openskill.models import PlackettLuce

from domain.games import spec, table_for
from domain.table import TableState

UNRATED_EVENT_TAGS = frozenset({"bot_seated"})
HINT_EVENT_TAG = "hint_given"  # a seat was helped by the strong bot: the game is no contest

_model = PlackettLuce()  # stateless: its parameters are the published defaults (mu 25, sigma 25/3)

DISPLAY_BASE = 1000  # a new player (ordinal 0)
DISPLAY_SCALE = 20  # display points per point of ordinal: a new player's sigma (25/3) is about 167
PROVISIONAL_GAMES = 5  # rated games in a game before its rating stops being provisional
PROVISIONAL_OPPONENTS = 3  # distinct established opponents met before a rating stops being provisional
PROVISIONAL_WEIGHT = 0.1  # how much a provisional opponent moves an established player's rating


def display_rating(mu: float, sigma: float) -> int:
    """The rating a person reads: the ordinal (mu - 3 sigma) mapped linearly onto a scale around
    1000, in the same order. It would go below 0 only for an ordinal under -50, which takes dozens
    of last places in a row at tables of six (a two-player loser is at -18.5 after 1000 straight
    losses); it then stays at 0."""
    return max(0, round(DISPLAY_BASE + DISPLAY_SCALE * (mu - 3 * sigma)))


def readable(mu: float, sigma: float, games: int) -> dict[str, Any]:
    """The fields a rating adds for people: ``display`` and ``provisional`` (here: too few rated
    games, all a record written before opponents were counted can say)."""
    return {"display": display_rating(mu, sigma), "provisional": games < PROVISIONAL_GAMES}


class Skill(msgspec.Struct, frozen=True):
    """One account's rating in one game; ``met``: the first ``PROVISIONAL_OPPONENTS`` distinct
    opponents (account ids, sorted) that counted towards leaving the provisional state."""

    mu: float
    sigma: float
    games: int = 0
    met: tuple[str, ...] = ()

    @property
    def rating(self) -> float:
        """What leaderboards sort by: a conservative estimate, mu - 3 sigma (the ordinal)."""
        return self.mu - 3 * self.sigma

    @property
    def established(self) -> bool:
        """Not provisional: enough rated games, against enough distinct established opponents."""
        return self.games >= PROVISIONAL_GAMES and len(self.met) >= PROVISIONAL_OPPONENTS

    def shown(self) -> dict[str, Any]:
        return {
            "rating": self.rating,
            "mu": self.mu,
            "sigma": self.sigma,
            "games": self.games,
            "display": display_rating(self.mu, self.sigma),
            "provisional": not self.established,
        }


NEW_PLAYER = Skill(mu=_model.mu, sigma=_model.sigma, games=0)


def forfeits(state: TableState) -> dict[int, str]:
    """The seats that forfeit, with why: ``left`` (the player left during play) or ``timeouts`` (a
    bot took the seat over after missed turns and still plays it at the end)."""
    out = {seat: "left" for seat in state.left}
    for seat, reason in state.takeovers.items():
        if reason == "timeouts" and seat in state.bots and seat not in out:
            out[seat] = "timeouts"
    return out


def unrated_reason(state: TableState, event_tags: Collection[str]) -> str | None:
    """Why a finished table does not count for ratings, or ``None`` when it does. Hints (given at
    practice tables only) come first: the end screen and the history say that hints were used."""
    if state.hinted or HINT_EVENT_TAG in event_tags:
        return "hints"
    if state.practice:
        return "practice"
    if UNRATED_EVENT_TAGS & set(event_tags):
        return "bots"
    if any(player.account is None for player in state.seated):
        return "anonymous_seats"
    return None


def ranks(game: str, scores: list[int]) -> list[int]:
    """Competition ranks from final scores (1 is best, ties share a rank); lower wins where the game's
    spec says so (6 nimmt!)."""
    sign = -1 if spec(game).lower_score_wins else 1
    return [1 + sum(1 for other in scores if sign * other > sign * score) for score in scores]


def rated_ranks(game: str, scores: list[int], forfeited: Collection[int]) -> list[int]:
    """The places ratings use: the seats that played on ranked by score among themselves, every
    forfeiting seat sharing the place after them."""
    playing = [seat for seat in range(len(scores)) if seat not in forfeited]
    among = ranks(game, [scores[seat] for seat in playing])
    places = [len(playing) + 1] * len(scores)
    for seat, place in zip(playing, among, strict=True):
        places[seat] = place
    return places


def rate(
    game_ranks: list[int], before: list[Skill], ids: list[str] | None = None, established_players: int = 0
) -> list[Skill]:
    """Each seat's rating after one game, given its rank and its rating before. ``ids``: the seats'
    account ids, to count the opponents met (``Skill.met``; none counted without them);
    ``established_players``: how many established players the game had before this one (below
    ``PROVISIONAL_OPPONENTS`` any opponent counts as met)."""
    teams = [[_model.create_rating([skill.mu, skill.sigma])] for skill in before]
    after = _model.rate(teams, ranks=list(game_ranks))
    bootstrap = established_players < PROVISIONAL_OPPONENTS
    out = []
    for i, (team, skill) in enumerate(zip(after, before, strict=True)):
        others = [j for j in range(len(before)) if j != i]
        mu, sigma = team[0].mu, team[0].sigma
        if skill.established and others:
            weight = sum(1.0 if before[j].established else PROVISIONAL_WEIGHT for j in others) / len(others)
            mu = skill.mu + weight * (mu - skill.mu)
            sigma = skill.sigma + weight * (sigma - skill.sigma)
        met = skill.met
        if ids is not None and len(met) < PROVISIONAL_OPPONENTS:
            counted = {ids[j] for j in others if bootstrap or before[j].established}
            met = tuple(sorted(set(met) | counted)[:PROVISIONAL_OPPONENTS])
        out.append(Skill(mu=mu, sigma=sigma, games=skill.games + 1, met=met))
    return out


def finish_record(
    state: TableState,
    event_tags: Collection[str],
    finished_at: float,
    before: Mapping[str, Skill],
    established_players: int = 0,
) -> tuple[dict[str, Any], dict[str, Skill]]:
    """The history record of a finished table and, if it is rated, each account's new rating.

    ``before`` holds the accounts' current ratings in this game (missing: a new player);
    ``established_players``: how many established players the game's leaderboard had before."""
    if state.status != "finished":
        raise ValueError("only a finished table has a result")
    scores = [int(s) for s in _scores(state)]
    forfeited = forfeits(state)
    places = rated_ranks(state.game, scores, forfeited)
    reason = unrated_reason(state, event_tags)
    updates: dict[str, Skill] = {}
    if reason is None:
        accounts = [p.account.id for p in state.seated if p.account is not None]
        prior = [before.get(account, NEW_PLAYER) for account in accounts]
        updates = dict(zip(accounts, rate(places, prior, accounts, established_players), strict=True))
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
                "winner": player.seat in state.winners and player.seat not in forfeited,
                "forfeit": forfeited.get(player.seat),
                "rating": change,
            }
        )
    record = {
        "game_id": state.game_id,
        "game": state.game,
        "title": f"{spec(state.game).title}: {', '.join(p.name for p in state.seated)}",
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
