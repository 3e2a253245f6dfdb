"""The queue's round trips: with AOF ``appendfsync always`` every write round trip waits for the
disk, so the hand-over to the workers and the workers' own bookkeeping keep them few."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import fakeredis
import pytest
import redis as redis_py
from rq import Queue
from rq.job import Job
from rq.serializers import JSONSerializer
from rq.utils import utcformat
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

from services.store import rq_workers
from services.store.queue import (
    HANDOVER_JOB,
    QUEUES,
    enqueue_handovers,
    lifecycle_queue,
    projection_queue,
    queue_figures,
)
from services.store.rq_workers import WORKER_TTL, PipelinedWorker, PromptWorker
from tests.support.waiting import Deadline, scaled, wait_until


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


def test_a_projection_job_is_queued_in_one_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    client = fakeredis.FakeRedis()
    queue = projection_queue(client)
    enqueue_handovers(queue)  # the first asks the server's version, once per connection
    trips = Trips(client, monkeypatch)
    enqueue_handovers(queue, reason="more")
    assert (trips.alone, trips.pipelines) == ([], 1)
    jobs = [Job.fetch(job_id, connection=client, serializer=JSONSerializer) for job_id in queue.job_ids]
    assert [(job.func_name, job.meta) for job in jobs] == [
        (HANDOVER_JOB, {}),
        (HANDOVER_JOB, {"reason": "more"}),
    ]


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


def work_until_stopped(worker: PromptWorker) -> bool:
    """Run ``worker`` (not burst: without a stop it would wait for jobs for ever) with this process's
    signal handlers put back afterwards; whether it stopped within its deadline."""
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    try:
        deadline = Deadline(20)
        worker.work(burst=False, logging_level="WARNING")
    finally:
        signal.signal(signal.SIGINT, before[0])
        signal.signal(signal.SIGTERM, before[1])
    return not deadline.passed()


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
    assert work_until_stopped(worker)
    assert worker._stop_requested
    assert real_redis.hget(worker.key, "death") is not None  # its death registered
    assert worker.key.encode() not in real_redis.smembers(WORKERS_BY_QUEUE_KEY % queue.name)


@pytest.mark.redis
def test_a_worker_whose_process_noted_a_stop_before_it_existed_ends_at_once_and_deregistered(
    real_redis: Any,
) -> None:
    """``tablestream worker --workers 1`` notes a stop in its own handler until the worker installs
    RQ's (``workers.pool.run_simple_worker``): one that came in between is handed to the worker."""
    queue = projection_queue(real_redis)
    worker = PromptWorker([queue], connection=real_redis, serializer=JSONSerializer)
    worker.stop_asked = threading.Event()
    worker.stop_asked.set()
    assert work_until_stopped(worker)
    assert real_redis.hget(worker.key, "death") is not None
    assert worker.key.encode() not in real_redis.smembers(WORKERS_BY_QUEUE_KEY % queue.name)


@pytest.mark.redis
def test_a_worker_forked_with_the_stop_signals_blocked_takes_a_pending_stop_once_its_handler_is_in(
    real_redis: Any,
) -> None:
    """A pool forks its workers with SIGINT and SIGTERM blocked (``workers.pool.LayoutPool``): the
    stop that came meanwhile is pending, and the worker's bootstrap lets it in, to its own handler."""
    queue = projection_queue(real_redis)
    worker = PromptWorker([queue], connection=real_redis, serializer=JSONSerializer)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # pending, on this thread only
        assert work_until_stopped(worker)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    assert worker._stop_requested
    assert worker.key.encode() not in real_redis.smembers(WORKERS_BY_QUEUE_KEY % queue.name)


