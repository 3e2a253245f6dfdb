"""Waiting on a condition with a deadline that grows with the machine's load: the one way tests wait.

A test never sleeps to synchronise. It polls a condition until it holds, and gives up only after a
time that is long on a quiet machine and longer on a busy one: the budget given in seconds is
multiplied by :func:`load_factor`, read again at every poll, so a wait that began on a quiet machine
still gets its due when a neighbour starts hogging the cores. A wait that times out names what it
waited for and how long it waited.

``TABLESTREAM_TEST_TIME_SCALE`` multiplies every budget (a slow machine or a debugger's pace).
"""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

POLL = 0.02
"""Seconds between two polls: short beside any budget, long beside a poll's own cost."""
MAX_FACTOR = 8.0
"""The most a busy machine stretches a budget: a real hang still fails in bounded time."""


def load_factor() -> float:
    """How much slower than a quiet machine this one runs now: the 1-minute load average per core
    (at least 1, at most :data:`MAX_FACTOR`), times ``TABLESTREAM_TEST_TIME_SCALE``."""
    scale = float(os.environ.get("TABLESTREAM_TEST_TIME_SCALE", "1") or 1)
    try:
        per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this platform
        per_core = 1.0
    return min(MAX_FACTOR, max(1.0, per_core)) * max(scale, 0.1)


def scaled(seconds: float) -> float:
    """``seconds`` on a quiet machine, as many as this machine needs now."""
    return seconds * load_factor()


class Deadline:
    """A budget of seconds started now, stretched by the load each time it is asked."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def passed(self) -> bool:
        return self.elapsed() > scaled(self.seconds)

    def remaining(self) -> float:
        """Seconds left of the stretched budget (never negative): for a blocking call's timeout."""
        return max(0.0, scaled(self.seconds) - self.elapsed())


def wait_until(
    condition: Callable[[], T],
    seconds: float,
    what: str,
    details: Callable[[], str] | None = None,
    *,
    ignoring: tuple[type[BaseException], ...] = (),
    interval: float = POLL,
) -> T:
    """Poll ``condition`` until it returns something true, and return that; raise ``TimeoutError``
    naming ``what`` (and ``details()``, when given) once ``seconds`` (scaled by the load) have passed.
    Exceptions of the ``ignoring`` types count as "not yet" (a server still starting)."""
    deadline = Deadline(seconds)
    while True:
        try:
            if result := condition():
                return result
        except ignoring:
            pass
        if deadline.passed():
            more = f":\n{details()}" if details else ""
            raise TimeoutError(
                f"timed out after {deadline.elapsed():.1f} s ({seconds:g} s budget, load factor "
                f"{load_factor():.1f}) waiting for {what}{more}"
            )
        time.sleep(interval)  # the poll's pace inside a deadline, not a synchronisation


async def wait_until_async(
    condition: Callable[[], Awaitable[T]],
    seconds: float,
    what: str,
    *,
    interval: float = POLL,
) -> T:
    """:func:`wait_until` for an awaited condition, polling without blocking the event loop."""
    import anyio

    deadline = Deadline(seconds)
    while True:
        if result := await condition():
            return result
        if deadline.passed():
            raise TimeoutError(
                f"timed out after {deadline.elapsed():.1f} s ({seconds:g} s budget, load factor "
                f"{load_factor():.1f}) waiting for {what}"
            )
        await anyio.sleep(interval)


def ms(seconds: float) -> float:
    """A Playwright timeout (milliseconds) of ``seconds`` on a quiet machine, scaled by the load."""
    return scaled(seconds) * 1000
