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
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

T = TypeVar("T")

POLL = 0.02
"""Seconds between the first two polls: short beside any budget, long beside a poll's own cost."""
POLL_GROWTH = 1.5
MAX_POLL = 0.2
"""The longest pause between two polls, reached after about a second of waiting. A poll of a
server is a request it serves: fifty a second from each of four workers' waits took cores the other
workers' tests needed (the suite keeps both cores busy), for an answer a fifth of a second sooner."""
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


def pauses(first: float = POLL) -> Iterator[float]:
    """The pauses between a wait's polls: ``first``, then half as long again each time, up to
    :data:`MAX_POLL` (or ``first``, when that is longer)."""
    pause, longest = first, max(first, MAX_POLL)
    while True:
        yield pause
        pause = min(longest, pause * POLL_GROWTH)


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
    Exceptions of the ``ignoring`` types count as "not yet" (a server still starting). The polls
    begin ``interval`` apart and slow down as the wait goes on (:func:`pauses`)."""
    deadline = Deadline(seconds)
    pace = pauses(interval)
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
        time.sleep(next(pace))  # the poll's pace inside a deadline, not a synchronisation


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
    pace = pauses(interval)
    while True:
        if result := await condition():
            return result
        if deadline.passed():
            raise TimeoutError(
                f"timed out after {deadline.elapsed():.1f} s ({seconds:g} s budget, load factor "
                f"{load_factor():.1f}) waiting for {what}"
            )
        await anyio.sleep(next(pace))


def ms(seconds: float) -> float:
    """A Playwright timeout (milliseconds) of ``seconds`` on a quiet machine, scaled by the load."""
    return scaled(seconds) * 1000
