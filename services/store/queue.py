"""The RQ queues: JSON serializer, jobs that carry ids only.

The queues, the job ids that deduplicate them and the leases that tell a lost job from a running
one; the RQ workers that take the jobs are ``services.store.rq_workers``.

The projections are not RQ jobs on the command path: an append hands its game over to the projection
consumers (``services.store.indexes``: a memory-only stream a consumer thread of the worker process
blocks on, ``workers.handover``), only when it set the game's pending flag, and queues nothing. The
projection queue holds the sweeper's repairs (``BATCH_JOB``: the lagging games it found, whatever
their flags say) and, for tools and tests, ``HANDOVER_JOB``: one pass of what a consumer does, in a
burst worker (``services.store.rq_workers.run_queued_projections``).

Jobs are named by their dotted paths, so nothing here (nor anything that enqueues) imports the
workers that run them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, NamedTuple

import anyio.to_thread
import redis
from rq import Queue, Retry
from rq.exceptions import DuplicateJobError, InvalidJobOperation, NoSuchJobError
from rq.executions import ExecutionRegistry
from rq.job import Job, JobStatus
from rq.serializers import JSONSerializer
from rq.utils import now, utcparse
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

from services.store.event_store import EventStore
from services.store.keys import PREFIX, check_game_id
from services.store.operations import Handover

QUEUE_NAME = "projections"
PROJECTION_JOB = "workers.projector.project"
HANDOVER_JOB = "workers.handover.project_handovers"
BATCH_JOB = "workers.projector.project_games"
LIFECYCLE_QUEUE = "lifecycle"
TIMER_JOB = "workers.lifecycle.fire_timer"
SETTLE_JOB = "workers.lifecycle.settle_lifecycle"
BOT_QUEUE = "bots"
BOT_JOB = "workers.lifecycle.play_bot"
REVIEW_QUEUE = "review"
REVIEW_JOB = "workers.review.build_review"
QUEUES = (QUEUE_NAME, LIFECYCLE_QUEUE, BOT_QUEUE, REVIEW_QUEUE)  # a worker takes them in this order
JOBS = frozenset({PROJECTION_JOB, HANDOVER_JOB, BATCH_JOB, TIMER_JOB, BOT_JOB, SETTLE_JOB, REVIEW_JOB})
LEASED_JOBS = frozenset({TIMER_JOB, BOT_JOB, SETTLE_JOB})
LEASE_SECONDS = 30
"""A lifecycle job (a timer's firing, a bot's move, a settle) runs for at most this long, and its
worker holds it for this long from its start (its heartbeat's time to live): a worker killed with
one started leaves its table waiting this long, then the sweeper queues the job again. A bot's move
takes at most ``bots.search.CPU_SECONDS`` of CPU; one still running at the deadline is stopped by
RQ and queued again, and a duplicate run would be harmless (its command's id is deduplicated)."""
EXECUTION_GRACE = 60
"""RQ's ``ExecutionRegistry.add`` stores an execution's deadline 60 s after its heartbeat's time to
live: the lease ends that much before the stored deadline."""
TRACE_LINKS = "tablestream:trace:handovers"  # trace contexts of hand-overs (tracing on only)
TRACE_LINKS_KEPT = 200  # at most this many for the next consumer batch (the newest)
TRACE_LINKS_TTL = 3600  # seconds: a list no consumer took (no worker running) does not stay


def projection_queue(connection: redis.Redis) -> Queue:
    return Queue(QUEUE_NAME, connection=connection, serializer=JSONSerializer)


def _enqueue(queue: Queue, func: str, args: tuple[Any, ...], meta: dict[str, Any]) -> None:
    """A projection job: retried on failure; no result kept; a failure kept a week for its traceback.
    Queued in one transaction (on its own RQ registers the queue in one and the job in another)."""
    with queue.connection.pipeline() as pipe:
        queue.enqueue_call(
            func,
            args=args,
            result_ttl=0,
            failure_ttl=7 * 24 * 3600,
            retry=Retry(max=3),
            meta=meta or None,
            pipeline=pipe,
        )
        pipe.execute()


def enqueue_projection(queue: Queue, game_id: str, **meta: Any) -> None:
    """Project one game, whatever its pending flag says."""
    _enqueue(queue, PROJECTION_JOB, (game_id,), meta)


def enqueue_projections(queue: Queue, game_ids: list[str], **meta: Any) -> None:
    """Project these games in one job, whatever their pending flags say (the sweeper's repair)."""
    _enqueue(queue, BATCH_JOB, (game_ids,), meta)


def enqueue_handovers(queue: Queue, **meta: Any) -> None:
    """One pass of a projection consumer over the hand-overs waiting (tools and tests: a worker's
    standing consumer does this itself)."""
    _enqueue(queue, HANDOVER_JOB, (), meta)


def remember_handover(connection: redis.Redis, headers: dict[str, str]) -> None:
    """Push a hand-over's trace context (text headers: ``services.table.tracing.carrier()``) on
    ``TRACE_LINKS`` for the next consumer batch to link to; one round trip; nothing without a context.
    Only with tracing on (``services.table.tracing.TracedAppendNotifier``)."""
    if not headers:
        return
    value = ";".join(f"{key}={value}" for key, value in sorted(headers.items()))
    with connection.pipeline(transaction=True) as pipe:
        pipe.rpush(TRACE_LINKS, value)
        pipe.ltrim(TRACE_LINKS, -TRACE_LINKS_KEPT, -1)
        pipe.expire(TRACE_LINKS, TRACE_LINKS_TTL)
        pipe.execute()


def take_handovers(connection: redis.Redis) -> list[dict[str, str]]:
    """Take (read and clear, in one transaction) the contexts ``remember_handover`` left."""
    with connection.pipeline(transaction=True) as pipe:
        pipe.lrange(TRACE_LINKS, 0, -1)
        pipe.delete(TRACE_LINKS)
        values, _ = pipe.execute()
    taken = []
    for raw in values:
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        taken.append(dict(part.split("=", 1) for part in text.split(";") if "=" in part))
    return taken


class AppendNotifier:
    """After an append (which woke the game's live streams itself): unless the append script did it
    (the indexes live on the store's server), mark the game dirty again, index the timer the append
    armed and, when the append set the game's pending flag, hand the game over to the projection
    consumers, in one round trip (``operations.publish_appended``). No job is queued: the consumers
    block on the hand-over stream (``workers.handover``). ``queue``: the projection queue, whose
    connection holds the trace links (``services.table.tracing.TracedAppendNotifier``)."""

    def __init__(self, store: EventStore, queue: Queue) -> None:
        self.store = store
        self.queue = queue

    async def __call__(self, game_id: str, handover: Handover) -> None:
        if not handover.handed:
            await self.store.publish_appended(game_id, handover.poke, handover.deadline)


def lifecycle_queue(connection: redis.Redis) -> Queue:
    """Timer and settle jobs: each runs one command through the write side, in milliseconds. (Bot
    moves queued here by a process older than ``BOT_QUEUE`` still run: the same job, on a worker that
    takes this queue.)"""
    return Queue(LIFECYCLE_QUEUE, connection=connection, serializer=JSONSerializer)


def bot_queue(connection: redis.Redis) -> Queue:
    """Bot moves (``BOT_JOB``): a strong one holds its worker for up to its CPU cap
    (``bots.search``), so they have a queue of their own, after projections and timers in
    every worker, and a worker pool may keep a worker off it (``workers.pool``)."""
    return Queue(BOT_QUEUE, connection=connection, serializer=JSONSerializer)


def _enqueue_once(
    queue: Queue, job_id: str, func: str, args: tuple[Any, ...], *, at_front: bool = False
) -> bool:
    """A job with a deterministic id, unless one with that id is queued or running; ``True`` if this
    call queued it. RQ's ``unique`` enqueue checks and saves the job in one Lua script, so
    concurrent callers (timer loops of several worker processes, a sweeper) queue it once. A job of
    that id that failed (kept a day for its traceback) is queued again: a lost bot's move must not
    wait for the failure to expire. Even a duplicate run would be harmless: the command it sends has
    a deterministic id and an expected version, so it is appended at most once. ``at_front``: at the
    head of the queue (and so when queued again after a failure), before the jobs waiting there."""
    try:
        queue.enqueue_call(
            func,
            args=args,
            job_id=job_id,
            timeout=LEASE_SECONDS if func in LEASED_JOBS else None,
            result_ttl=0,
            failure_ttl=24 * 3600,
            unique=True,
            at_front=at_front,
        )
    except DuplicateJobError:
        return _requeue_stopped(queue, job_id, at_front)
    return True


def _requeue_stopped(queue: Queue, job_id: str, at_front: bool = False) -> bool:
    """Queue the job ``job_id`` again if it failed, or if a worker's death lost it (``_lost``: a
    lease with a deadline, not a status, says a job is under way); ``True`` if this call did (the
    failed-jobs registry's ZREM, or the ``REQUEUE_LOST`` script, decides between concurrent
    callers)."""
    try:
        job = Job.fetch(job_id, connection=queue.connection, serializer=queue.serializer)
    except NoSuchJobError:  # it finished (result_ttl=0) since: nothing to do
        return False
    status = job.get_status(refresh=False)
    if status in (JobStatus.QUEUED, JobStatus.STARTED):
        keys = (
            job.key,
            queue.key,
            queue.intermediate_queue_key,
            ExecutionRegistry.key_template.format(job_id),
            queue.started_job_registry.key,
        )
        flag = "1" if at_front else "0"
        return bool(queue.connection.eval(REQUEUE_LOST, len(keys), *keys, job_id, _lease_end(), flag))
    if status != JobStatus.FAILED:
        return False
    try:
        job.requeue(at_front=at_front)
    except InvalidJobOperation:  # another caller requeued it first
        return False
    return True


def enqueue_timer(queue: Queue, game_id: str, version: int) -> bool:
    """Fire the game's timer armed at ``version``; at the head of the lifecycle queue (before a bot
    move an older process queued there)."""
    return _enqueue_once(queue, f"timer-{game_id}-{version}", TIMER_JOB, (game_id, version), at_front=True)


def bot_job_id(game_id: str, version: int, seat: int) -> str:
    return f"bot-{game_id}-{version}-{seat}"


def enqueue_bot(queue: Queue, game_id: str, version: int, seat: int) -> bool:
    """Let the bot of ``seat`` act on the game as it is at ``version`` (on ``bot_queue``). A job of
    that id already known keeps its own queue: a failed one is queued again where it was."""
    return _enqueue_once(queue, bot_job_id(game_id, version, seat), BOT_JOB, (game_id, version, seat))


HELD = frozenset({JobStatus.QUEUED.value, JobStatus.STARTED.value})
WAITING = frozenset({JobStatus.DEFERRED.value, JobStatus.SCHEDULED.value})


def jobs_under_way(connection: redis.Redis, job_ids: list[str]) -> list[bool]:
    """Whether each job is waiting or running, whatever its queue: deferred or scheduled, queued
    and in its queue's list, or started with a live execution (its worker's heartbeat keeps a
    deadline in the job's execution registry). Not under way: finished, failed, gone, or lost to a
    worker's death (``_lost``). Two round trips."""
    with connection.pipeline(transaction=False) as pipe:
        for job_id in job_ids:
            pipe.hmget(Job.key_for(job_id), "status", "origin")
        found = pipe.execute()
    jobs = [
        (job_id, (status or b"").decode(), (origin or b"").decode())
        for job_id, (status, origin) in zip(job_ids, found, strict=True)
    ]
    lost = _lost(connection, [job for job in jobs if job[1] in HELD])
    return [status in WAITING or (status in HELD and job_id not in lost) for job_id, status, _ in jobs]


def _lease_end() -> float:
    """An execution whose stored deadline is past this still holds its lease (``EXECUTION_GRACE``)."""
    return now().timestamp() + EXECUTION_GRACE


def _lost(connection: redis.Redis, jobs: Sequence[tuple[str, str, str]]) -> set[str]:
    """Of ``(job id, status, queue)``, the jobs a worker's death lost: queued but in no queue's list
    (taken by a worker killed before it started them: RQ's intermediate list holds them), or started
    with no execution whose deadline is still ahead (its worker stopped beating). One round trip."""
    if not jobs:
        return set()
    lease_end = _lease_end()
    with connection.pipeline(transaction=False) as pipe:
        for job_id, status, origin in jobs:
            if status == JobStatus.QUEUED.value:
                pipe.lpos(Queue.redis_queue_namespace_prefix + origin, job_id)
            else:
                pipe.zcount(ExecutionRegistry.key_template.format(job_id), lease_end, "+inf")
        replies = pipe.execute()
    return {
        job_id
        for (job_id, status, _), reply in zip(jobs, replies, strict=True)
        if (reply is None if status == JobStatus.QUEUED.value else not reply)
    }


# Queue a lost job again (``_requeue_stopped``), atomically, so that of several callers one does:
# a queued job in no queue's list leaves RQ's intermediate list for its queue; a started one with no
# live execution leaves the started registry (RQ's clean-up would later call it failed) and is
# queued again. KEYS: job hash, queue list, intermediate list, executions, started registry.
# ARGV: job id, now plus EXECUTION_GRACE (seconds), "1" for the head of the queue. Replies 1 when
# it queued the job.
REQUEUE_LOST = """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' then
  if redis.call('LPOS', KEYS[2], ARGV[1]) then return 0 end
elseif status == 'started' then
  if redis.call('ZCOUNT', KEYS[4], ARGV[2], '+inf') > 0 then return 0 end
  local prefix = ARGV[1] .. ':'
  for _, member in ipairs(redis.call('ZRANGE', KEYS[5], 0, -1)) do
    if string.sub(member, 1, #prefix) == prefix then redis.call('ZREM', KEYS[5], member) end
  end
  redis.call('DEL', KEYS[4])
  redis.call('HSET', KEYS[1], 'status', 'queued')
else
  return 0
end
redis.call('LREM', KEYS[3], 0, ARGV[1])
if ARGV[3] == '1' then redis.call('LPUSH', KEYS[2], ARGV[1]) else redis.call('RPUSH', KEYS[2], ARGV[1]) end
return 1
"""


def enqueue_settle(queue: Queue, game_id: str, version: int) -> bool:
    """Arm the timer and queue the bots of the game's batch at ``version`` if nobody did; at the
    head of the lifecycle queue, like a timer."""
    return _enqueue_once(queue, f"settle-{game_id}-{version}", SETTLE_JOB, (game_id, version), at_front=True)


def review_queue(connection: redis.Redis) -> Queue:
    """Post-game reviews (``workers.review``): seconds of bot search each, so every worker takes
    them last, after projections, lifecycle jobs and bot moves."""
    return Queue(REVIEW_QUEUE, connection=connection, serializer=JSONSerializer)


def review_key(game_id: str, seat: int) -> str:
    """A finished game's review of a seat (``workers.review``), in the game's hash slot."""
    return f"{PREFIX}:{{{check_game_id(game_id)}}}:review:{seat}"


def enqueue_review(queue: Queue, game_id: str, seat: int) -> bool:
    """Review ``seat``'s moves of the finished game, unless that job is queued or running."""
    return _enqueue_once(queue, f"review-{game_id}-{seat}", REVIEW_JOB, (game_id, seat))


class BotJobs:
    """Queues bot moves from async code (``services.table.lifecycle.Lifecycle``), on ``bot_queue``."""

    def __init__(self, queue: Queue) -> None:
        self.queue = queue

    async def __call__(self, game_id: str, version: int, seats: list[int]) -> None:
        for seat in seats:
            await anyio.to_thread.run_sync(enqueue_bot, self.queue, game_id, version, seat)


class QueueFigures(NamedTuple):
    """What a metrics scrape reads from the queues, each by queue name."""

    depth: dict[str, int]
    """Jobs waiting."""
    workers: dict[str, int]
    """Workers registered on the queue whose registration has not lapsed."""
    oldest_job_seconds: dict[str, float]
    """How long the job at the queue's head (the next one taken, queued first) has waited; 0 when
    none waits."""


def queue_figures(connection: redis.Redis) -> QueueFigures:
    """For a metrics scrape: the jobs waiting in each queue, the age of the oldest, and the workers
    on it that are alive (registered, and their hash not expired: a killed or frozen worker's lapses
    ``WORKER_TTL`` plus a minute after its last heartbeat, before RQ's maintenance drops it from the
    registry). Two round trips."""
    names = QUEUES
    with connection.pipeline(transaction=False) as pipe:
        for name in names:
            key = Queue(name, connection=connection, serializer=JSONSerializer).key
            pipe.llen(key)
            pipe.lindex(key, 0)
            pipe.smembers(WORKERS_BY_QUEUE_KEY % name)
        replies = pipe.execute()
    depth = {name: int(replies[3 * i]) for i, name in enumerate(names)}
    heads = {name: replies[3 * i + 1] for i, name in enumerate(names)}
    members = {name: sorted(replies[3 * i + 2]) for i, name in enumerate(names)}
    with connection.pipeline(transaction=False) as pipe:
        for name in names:
            if heads[name] is not None:
                pipe.hget(Job.key_for(_text(heads[name])), "enqueued_at")
            for key in members[name]:
                pipe.exists(key)
        answers = iter(pipe.execute())
    oldest: dict[str, float] = {}
    workers: dict[str, int] = {}
    current = datetime.now(UTC)
    for name in names:
        oldest[name] = 0.0
        if heads[name] is not None:
            enqueued = next(answers)
            if enqueued:  # a job whose hash is gone (deleted, expired) waits for nothing
                since = utcparse(_text(enqueued)).replace(tzinfo=UTC)
                oldest[name] = max(0.0, (current - since).total_seconds())
        workers[name] = sum(int(next(answers)) for _ in members[name])
    return QueueFigures(depth, workers, oldest)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
