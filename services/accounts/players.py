"""The players' read side: public profiles with ratings, game histories, leaderboards.

Served from the read models the workers keep (``workers.ratings``); nothing here folds a game.
Everything returned is public: display names, account ids, ratings and finished games' results.
"""

from __future__ import annotations

from typing import Any

import msgspec

from domain.accounts import AccountState
from domain.games import game_names
from projections.ratings import Skill, readable
from services.errors import NotFoundError
from services.store import ratings as store_ratings
from services.store.event_store import EventStore

_skill_decoder = msgspec.json.Decoder(Skill)


def public_account(account: AccountState) -> dict[str, Any]:
    return {"account_id": account.account_id, "name": account.display_name}


class PlayerQueries:
    def __init__(self, store: EventStore) -> None:
        self.store = store

    async def ratings(self, account_id: str) -> dict[str, Any]:
        """The account's rating in each game it has played rated games of."""
        found = await self.store.run(store_ratings.account_ratings(account_id, game_names()))
        return {game: _skill_decoder.decode(raw).shown() for game, raw in found.items()}

    async def profile(self, account: AccountState) -> dict[str, Any]:
        return {
            **public_account(account),
            "ratings": await self.ratings(account.account_id),
            "history": f"/accounts/{account.account_id}/history",
        }

    async def history(self, account_id: str, offset: int, limit: int) -> dict[str, Any]:
        """A page of the account's finished games, most recent first, each with its own seat."""
        total, game_ids = await self.store.run(store_ratings.history_page(account_id, offset, limit))
        games = []
        for raw in await self.store.run(store_ratings.records(game_ids)):
            if raw is None:
                continue
            record: dict[str, Any] = msgspec.json.decode(raw)
            if record.get("private"):  # recorded before private tables were kept out of histories
                continue
            for seat in record["seats"]:
                seat["rating"] = _readable_change(seat["rating"])
            own = [s for s in record["seats"] if s["account"] and s["account"]["id"] == account_id]
            games.append({**record, "you": own[0] if own else None})
        return {"account_id": account_id, "total": total, "offset": offset, "limit": limit, "games": games}

    async def leaderboard(self, game: str, offset: int, limit: int) -> dict[str, Any]:
        if game not in game_names():
            raise NotFoundError(
                "unknown_game", f"There is no game {game!r}; one of {', '.join(game_names())}."
            )
        total, hidden, rows = await self.store.run(store_ratings.leaderboard_page(game, offset, limit))
        ids = [account_id for account_id, _ in rows]
        names = await self.store.run(store_ratings.names_of(ids))
        skills = await self.store.run(store_ratings.ratings_of(game, ids))
        entries = []
        for place, (account_id, name, raw) in enumerate(
            zip(ids, names, skills, strict=True), start=offset + 1
        ):
            shown = _skill_decoder.decode(raw).shown() if raw is not None else {}
            entries.append({"rank": place, "account_id": account_id, "name": name, **shown})
        return {
            "game": game,
            "total": total,
            "offset": offset,
            "limit": limit,
            "entries": entries,
            "provisional_hidden": hidden,
        }


def _readable_change(change: dict[str, Any] | None) -> dict[str, Any] | None:
    """A seat's rating change as recorded, with ``display`` and ``provisional`` on both sides (as
    recorded; computed from mu, sigma and games for records written before they existed)."""
    if change is None:
        return None
    return {
        side: {**readable(rating["mu"], rating["sigma"], rating["games"]), **rating}
        for side, rating in change.items()
    }
