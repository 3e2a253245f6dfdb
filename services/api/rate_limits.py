"""Per-client rate limits on the writes a stranger can flood: creating tables, joining, commands.

Built on the ``limits`` library (moving windows: exact, never more than the rate in any window). The
storage is a ``limits`` URI:
``async+memory://`` (the default) counts per API process, so with N processes a client gets up to
N times the rate, and the counts survive a Redis outage; ``async+redis://host:port/db`` shares the
counts between processes through Redis. A refusal is 429 ``rate_limited`` with ``Retry-After``.
"""

from __future__ import annotations

import math
import time
from typing import Literal

from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from services.config import Settings
from services.errors import TooManyError

Action = Literal["create", "join", "command"]

WHAT: dict[Action, str] = {"create": "tables created", "join": "seats taken", "command": "commands sent"}


class RateLimits:
    """``await limits.hit(action, client)`` counts one action, or raises 429 past the client's rate."""

    def __init__(self, rates: dict[Action, str], storage_uri: str = "async+memory://") -> None:
        storage = storage_from_string(storage_uri)
        if not isinstance(storage, Storage):
            raise ValueError(f"the rate limit storage must be an async one (async+...), not {storage_uri!r}")
        self._limiter = MovingWindowRateLimiter(storage)
        self._items: dict[Action, RateLimitItem] = {action: parse(rate) for action, rate in rates.items()}

    @classmethod
    def from_settings(cls, settings: Settings) -> RateLimits:
        rates: dict[Action, str] = {
            "create": settings.create_rate,
            "join": settings.join_rate,
            "command": settings.command_rate,
        }
        return cls(rates, settings.rate_limit_storage)

    async def hit(self, action: Action, client: str) -> None:
        item = self._items[action]
        if await self._limiter.hit(item, action, client):
            return
        reset_at, _ = await self._limiter.get_window_stats(item, action, client)
        wait = max(1, math.ceil(reset_at - time.time()))
        raise TooManyError(
            "rate_limited",
            f"Too many {WHAT[action]} from this client (at most {item}); retry in {wait} s.",
            retry_after=wait,
        )