@pytest.mark.redis
def test_a_stopping_workers_pub_sub_is_closed_by_its_listener_or_after_it_never_under_it(
    real_redis: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker's stop waits a bounded time for its pub/sub listener, which may not have woken
    yet on a loaded machine: closed under it, the listener's read failed, and RQ logged "could not
    connect to Redis" with a traceback from a pool that was only stopping (seen in a ``serve``
    stopped while busy). Here the listener has no time at all to end first."""
    monkeypatch.setattr(rq_workers, "LISTENER_JOIN_SECONDS", 0.0)
    worker = PromptWorker([projection_queue(real_redis)], connection=real_redis, serializer=JSONSerializer)
    closes: list[bool] = []  # for each close: whether the listener could no longer be reading
    close = redis_py.client.PubSub.close

    def noted(pubsub: Any) -> None:
        listener = worker.pubsub_thread
        closes.append(threading.current_thread() is listener or not listener.is_alive())
        close(pubsub)

    monkeypatch.setattr(redis_py.client.PubSub, "close", noted)
    worker.work(burst=True, logging_level="WARNING")
    worker.pubsub_thread.join(scaled(20))  # it wakes on UNSUBSCRIBE's reply
    assert not worker.pubsub_thread.is_alive()
    assert closes == [True]
    assert worker.pubsub.connection is None


def _work_as_a_pool_worker(connection_kwargs: dict[str, Any], queue_name: str) -> None:
    """A forked child: a worker run as RQ's pool runs one (it asks for a scheduler)."""
    connection = redis_py.Redis(**connection_kwargs)
    queue = Queue(queue_name, connection=connection, serializer=JSONSerializer)
    PipelinedWorker([queue], connection=connection, serializer=JSONSerializer).work(
        burst=False, logging_level="WARNING", with_scheduler=True
    )


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


@pytest.mark.redis
def test_a_pool_worker_runs_no_scheduler_process_so_its_stop_never_waits_on_one(real_redis: Any) -> None:
    """RQ's pool asks each worker for a scheduler, a process forked with the worker's signal
    handlers: a stop sent to it before it installed its own was lost, and the worker waited on it
    for ever (CI: a pool stopped soon after it started did not end in 30 s). No job here is
    scheduled for later, so a worker starts none, and its stop ends it."""
    where = real_redis.connection_pool.connection_kwargs
    name = f"scheduler-test-{os.getpid()}"  # a queue of its own: no other test's scheduler holds its lock
    child = multiprocessing.get_context("fork").Process(
        target=_work_as_a_pool_worker, args=({"host": where["host"], "port": where["port"]}, name)
    )
    child.start()
    try:
        wait_until(lambda: real_redis.smembers(WORKERS_BY_QUEUE_KEY % name), 20, "the worker to register")
        wait_until(
            lambda: real_redis.hget(f"rq:worker:{_registered(real_redis, name)}", "state") == b"idle",
            20,
            "the worker to wait for jobs",
        )
        assert _children(child.pid) == [], "the worker forked a process beside it"
        os.kill(child.pid, signal.SIGINT)  # as the pool stops its workers
        wait_until(lambda: not child.is_alive(), 20, "the stopped worker's process to end")
    finally:
        if child.is_alive():
            for pid in _children(child.pid):
                os.kill(pid, signal.SIGKILL)
            child.kill()
            child.join()
    assert child.exitcode == 0
    assert not real_redis.smembers(WORKERS_BY_QUEUE_KEY % name)


def _registered(connection: Any, queue_name: str) -> str:
    (key,) = connection.smembers(WORKERS_BY_QUEUE_KEY % queue_name)
    return key.decode().removeprefix("rq:worker:")


def test_the_scrape_reads_each_queues_depth_its_oldest_jobs_wait_and_its_workers_until_they_lapse() -> None:
    client = fakeredis.FakeRedis()
    empty = queue_figures(client)
    assert empty.depth == dict.fromkeys(QUEUES, 0) and empty.workers == dict.fromkeys(QUEUES, 0)
    assert empty.oldest_job_seconds == dict.fromkeys(QUEUES, 0.0)
    queue = projection_queue(client)
    enqueue_handovers(queue)
    (oldest,) = queue.job_ids
    client.hset(Job.key_for(oldest), "enqueued_at", utcformat(datetime.now(UTC) - timedelta(seconds=90)))
    enqueue_handovers(queue, reason="more")  # a newer job behind it
    figures = queue_figures(client)
    assert figures.depth["projections"] == 2
    assert 90 <= figures.oldest_job_seconds["projections"] < 120  # the head's wait, not the newest's
    assert figures.oldest_job_seconds["lifecycle"] == 0
    client.delete(Job.key_for(oldest))  # a job whose hash is gone waits for nothing
    assert queue_figures(client).oldest_job_seconds["projections"] == 0

    worker = PipelinedWorker([queue], connection=client)
    worker.register_birth()  # type: ignore[no-untyped-call]
    assert worker.worker_ttl == WORKER_TTL
    assert 0 < client.ttl(worker.key) <= WORKER_TTL + 60  # a frozen worker lapses within 105 s
    assert queue_figures(client).workers["projections"] == 1
    client.delete(worker.key)  # its registration lapsed
    assert queue_figures(client).workers["projections"] == 0
