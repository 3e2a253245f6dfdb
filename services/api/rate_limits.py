"""Per-client rate limits on the writes a stranger can flood: creating tables, joining, commands,
logging in and registering (``LoginGuard``: the guesses at one account, from one address and from all).

Moving windows: exact, never more than the rate in any window. Rates are ``limits`` strings
(``"1200/minute"``). The storage is a ``limits`` URI:

- ``async+memory://`` (the default for one API process) counts in the process (``LocalWindows``),
  and the counts survive a Redis outage; ``serve --api-workers N`` (N > 1) turns the default into
  the queue's Redis (``shared_storage``), since per-process counts would give a client N times its
  rate;
- ``async+redis://host:port/db`` (or any other async ``limits`` storage) shares the counts between
  processes through ``limits``' own moving-window limiter.

A refusal is 429 ``rate_limited`` (``login_throttled`` for guesses at one account) with ``Retry-After``.

Why the in-process windows are not ``limits``' ``async+memory://`` storage: on every hit that
storage schedules a pass over every key that hops to a worker thread per key; measured in a live
event loop, a hit cost 170-190 us of CPU (a whole command costs about 1 ms), and the sync memory
storage 30-135 us (a timer thread every 10 ms scanning every key). ``LocalWindows`` keeps each
client's hit times in a deque: a hit is O(1) amortised, and idle clients are dropped by a sweep
at most once per shortest window (so a day-long window keeps no minute-long client for a day).
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Literal

from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from services.errors import TooManyError
from services.operating.config import Settings
from services.telemetry import metrics

Action = Literal[
    "create",
    "join",
    "command",
    "login",
    "register",
    "quickplay",
    "cosignature",
    "hint",
    "dispute",
    "operator",
]

WHAT: dict[Action, str] = {
    "create": "tables created",
    "join": "seats taken",
    "command": "commands sent",
    "login": "login attempts",
    "register": "accounts registered",
    "quickplay": "quick play tickets opened",
    "cosignature": "cosignatures sent",
    "hint": "hints asked for by this seat",
    "dispute": "dispute writes (disputes opened, evidence added)",
    "operator": "operator actions by this operator",
}

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
        if now - self._swept >= min(self._windows.values()):
            self._sweep(now)
        return None

    def held(self, item: RateLimitItem, action: str, client: str) -> tuple[int, float]:
        """The hits of ``client`` within the window now, and the seconds until the last leaves it."""
        now = self._clock()
        window = float(item.get_expiry())
        times = self._hits.get((action, client))
        inside = [t for t in times if t > now - window] if times else []
        return len(inside), (inside[-1] + window - now if inside else 0.0)

    def clear(self, action: str, client: str) -> None:
        self._hits.pop((action, client), None)

    def take_back(self, action: str, client: str) -> None:
        """Forget the newest hit of ``client`` (one counted for work that was then not done)."""
        times = self._hits.get((action, client))
        if times:
            times.pop()

    def __len__(self) -> int:
        """Clients (per action) with hits kept."""
        return len(self._hits)

    def _sweep(self, now: float) -> None:
        """Drop the clients whose last hit has left its window (at most once per shortest window)."""
        self._swept = now
        idle = [
            key for key, times in self._hits.items() if not times or times[-1] <= now - self._windows[key[0]]
        ]
        for key in idle:
            del self._hits[key]


def shared_storage(configured: str, queue_url: str) -> str:
    """The limits' storage when several API processes serve one port: the configured one, else the
    standalone Redis of the queue (the store's own server unless it is a cluster), so that a client
    gets its rate once, not once per process."""
    return configured if configured != LOCAL else "async+" + queue_url


class RateLimits:
    """``await limits.hit(action, client)`` counts one action, or raises 429 past the client's rate."""

    def __init__(self, rates: Mapping[str, str], storage_uri: str = LOCAL) -> None:
        self._items: dict[str, RateLimitItem] = {action: parse(rate) for action, rate in rates.items()}
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
        rates = {
            "create": settings.create_rate,
            "join": settings.join_rate,
            "command": settings.command_rate,
            "login": settings.login_rate,
            "register": settings.register_rate,
            "quickplay": settings.quickplay_rate,
            "cosignature": settings.cosignature_rate,
            "hint": settings.hint_rate,
            "dispute": settings.dispute_rate,
            "operator": settings.operator_rate,
            GUESS: settings.login_guess_rate,
            NAME: settings.login_name_rate,
            CHAT: settings.chat_rate,
            CHAT_SPEAKER: settings.chat_speaker_rate,
        }
        return cls(rates, settings.rate_limit_storage)

    @property
    def login(self) -> LoginGuard:
        return LoginGuard(self)

    async def hit(self, action: Action, client: str) -> None:
        wait = await self.counted(action, client)
        if wait is None:
            return
        item = self._items[action]
        seconds = max(1, math.ceil(wait))
        metrics.refused(action)
        raise TooManyError(
            "rate_limited",
            f"Too many {WHAT[action]} from this client (at most {item}); retry in {seconds} s.",
            retry_after=seconds,
        )

    def item(self, action: str) -> RateLimitItem:
        return self._items[action]

    async def counted(self, action: str, client: str) -> float | None:
        """Count one hit: ``None`` if allowed, else the seconds until one is allowed again."""
        item = self._items[action]
        if self._local is not None:
            return self._local.hit(item, action, client)
        assert self._shared is not None
        if await self._shared.hit(item, action, client):
            return None
        reset_at, _ = await self._shared.get_window_stats(item, action, client)
        return reset_at - time.time()

    async def held(self, action: str, client: str) -> tuple[int, float]:
        """The hits counted for ``client`` within the window, and about how long until they have all
        left it (exact in memory; the whole window with shared storage, which does not say)."""
        item = self._items[action]
        if self._local is not None:
            return self._local.held(item, action, client)
        assert self._shared is not None
        _, remaining = await self._shared.get_window_stats(item, action, client)
        count = item.amount - remaining
        return count, float(item.get_expiry()) if count else 0.0

    async def clear(self, action: str, client: str) -> None:
        if self._local is not None:
            self._local.clear(action, client)
            return
        assert self._shared is not None
        await self._shared.clear(self._items[action], action, client)

    async def take_back(self, action: str, client: str) -> None:
        """Forget one hit of ``client`` counted for work that was then not done. Shared: on Redis,
        the newest entry of ``limits``' moving window (a list, newest first); other shared storages
        have no way to, and keep it."""
        if self._local is not None:
            self._local.take_back(action, client)
            return
        assert self._shared is not None
        storage = self._shared.storage
        bridge = getattr(storage, "bridge", None)
        if bridge is None:
            return
        key = bridge.prefixed_key(self._items[action].key_for(action, client))
        await bridge.get_connection().lpop(key)


GUESS = "login_guess"
CHAT = "chat"  # chat messages per client address (services.people.chat)
CHAT_SPEAKER = "chat_speaker"  # per speaker at a table
NAME = "login_name"


class LoginGuard:
    """What a password check may cost, counted before the Argon2 work is done:

    - ``login``: attempts per client address, at any names (each costs one Argon2 verify);
    - ``login_guess``: attempts at one account name from one address, counted at the attempt and
      forgotten when one succeeds (so concurrent guesses cannot slip past while the first is
      checked); past it that address waits for its oldest attempt to leave the window;
    - ``login_name``: attempts at one name from all addresses. Past it the name is under attack, and
      only addresses with no attempt at it within their ``login_guess`` window may try: the owner,
      from a device that has not guessed wrong, still logs in at the first try, while each attacking
      address has one guess per window instead of several. So no one can lock the owner out: an
      attacker's own lockout is per address, and the name's lockout spares fresh addresses.

    Names are counted by their normalised form (``services.accounts.names.normalise``), the one a login finds.
    """

    def __init__(self, limits: RateLimits) -> None:
        self._limits = limits

    async def attempt(self, client: str, name: str) -> bool:
        """Count one password check of ``name`` by ``client``, or raise 429 before it is made. True
        when the attempt was counted against the name too (pass it to ``not_checked``)."""
        await self._limits.hit("login", client)
        pair = _pair(client, name)
        under_attack = (await self._limits.held(NAME, name))[0] >= self._limits.item(NAME).amount
        if under_attack:
            tried, clears_in = await self._limits.held(GUESS, pair)
            if tried:
                raise _throttled(
                    "This account is being guessed at from many places: after a wrong password, "
                    f"wait {max(1, math.ceil(clears_in))} s before trying it again from here.",
                    clears_in,
                )
        wait = await self._limits.counted(GUESS, pair)
        if wait is not None:
            raise _throttled(
                f"Too many attempts at this account from this client (at most {self._limits.item(GUESS)}); "
                f"retry in {max(1, math.ceil(wait))} s.",
                wait,
            )
        # full: the name is under attack (above), nothing more
        return await self._limits.counted(NAME, name) is None

    async def not_checked(self, client: str, name: str, name_counted: bool) -> None:
        """The check counted by ``attempt`` was not made (the hash pool refused it as busy): its
        counts are taken back, so an attacker filling the pool cannot spend the owner's attempts."""
        await self._limits.take_back("login", client)
        await self._limits.take_back(GUESS, _pair(client, name))
        if name_counted:
            await self._limits.take_back(NAME, name)

    async def succeeded(self, client: str, name: str) -> None:
        """The right password: this address's attempts at the name are forgotten."""
        await self._limits.clear(GUESS, _pair(client, name))


def _pair(client: str, name: str) -> str:
    return f"{client}\n{name}"  # no address has a newline: the first one splits the two apart


def _throttled(message: str, wait: float) -> TooManyError:
    metrics.refused(GUESS)
    metrics.locked_out()
    return TooManyError("login_throttled", message, retry_after=max(1, math.ceil(wait)))
