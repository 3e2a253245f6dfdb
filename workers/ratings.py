"""Players' read models from finished games: history records, ratings, leaderboards.

The projection job calls ``RatingsRecorder.record`` for a finished game. The first call records
it (finish time from the worker's clock, kept in the finish log outside the game stream); any
later call - a duplicate, late or reordered poke, another worker racing - finds the game recorded
and changes nothing. ``rebuilt_models`` folds every logged game again, in log order, from the game
streams alone; ``rebuild`` writes that result over the stored models.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec
import structlog

from domain.games import game_names
from domain.table import is_private
from projections.ratings import Skill, finish_record
from services.history.folding import Folded, advance, event_tags
from services.store import ratings as store_ratings
from services.store.event_store import SyncEventStore
from services.store.ratings import Models, SeatAccount

MAX_ROUNDS = 50

log = structlog.get_logger("tablestream.ratings")
_encoder = msgspec.json.Encoder(order="deterministic")
_skill_decoder = msgspec.json.Decoder(Skill)


class RatingsRecorder:
    def __init__(self, store: SyncEventStore, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.clock = clock

    def record(self, folded: Folded) -> str:
        """``recorded``, ``already`` (recorded before) or ``skipped`` (not finished, no account
        played, or a private table: such a game is in nobody's history and counts for no rating,
        since a private table is seen only through its invite link)."""
        state = folded.state
        if state.status != "finished" or is_private(state) or all(p.account is None for p in state.seated):
            return "skipped"
        if self.store.run(store_ratings.is_recorded(folded.game_id)):
            return "already"
        tags = event_tags(self.store.read(folded.game_id, after=0, limit=folded.version))
        finished_at = self.clock()
        accounts = [p.account for p in state.seated if p.account is not None]
        for _ in range(MAX_ROUNDS):
            seq, stored, established = self.store.run(
                store_ratings.current_ratings(state.game, [a.id for a in accounts])
            )
            before = {a.id: _skill_decoder.decode(r) for a, r in zip(accounts, stored, strict=True) if r}
            record, updates = finish_record(state, tags, finished_at, before, established)
            seat_accounts = [_seat_account(a.id, a.name, updates.get(a.id)) for a in accounts]
            result = self.store.run(
                store_ratings.record_finish(
                    seq, folded.game_id, state.game, finished_at, _encoder.encode(record), seat_accounts
                )
            )
            if result.status != "conflict":
                outcome = "recorded" if result.status == "ok" else "already"
                log.info("finish_recorded", game_id=folded.game_id, seq=result.seq, outcome=outcome)
                return outcome
        raise RuntimeError(f"recording {folded.game_id} kept conflicting with other finishes")


def _seat_account(account_id: str, name: str, skill: Skill | None) -> SeatAccount:
    """On the leaderboard (an ordinal) only once established: provisional players are not listed."""
    if skill is None:
        return SeatAccount(account_id, name)
    return SeatAccount(account_id, name, _encoder.encode(skill), skill.rating if skill.established else None)


def rebuilt_models(store: SyncEventStore) -> Models:
    """Every players' read model folded again from the game streams, in finish-log order."""
    models = Models()
    skills: dict[str, dict[str, Skill]] = {}
    for logged in store.run(store_ratings.finish_log()):
        entries = store.read(logged.game_id)
        folded = advance(logged.game_id, None, entries)
        state = folded.state
        game_skills = skills.setdefault(state.game, {})
        established = sum(1 for skill in game_skills.values() if skill.established)
        record, updates = finish_record(
            state, event_tags(entries), logged.finished_at, game_skills, established
        )
        game_skills.update(updates)
        models.finished[logged.game_id] = logged.seq
        models.records[logged.game_id] = _encoder.encode(record)
        for player in state.seated:
            if player.account is not None:
                models.names[player.account.id] = player.account.name
                history = models.histories.setdefault(player.account.id, [])
                history.insert(0, (logged.game_id, logged.seq))
    for game, accounts in skills.items():
        if accounts:
            models.ratings[game] = {a: _encoder.encode(s) for a, s in accounts.items()}
            board = _board(accounts)
            if board:
                models.boards[game] = board
    return models


def _board(accounts: dict[str, Skill]) -> list[tuple[str, float]]:
    """The established players, best first, as ZREVRANGE gives it: by rating, ties by account id
    descending."""
    return sorted(
        ((a, s.rating) for a, s in accounts.items() if s.established),
        key=lambda row: (row[1], row[0]),
        reverse=True,
    )


def stored_models(store: SyncEventStore) -> Models:
    return store.run(store_ratings.stored_models(game_names()))


def rebuild(store: SyncEventStore) -> Models:
    """Replace the stored models by ``rebuilt_models`` (run with the workers stopped)."""
    new = rebuilt_models(store)
    store.run(store_ratings.replace_models(stored_models(store), new, game_names()))
    return new
