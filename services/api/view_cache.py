"""Views served from this process's memory while their game has not changed.

A view read from Redis is kept, per game and per viewer (a remembered token's digest and role, or
the spectator), when the game's live channel was subscribed before the read was sent
(``LiveHub.confirmed``) and no message came on it since. Everything a view shows announces its
change on that channel before the writer's caller hears of it: an append (``append.lua``, in the same
atomic step), a projection's views write (``project_views.lua``), a timer armed (``arm_timer.lua``), a
token bound or revoked (``tokens.lua``). Any message drops the game's views, and so does the loss of
the subscriber connection (messages may be missed until it is back).

A kept view is served only after a fence (``LiveHub.fence``): every message published before the
request arrived has been dispatched first. A kept view is so never older than a read from Redis at
the same moment: a seat reads its own writes whichever API process took its command, and a token
revoked by another process is refused at once.

What is kept for a token was shown to that token by a verified read (``services.table.callers``); a token
revoked or rebound announces it, and the game's views go. The clock is added at each read
(``GameQueries.finish``): it counts down.

Kept views are served by ``services.api.view_lane.ViewLane``, ahead of the other middleware and
the router (whose per-request work would cost a view several times what the view itself does), when
the caller is known without I/O; anything else goes on to the route, which reads, keeps and answers.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from services.store.live_updates import LiveHub
from services.table.callers import Caller
from services.table.queries import ViewParts

SPECTATOR = "-"


def viewer_of(caller: Caller) -> str | None:
    """Whose view a caller reads, as a cache key: a remembered token's digest and its role, or the
    spectator; ``None`` (not kept) for a caller identified afresh or the operator."""
    if caller.check is not None:
        return f"{caller.check.digest}:{caller.check.role}"
    return SPECTATOR if caller.role == "spectator" else None


@dataclass(slots=True, eq=False)
class _Game:
    epoch: int = 0  # bumped on every change: a read sent before it may not be kept
    views: dict[str, ViewParts] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Ticket:
    """Taken before a read from Redis: the read may be kept only if the game did not change since."""

    game: _Game
    epoch: int


class ViewCache:
    """The views of up to ``games`` games (least recently read dropped first, with their channel)."""

    def __init__(self, hub: LiveHub, games: int) -> None:
        self._hub = hub
        self._capacity = games
        self._games: OrderedDict[str, _Game] = OrderedDict()
        self.hits = 0
        self.misses = 0
        hub.on_change = self.changed

    def __len__(self) -> int:
        return len(self._games)

    @property
    def capacity(self) -> int:
        return self._capacity

    def resize(self, games: int) -> None:
        """Keep the views of at most ``games`` games from now on (0: none; the rest are dropped)."""
        self._capacity = games
        self._evict()

    async def get(self, game_id: str, viewer: str) -> ViewParts | None:
        """The kept view, if the game has not changed up to now (after the fence)."""
        game = self._games.get(game_id)
        kept = game.views.get(viewer) if game is not None else None
        if game is None or kept is None:
            self.misses += 1
            return None
        epoch = game.epoch
        if not await self._hub.fence(game_id) or game.epoch != epoch:
            self.misses += 1
            return None
        self._games.move_to_end(game_id)
        self.hits += 1
        return kept

    def ticket(self, game_id: str) -> Ticket | None:
        """Before a read from Redis: ``None`` when what it reads may not be kept (the game is not
        watched yet, or its subscription is not confirmed)."""
        game = self._games.get(game_id)
        if game is None or not self._hub.confirmed(game_id):
            return None
        return Ticket(game, game.epoch)

    def keep(self, game_id: str, ticket: Ticket | None, viewer: str | None, parts: ViewParts) -> None:
        """After a read from Redis: keep it if nothing changed since ``ticket``; a game read for the
        first time is watched from now on (its next reads may be kept)."""
        if self._capacity <= 0:
            return
        game = self._games.get(game_id)
        if game is None:
            self._games[game_id] = _Game()
            self._hub.watch(game_id)
            self._evict()
            return
        self._games.move_to_end(game_id)
        if ticket is not None and viewer is not None and ticket.game is game and game.epoch == ticket.epoch:
            game.views[viewer] = parts

    def changed(self, game_id: str) -> None:
        """The game changed (or may have): drop its views."""
        game = self._games.get(game_id)
        if game is not None:
            game.epoch += 1
            game.views.clear()

    def _evict(self) -> None:
        while len(self._games) > max(0, self._capacity):
            game_id, game = self._games.popitem(last=False)
            game.epoch += 1
            self._hub.unwatch(game_id)
