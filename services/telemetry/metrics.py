"""Prometheus metrics: what the service counts, and the ``/metrics`` text (docs/operations.md,
"Metrics and alerts").

Several processes report as one (``prometheus_client``'s multiprocess mode): every process writes
its counters, histograms and gauges to memory-mapped files in ``PROMETHEUS_MULTIPROC_DIR``, and a
scrape of any API process sums the files of all of them (the API processes of ``serve
--api-workers N`` and the workers ``serve`` starts). ``prepare_directory`` sets that up before the
first metric exists: ``tablestream serve`` and a worker that serves its own metrics (``--metrics-port``)
own a directory (a private one made for them, or the one the environment names, emptied at start);
a worker ``serve`` starts finds it in its environment. Without the variable (tests, a plain single
process) the metrics live in this process's memory.

Hooks are one call each on the hot path (a labelled child's ``inc`` or ``observe``). Every label
takes a bounded set of values: a game's kind (``skull``, ``six_nimmt``, ``skull_king``), an
outcome, a route's template (never a path with a game id), a queue's name, a status class.

What depends on Redis's state (queue depth, the age of each queue's oldest job, workers alive, tables
by status, the oldest unsettled game, the hand-overs waiting and how long ago a projection consumer
last read them) is read when scraped (``scrape_time_families``) and never written to the files.

Two lags are kept apart. A projection's lag runs from a command's append (its hand-over to the
workers) to its views written: ``tablestream_projection_lag_seconds`` observes it once a game is
projected. While projections wait on a consumer that does not read (frozen, stuck, gone), the
hand-overs stay in the stream (``tablestream_handed_over_games``) and the consumers' idle grows
(``tablestream_handover_consumer_idle_seconds``, ``+Inf`` with none connected), which the histogram
cannot show (it learns only from projections that end). A game also stays marked (the dirty set)
while a bot's move or a timer is on its way: ``tablestream_oldest_unsettled_game_seconds`` is how
long the longest-marked game has waited for all of that, which includes a bot thinking or a timer
running, so it is no projection lag.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
    multiprocess,
    start_http_server,
)
from prometheus_client import values as prometheus_values
from prometheus_client.core import GaugeMetricFamily, Metric

from domain.games import game_names, is_game

ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST
COMMAND_OUTCOMES = ("ok", "dup", "rejected", "conflict", "token_changed")
TAKEOVER_REASONS = ("left", "timeouts", "host")
LIMITS = ("create", "join", "command", "login", "register", "login_guess", "login_name", "live_streams")
VERIFY_CHECKS = ("chain", "reveal", "rules", "stream")
STREAM_KINDS = ("game", "lobby")
STATUS_CLASSES = ("2xx", "4xx", "5xx")  # the request series made at 0 for every route (``routes_known``)
JOBS = {  # the jobs of each queue (services.store.queue)
    "projections": ("project", "project_games", "project_handovers"),
    "lifecycle": ("fire_timer", "play_bot", "settle_lifecycle"),  # play_bot: a job an older process queued
    "bots": ("play_bot",),
    "review": ("build_review",),
}
LATENCY_BUCKETS = (0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
QUEUES = tuple(JOBS)


def _game(name: str) -> str:
    """The registry's name, as commands and tables carry it ("six-nimmt"); anything else is "other"."""
    return name if is_game(name) else "other"


def status_class(status: int) -> str:
    return f"{status // 100}xx" if 100 <= status < 600 else "other"


