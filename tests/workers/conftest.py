"""Fixtures of the worker tests on a real Redis: an emptied server (``sync``) and the lifecycle's
clock replaced by a ``FakeClock`` that only moves when a test advances it."""

from __future__ import annotations

import pytest
import redis

from workers import lifecycle


class FakeClock:
    def __init__(self, now_ms: int = 1_000_000) -> None:
        self.now_ms = now_ms

    def __call__(self) -> int:
        return self.now_ms

    def advance(self, seconds: float) -> None:
        self.now_ms += int(seconds * 1000)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(lifecycle, "clock", fake)
    return fake


@pytest.fixture
def sync(real_redis: redis.Redis) -> redis.Redis:
    return real_redis
