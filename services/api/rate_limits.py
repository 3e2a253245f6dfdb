"""Per-client rate limits on the writes a stranger can flood: creating tables, joining, commands.

Moving windows: exact, never more than the rate in any window. Rates are ``limits`` strings
(``"1200/minute"``). The storage is a ``limits`` URI:

- ``async+memory://`` (the default) counts per API process (``LocalWindows``), so with N processes
  a client gets up to N times the rate, and the counts survive a Redis outage;
- ``async+redis://host:port/db`` (or any other async ``limits`` storage) shares the counts between
  processes through ``limits``' own moving-window limiter.

A refusal is 429 ``rate_limited`` with ``Retry-After``.

Why the in-process windows are not ``limits``' ``async+memory://`` storage: on every hit that
storage schedules a pass over every key that hops to a worker thread per key; measured in a live
event loop, a hit cost 170-190 us of CPU (a whole command costs about 1 ms), and the sync memory
storage 30-135 us (a timer thread every 10 ms scanning every key). ``LocalWindows`` keeps each
client's hit times in a deque: a hit is O(1) amortised, and idle clients are dropped by a sweep
at most once per window.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from typing import Literal

from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from services.config import Settings
from services.errors import TooManyError

Action = Literal["create", "join", "command"]

WHAT: dict[Action, str] = {"create": "tables created", "join": "seats taken", "command": "commands sent"}

LOCAL = "async+memory://"


class LocalWindows:
    """Exact moving windows in this process: per action and client, the times of the hits within
    the last window, oldest first. ``clock``: seconds, monotonic (tests drive it)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._hits: dict[tuple[str, str], deque[float]] = {}
        self._windows: dict[str, float] = {}
        self._swept = clock()

    def hit(self, item: RateLimitItem, action: str, client: str) -> float | None:
        """Count one hit; ``None`` if allowed, else the seconds until one is allowed again."""
        now = self._clock()
        window = float(item.get_expiry())
        self._windows[action] = window
        times = self._hits.setdefault((action, client), deque())
        while times and times[0] <= now - window:
            times.popleft()
        if len(times) >= item.amount:
            return times[-item.amount] + window - now
        times.append(now)
        if now - self._swept >= max(self._windows.values()):
            self._sweep(now)
        return None

    def __len__(self) -> int:
        """Clients (per action) with hits kept."""
        return len(self._hits)

    def _sweep(self, now: float) -> None:
        """Drop the clients whose last hit has left its window."""
        self._swept = now
        idle = [
            key for key, times in self._hits.items() if not times or times[-1] <= now - self._windows[key[0]]
        ]
        for key in idle:
            del self._hits[key]


class RateLimits:
    """``await limits.hit(action, client)`` counts one action, or raises 429 past the client's rate."""

    def __init__(self, rates: dict[Action, str], storage_uri: str = LOCAL) -> None:
        self._items: dict[Action, RateLimitItem] = {action: parse(rate) for action, rate in rates.items()}
        self._local: LocalWindows | None = None
        self._shared: MovingWindowRateLimiter | None = None
        if storage_uri == LOCAL:
            self._local = LocalWindows()
            return
        # redis-py is ours already; ``limits`` would otherwise ask for coredis
        options = {"implementation": "redispy"} if storage_uri.startswith("async+redis") else {}
        storage = storage_from_string(storage_uri, **options)
        if not isinstance(storage, Storage):
            raise ValueError(f"the rate limit storage must be an async one (async+...), not {storage_uri!r}")
        self._shared = MovingWindowRateLimiter(storage)

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
        if self._local is not None:
            wait = self._local.hit(item, action, client)
            if wait is None:
                return
        else:
            assert self._shared is not None
            if await self._shared.hit(item, action, client):
                return
            reset_at, _ = await self._shared.get_window_stats(item, action, client)
            wait = reset_at - time.time()
        seconds = max(1, math.ceil(wait))
        raise TooManyError(
            "rate_limited",
            f"Too many {WHAT[action]} from this client (at most {item}); retry in {seconds} s.",
            retry_after=seconds,
        )