class Metrics:
    """Every metric a process writes (registered in ``registry``; in multiprocess mode the files
    are what counts, and the registry only keeps them apart from another instance's)."""

    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.commands = Counter(
            "tablestream_commands", "Player commands by game and outcome (ok, dup, rejected, conflict, "
            "token_changed)", ["game", "outcome"], registry=registry,
        )  # fmt: skip
        self.command_paths = Counter(
            "tablestream_command_paths", "Player commands by write path: fast (decided on the head this "
            "process held, one round trip), fallback (the held head was behind: loaded and decided "
            "again), load (no head held)", ["path"], registry=registry,
        )  # fmt: skip
        self.views_rendered = Counter(
            "tablestream_views_rendered", "Seat and spectator views the API rendered from the events because "
            "the projection had not yet written them (behind the seat's own last command, or not run yet)",
            registry=registry,
        )  # fmt: skip
        self.requests = Counter(
            "tablestream_http_requests", "HTTP requests answered, by route template, method and status class",
            ["route", "method", "status"], registry=registry,
        )  # fmt: skip
        self.latency = Histogram(
            "tablestream_http_request_duration_seconds", "Time to answer an HTTP request (a live stream: "
            "until its headers), by route template", ["route", "method"], buckets=LATENCY_BUCKETS,
            registry=registry,
        )  # fmt: skip
        self.request_children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        """The labelled children of ``requests`` and ``latency`` per route, method and status."""
        self.streams = Gauge(
            "tablestream_live_streams_open", "Live streams open now (game views and the lobby)", ["kind"],
            multiprocess_mode="livesum", registry=registry,
        )  # fmt: skip
        self.jobs = Counter(
            "tablestream_jobs", "RQ jobs run by the workers, by queue, kind of job (its function: "
            "project, play_bot, ...) and outcome (ok, failed). The label is 'kind', not 'job', which "
            "is Prometheus's own target label", ["queue", "kind", "outcome"], registry=registry,
        )  # fmt: skip
        self.job_lag = Histogram(
            "tablestream_job_lag_seconds", "From an RQ job's queueing to its end, by queue (a hand-over "
            "pass of the projections queue is not counted here: its games are, in "
            "tablestream_projection_lag_seconds)", ["queue"], buckets=LAG_BUCKETS, registry=registry,
        )  # fmt: skip
        self.projection_lag = Histogram(
            "tablestream_projection_lag_seconds", "A command's projection lag: from the hand-over of its "
            "append to the workers to its game's views written (no wait for a bot or a timer)",
            buckets=LAG_BUCKETS, registry=registry,
        )  # fmt: skip
        self.drained = Counter(
            "tablestream_drain_games",
            "Games taken from the hand-over by projection consumers",
            registry=registry,
        )
        self.lifecycle_pending = Counter(
            "tablestream_lifecycle_pending",
            "Projections that left a game marked for its lifecycle (a bot or a timer on its way)",
            registry=registry,
        )
        self.timeouts = Counter(
            "tablestream_timeouts", "Turns that ran out of time (played by default)", ["game"],
            registry=registry,
        )  # fmt: skip
        self.takeovers = Counter(
            "tablestream_takeovers", "Seats a bot took over, by game and reason", ["game", "reason"],
            registry=registry,
        )  # fmt: skip
        self.bot_moves = Counter(
            "tablestream_bot_moves", "Moves the server's bots played", ["game"], registry=registry
        )
        self.log_refusals = Counter(
            "tablestream_log_checkpoints_refused",
            "Checkpoints the public log did not sign: its tree does not extend the newest one it "
            "published (a restore from an older snapshot)",
            registry=registry,
        )
        self.refusals = Counter(
            "tablestream_rate_limit_refusals", "Requests refused by a rate limit (429), by limit "
            "(create, join, command, login, register, ...)", ["limit"], registry=registry,
        )  # fmt: skip
        self.round_trips = Counter(
            "tablestream_redis_round_trips", "Round trips to Redis of the event store, by process role",
            ["role"], registry=registry,
        )  # fmt: skip
        self.redis_errors = Counter(
            "tablestream_redis_errors", "Round trips to Redis that failed (connection, timeout, server "
            "error), by process role", ["role"], registry=registry,
        )  # fmt: skip
        self.ack_waits = Histogram(
            "tablestream_append_ack_wait_seconds", "Durable appends: the script and the replicas' acks "
            "(WAIT or WAITAOF) in one round trip", buckets=LATENCY_BUCKETS, registry=registry,
        )  # fmt: skip
        self.ack_failures = Counter(
            "tablestream_append_ack_failures", "Durable appends that fewer replicas acked than asked "
            "(503 not_replicated)", registry=registry,
        )  # fmt: skip
        self.verify_failures = Counter(
            "tablestream_verify_failures", "Integrity checks that failed on the server: a revealed seed "
            "against its commitment (audit), a stream that does not re-run", ["check"], registry=registry,
        )  # fmt: skip
        self.login_failures = Counter(
            "tablestream_login_failures", "Logins refused for a wrong name or password", registry=registry
        )
        self.lockouts = Counter(
            "tablestream_login_lockouts", "Login attempts refused by the guess limits (429 login_throttled)",
            registry=registry,
        )  # fmt: skip
        self._precreate()

    def _precreate(self) -> None:
        """The series of every bounded label set at 0 from the start, so that a rate over them is
        defined (and a dashboard shows 0, not "no data") before the first event."""
        for game in game_names():
            for outcome in COMMAND_OUTCOMES:
                self.commands.labels(game, outcome)
            self.timeouts.labels(game)
            self.bot_moves.labels(game)
            for reason in TAKEOVER_REASONS:
                self.takeovers.labels(game, reason)
        for limit in LIMITS:
            self.refusals.labels(limit)
        for check in VERIFY_CHECKS:
            self.verify_failures.labels(check)
        for kind in STREAM_KINDS:
            self.streams.labels(kind)
        self.trip = self.round_trips.labels(_role)  # resolved once: counted on every round trip
        self.trip_failed = self.redis_errors.labels(_role)
        for queue, jobs in JOBS.items():
            self.job_lag.labels(queue)
            for job in jobs:
                for outcome in ("ok", "failed"):
                    self.jobs.labels(queue, job, outcome)
        for path in ("fast", "fallback", "load"):
            self.command_paths.labels(path)
        for role in ("api", "worker"):
            self.round_trips.labels(role)
            self.redis_errors.labels(role)

    def routes_known(self, routes: Iterable[tuple[str, str]]) -> None:
        """The request series of every route template and method at 0 for each status class, so
        that a rate of 5xx answers is 0 (not "no data") before the first one."""
        for route, method in routes:
            for status in STATUS_CLASSES:
                self.requests.labels(route, method, status)


