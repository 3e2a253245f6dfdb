"""Jobs for tests of workers: run by a real worker process (found by their dotted path)."""

from __future__ import annotations

from rq import get_current_job

from tests.support.waiting import wait_until

RELEASE_KEY = "test:release"
HOLD_SECONDS = 300.0  # a bound against a test that never releases: the job fails, the worker goes on


def hold_until(key: str) -> None:
    """Hold the worker that took this job until ``key`` exists in the job's Redis."""
    connection = get_current_job().connection
    wait_until(lambda: connection.exists(key), HOLD_SECONDS, f"{key} to be set")
