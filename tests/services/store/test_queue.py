"""The queue's round trips: with AOF ``appendfsync always`` every write round trip waits for the
disk, so the hand-over to the workers and the workers' own bookkeeping keep them few."""

from __future__ import annotations

import os
import signal
from typing import Any

import fakeredis
import pytest
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

from services.store.queue import (
    DRAIN_JOB,
    PipelinedWorker,
    PromptWorker,
    enqueue_drain,
    lifecycle_queue,
    projection_queue,
)
from tests.support.waiting import Deadline, wait_until


class Trips:
    """Counts a client's round trips: commands sent alone, and pipelines executed."""

    def __init__(self, client: fakeredis.FakeRedis, monkeypatch: pytest.MonkeyPatch) -> None:
        self.alone: list[Any] = []
        self.pipelines = 0
        execute, pipeline = client.execute_command, client.pipeline

        def counted_command(*args: Any, **options: Any) -> Any:
            self.alone.append(args[0])
            return execute(*args, **options)

        def counted_pipeline(*args: Any, **options: Any) -> Any:
            pipe = pipeline(*args, **options)
            run = pipe.execute

            def counted_execute(*a: Any, **kw: Any) -> Any:
                self.pipelines += 1
                return run(*a, **kw)

            pipe.execute = counted_execute
            return pipe

        monkeypatch.setattr(client, "execute_command", counted_command)
        monkeypatch.setattr(client, "pipeline", counted_pipeline)


def test_a_drain_job_is_queued_in_one_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    client = fakeredis.FakeRedis()
    queue = projection_queue(client)
    enqueue_drain(queue)  # the first asks the server's version, once per connection
    trips = Trips(client, monkeypatch)
    enqueue_drain(queue, reason="more")
    assert (trips.alone, trips.pipelines) == ([], 1)
    jobs = [Job.fetch(job_id, connection=client, serializer=JSONSerializer) for job_id in queue.job_ids]
    assert [(job.func_name, job.meta) for job in jobs] == [(DRAIN_JOB, {}), (DRAIN_JOB, {"reason": "more"})]


def test_a_workers_heartbeat_is_one_round_trip_and_keeps_it_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    client = fakeredis.FakeRedis()
    worker = PipelinedWorker([projection_queue(client), lifecycle_queue(client)], connection=client)
    worker.register_birth()
    client.persist(worker.key)
    trips = Trips(client, monkeypatch)
    worker.heartbeat()
    assert (trips.alone, trips.pipelines) == ([], 1)
    assert client.hget(worker.key, "last_heartbeat") is not None
    assert 0 < client.ttl(worker.key) <= worker.worker_ttl + 60


class ListenerReadsFirst(PromptWorker):
    """A worker whose pub/sub listener reads UNSUBSCRIBE's reply before the worker goes on to stop
    it: the order a loaded machine's scheduler often picks."""

    def subscribe(self) -> None:
        super().subscribe()
        pubsub, unsubscribe = self.pubsub, self.pubsub.unsubscribe

        def unsubscribe_and_let_the_listener_read_the_reply(*args: Any) -> None:
            unsubscribe(*args)
            wait_until(lambda: not pubsub.subscribed, 10, "the listener to read the reply")

        pubsub.unsubscribe = unsubscribe_and_let_the_listener_read_the_reply


@pytest.mark.redis
def test_a_burst_worker_ends_without_waiting_for_its_pub_sub_listener(real_redis: Any) -> None:
    """RQ sends UNSUBSCRIBE, then stops the worker's pub/sub listener, which redis-py joins with no
    bound: a listener that read the reply first waits a minute for a new subscription, and so does
    the worker's shutdown or a burst's end. The worker here stops the listener first."""
    worker = ListenerReadsFirst(
        [projection_queue(real_redis)], connection=real_redis, serializer=JSONSerializer
    )
    deadline = Deadline(20)  # the defect is a minute's wait; an empty burst takes milliseconds
    worker.work(burst=True, logging_level="WARNING")
    assert not deadline.passed(), f"the burst waited {deadline.elapsed():.0f} s on its pub/sub listener"


class StoppedWhileStarting(PromptWorker):
    """A worker asked to stop (SIGINT, as a pool stops its workers) while it registers itself,
    before RQ installs its own signal handlers."""

    def register_birth(self) -> None:
        super().register_birth()
        os.kill(os.getpid(), signal.SIGINT)


@pytest.mark.redis
def test_a_worker_stopped_while_it_starts_ends_at_once_and_deregistered(real_redis: Any) -> None:
    queue = projection_queue(real_redis)
    worker = StoppedWhileStarting([queue], connection=real_redis, serializer=JSONSerializer)
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        deadline = Deadline(20)  # not burst: without the stop it would wait for jobs for ever
        worker.work(burst=False, logging_level="WARNING")
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
    assert not deadline.passed()
    assert worker._stop_requested
    assert real_redis.hget(worker.key, "death") is not None  # its death registered
    assert worker.key.encode() not in real_redis.smembers(WORKERS_BY_QUEUE_KEY % queue.name)