_metrics: Metrics | None = None
_role = "api"


def metrics() -> Metrics:
    """This process's metrics (made on first use, after ``prepare_directory``)."""
    global _metrics
    if _metrics is None:
        _metrics = Metrics()
    return _metrics


def multiprocess_directory() -> Path | None:
    path = os.environ.get(ENV)
    return Path(path) if path else None


def prepare_directory(owner: bool, role: str = "api") -> Path | None:
    """Before the first metric: choose how this process keeps them. ``owner`` (``serve``, a worker
    that serves its own metrics): use the directory the environment names, emptied (files of a
    previous run would count again), or make a private one (removed at exit) and name it in the
    environment for the processes this one starts. Not an owner: the environment's directory as it
    is, or this process's memory without one."""
    global _metrics, _role
    _role = role
    path = multiprocess_directory()
    if owner and path is None:
        path = Path(tempfile.mkdtemp(prefix="tablestream-metrics-"))
        os.environ[ENV] = str(path)
        atexit.register(shutil.rmtree, path, True)
    elif owner and path is not None:
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
    prometheus_values.ValueClass = prometheus_values.get_value_class()  # type: ignore[no-untyped-call]
    _metrics = None
    return path


def serve_worker_metrics(port: int) -> None:
    """A worker process's own ``/metrics`` (every process of its directory, and the CPU and memory of
    the pool's own process), on a thread."""
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_directory() is not None:
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_ThisProcess())
    ProcessCollector(registry=registry)
    start_http_server(port, registry=registry)


def process_exited(pid: int) -> None:
    """A process of the directory ended: its live gauges (streams open) stop counting."""
    if multiprocess_directory() is not None:
        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]


# -- the hooks ---------------------------------------------------------------------------------------


def command(game: str, outcome: str) -> None:
    metrics().commands.labels(_game(game), outcome).inc()


def command_path(path: str) -> None:
    metrics().command_paths.labels(path).inc()


def view_rendered() -> None:
    metrics().views_rendered.inc()


def request(route: str, method: str, status: int, seconds: float) -> None:
    m = metrics()
    key = (route, method, status)
    children = m.request_children.get(key)
    if children is None:  # bounded: route templates x methods x statuses
        children = m.request_children[key] = (
            m.requests.labels(route, method, status_class(status)),
            m.latency.labels(route, method),
        )
    children[0].inc()
    children[1].observe(seconds)


@contextlib.contextmanager
def stream_open(kind: str) -> Iterator[None]:
    gauge = metrics().streams.labels(kind)
    gauge.inc()
    try:
        yield
    finally:
        gauge.dec()


def job_done(queue: str, kind: str, ok: bool, lag_seconds: float | None) -> None:
    m = metrics()
    m.jobs.labels(queue, kind, "ok" if ok else "failed").inc()
    if lag_seconds is not None:
        m.job_lag.labels(queue).observe(max(0.0, lag_seconds))


def projection_lag(seconds: float, games: int = 1) -> None:
    """``games`` projected by a consumer, each at most ``seconds`` after its hand-over."""
    observe = metrics().projection_lag.observe
    for _ in range(games):
        observe(max(0.0, seconds))


def drained(games: int) -> None:
    metrics().drained.inc(games)


def lifecycle_pending() -> None:
    metrics().lifecycle_pending.inc()


def timeout(game: str) -> None:
    metrics().timeouts.labels(_game(game)).inc()


