"""The queue's round trips: with AOF ``appendfsync always`` every write round trip waits for the
disk, so the hand-over to the workers and the workers' own bookkeeping keep them few."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
from rq.job import Job
from rq.serializers import JSONSerializer

from services.store.queue import DRAIN_JOB, PipelinedWorker, enqueue_drain, lifecycle_queue, projection_queue


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
