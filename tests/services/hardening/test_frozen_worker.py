"""A frozen worker pool (SIGSTOP) beside a real API (``tablestream serve``: embedded Redis, its
worker, uvicorn): the API stays ready and takes commands, and the series the alert rules read
(deploy/prometheus/alerts.yaml, ``TablestreamProjectionStalled``: hand-overs waiting, and how long ago
the projection consumer last read them) grow, then fall back once the pool runs again (issue 40:
every API process used to turn 503 after 30 s of lag; issue 38: no projection is an RQ job, so a
frozen pool queues none)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.services.hardening.real_stack import children_of, served
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.redis, pytest.mark.timeout(240)]

TOKEN = "frozen-worker-operator-token"
IDLE = "tablestream_handover_consumer_idle_seconds"
HANDED = "tablestream_handed_over_games"


def figure(client: httpx.Client, name: str, **labels: str) -> float:
    """One sample of ``/metrics`` (the API's scrape, with the figures it reads from Redis)."""
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    raise AssertionError(f"{name} {labels} is not in /metrics")


def frozen_pool(pool: int) -> list[int]:
    """Stop the worker pool's process, then its worker processes (it forks no more once stopped):
    the processes stopped."""
    os.kill(pool, signal.SIGSTOP)
    workers = [pid for pid, _ in children_of(pool)]
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    return [pool, *workers]


def test_a_frozen_worker_leaves_the_api_ready_and_taking_commands_while_the_consumer_s_idle_grows(
    tmp_path: Path,
) -> None:
    # readiness once compared the projection lag (503 after 30 s of it): now it reads Redis alone
    with served(
        tmp_path,
        admin_token=TOKEN,
        ready_check_seconds="0",
        create_rate="600/minute",
        max_waiting_tables_per_address="200",
        max_waiting_tables_per_network="200",
    ) as stack:
        client = httpx.Client(base_url=stack.base, timeout=10)
        pool = wait_until(stack.worker_pid, 30, "serve's worker pool")
        assert pool is not None
        for queue in ("projections", "lifecycle", "bots", "review"):
            wait_until(
                lambda: figure(client, "tablestream_workers", queue=queue) >= 1,  # noqa: B023
                30,
                f"a worker registered on the {queue} queue",
                interval=0.2,
            )
        # a live consumer reads every 0.5 s at most (the server counts idle in whole seconds)
        wait_until(lambda: figure(client, IDLE) <= 1, 30, "the projection consumer connected", interval=0.2)
        stopped = frozen_pool(pool)
        created = 0
        try:

            def ready() -> None:
                health = client.get("/healthz")
                assert (health.status_code, health.json()) == (200, {"status": "ok"}), health.text

            def create() -> None:
                nonlocal created
                answer = client.post("/games", json={"game": "skull", "players": 3})
                assert answer.status_code == 201, answer.text  # the API takes commands
                created += 1

            def handed_over() -> float:
                """Tables created (appends handed to the consumer) until the stream holds some."""
                ready()
                if (waiting := figure(client, HANDED)) > 0:
                    return waiting
                create()
                return 0.0

            wait_until(handed_over, 30, "hand-overs waiting in the stream", interval=0.5)
            # nothing projects them, and no projection job is queued either (issue 38)
            assert figure(client, "tablestream_queue_depth", queue="projections") == 0

            def idle_past(seconds: float) -> float:
                ready()
                idle = figure(client, IDLE)
                return idle if idle >= seconds else 0.0

            first = wait_until(lambda: idle_past(2), 30, "the consumer's idle to grow")
            later = wait_until(lambda: idle_past(first + 2), 30, f"its idle to grow past {first + 2:.0f} s")
            assert later != float("inf")  # frozen, not gone: its connection is still listed
            # the dirty set's oldest mark is past the old readiness bound, and readiness is still 200
            assert figure(client, "tablestream_oldest_unsettled_game_seconds") > 1
            ready()
            create()
            assert figure(client, HANDED) >= 1
        finally:
            for pid in reversed(stopped):
                os.kill(pid, signal.SIGCONT)
        assert 1 <= created <= 100 and later > first
        wait_until(
            lambda: figure(client, IDLE) <= 1 and figure(client, HANDED) == 0,
            60,
            "the consumer, running again, to read and take the hand-overs",
            interval=0.2,
        )
        ready_again = client.get("/healthz")
        assert ready_again.status_code == 200
        client.close()