def takeover(game: str, reason: str) -> None:
    metrics().takeovers.labels(_game(game), reason if reason.isidentifier() else "other").inc()


def log_checkpoint_refused() -> None:
    metrics().log_refusals.inc()


def bot_move(game: str) -> None:
    metrics().bot_moves.labels(_game(game)).inc()


def refused(limit: str) -> None:
    metrics().refusals.labels(limit).inc()


def round_trip(failed: bool = False) -> None:
    m = metrics()
    m.trip.inc()
    if failed:
        m.trip_failed.inc()


def ack_wait(seconds: float, failed: bool) -> None:
    m = metrics()
    m.ack_waits.observe(seconds)
    if failed:
        m.ack_failures.inc()


def verify_failed(check: str) -> None:
    metrics().verify_failures.labels(check).inc()


def login_failed() -> None:
    metrics().login_failures.inc()


def locked_out() -> None:
    metrics().lockouts.inc()


# -- the text of a scrape ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """What a scrape reads from Redis (``services.api.metrics_route``)."""

    queue_depth: dict[str, int]
    workers: dict[str, int]
    tables: dict[str, int]
    oldest_unsettled_seconds: float
    handed_over: int
    oldest_job_seconds: dict[str, float]
    handover_consumer_idle_seconds: float | None = None  # None: no projection consumer connected


def scrape_time_families(figures: Figures) -> list[Metric]:
    depth = GaugeMetricFamily(
        "tablestream_queue_depth", "Jobs waiting in an RQ queue (read at scrape)", labels=["queue"]
    )
    for queue, count in sorted(figures.queue_depth.items()):
        depth.add_metric([queue], count)
    workers = GaugeMetricFamily(
        "tablestream_workers", "RQ workers registered and alive on a queue (read at scrape)", labels=["queue"]
    )
    for queue, count in sorted(figures.workers.items()):
        workers.add_metric([queue], count)
    tables = GaugeMetricFamily(
        "tablestream_tables", "Tables by status: waiting, running, finished, expired (from the indexes, "
        "read at scrape)", labels=["status"],
    )  # fmt: skip
    for status, count in sorted(figures.tables.items()):
        tables.add_metric([status], count)
    oldest_job = GaugeMetricFamily(
        "tablestream_queue_oldest_job_seconds", "How long the oldest job waiting in an RQ queue has "
        "waited (0: none waits; read at scrape). For projections: a command's projection lag so far",
        labels=["queue"],
    )  # fmt: skip
    for queue, seconds in sorted(figures.oldest_job_seconds.items()):
        oldest_job.add_metric([queue], seconds)
    unsettled = GaugeMetricFamily(
        "tablestream_oldest_unsettled_game_seconds",
        "How long the longest-marked game has waited for its projection and its lifecycle (a bot's move "
        "or a timer on its way), from the dirty set the sweeper reads (0: none; read at scrape)",
        value=figures.oldest_unsettled_seconds,
    )
    poked = GaugeMetricFamily(
        "tablestream_handed_over_games", "Hand-overs in the stream the projection consumers read",
        value=figures.handed_over,
    )  # fmt: skip
    idle = figures.handover_consumer_idle_seconds
    consumer = GaugeMetricFamily(
        "tablestream_handover_consumer_idle_seconds", "Seconds since the liveliest projection consumer "
        "last read the hand-over stream (CLIENT LIST idle of its named connection; a live one reads at "
        "least every 0.5 s; +Inf: none connected; read at scrape)",
        value=math.inf if idle is None else idle,
    )  # fmt: skip
    return [depth, oldest_job, workers, tables, unsettled, poked, consumer]


class _ThisProcess:
    def collect(self) -> Iterable[Metric]:
        return metrics().registry.collect()


class _Families:
    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = list(families)

    def collect(self) -> Iterable[Metric]:
        return self.families


def render(figures: Figures | None) -> bytes:
    """The text of ``/metrics``: every process's metrics (this one's alone without a directory), the
    figures read from Redis, and prometheus-client's ``process_*`` figures (CPU seconds, resident
    memory, open files) of the process that answered the scrape: the other processes of a
    multiprocess directory are not in them (``serve --api-workers N``: the one that answered)."""
    registry = CollectorRegistry(auto_describe=False)
    if multiprocess_directory() is not None:
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_Families(metrics().registry.collect()))
    ProcessCollector(registry=registry)
    if figures is not None:
        registry.register(_Families(scrape_time_families(figures)))
    return generate_latest(registry)
